// A sampled block freed behind cprof's back (glibc's __libc_free, as an
// unpatched pointer under `cprof attach` would): cprof's live map keeps
// it, though glibc gave its pages back (a block this large is mmapped).
// The leak scan at exit must not read the unmapped block.
// With "nosig", every real-time signal has a handler first: cprof cannot
// stop the threads, so it must not scan (and report no leak).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void __libc_free(void *p);

static void on_signal(int sig)
{
    (void)sig;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "nosig") == 0)
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
            signal(s, on_signal);
    char *big = malloc(8 << 20);
    if (!big)
        return 1;
    memset(big, 1, 8 << 20);
    __libc_free(big);
    puts("freed");
    return 0;
}
