/* attach_slowlib.c — a library whose constructor takes 20 s (attach_busy.c
 * dlslow): it writes $BUSY_DIR/inctor, then sleeps, holding the loader's
 * lock, so an injected dlopen waits past cprof's 10 s deadline. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void slow(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/inctor", getenv("BUSY_DIR"));
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    sleep(20);
}
