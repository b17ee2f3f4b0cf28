/* own_threads.c — a program that waits, for runtime_thread_signals.sh to
 * look at cprof's threads beside it: writes "ready" and its pid, then
 * waits until its stdin reaches its end, and writes "done". */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    printf("done\n");
    return 0;
}
