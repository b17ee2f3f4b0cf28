/* noalloc.c — a program that never calls malloc: cprof must still write its
 * (empty) profile at exit, and, built with -DLINKED, through the API as its
 * very first action (argv[1] is the path). */
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#include <stdio.h>
#endif

int main(int argc, char **argv)
{
#ifdef LINKED
    if (argc > 1) {
        int rc = cprof_heap_profile_write(argv[1]);
        if (rc != 0) {
            fprintf(stderr, "cprof_heap_profile_write: %d\n", rc);
            return 1;
        }
    }
#else
    (void)argc;
    (void)argv;
#endif
    return write(1, "ok\n", 3) != 3;
}
