// A sampled block freed behind cprof's back (glibc's __libc_free, as an
// unpatched pointer under `cprof attach` would): cprof's live map keeps
// it, though glibc gave its pages back (a block this large is mmapped).
// The leak scan at exit must not read the unmapped block.
// With "nosig", every real-time signal has a handler first and a second
// thread waits: cprof cannot stop it, so it must not scan (and report no
// leak). With "nosig1", the same with no second thread: nothing to stop,
// so the scan runs and finds the block (its memory is gone: unreachable).
// With "unmapper", a thread that blocks every signal (so it runs through
// the scan) maps, fills and unmaps memory without pause while the scan at
// exit reads it: the scan must skip what goes away, not fault.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void __libc_free(void *p);

static void on_signal(int sig)
{
    (void)sig;
}

static void *waiter(void *arg)
{
    char c;
    while (read(*(int *)arg, &c, 1) != 0) /* until the process exits */
        ;
    return NULL;
}

static void *unmapper(void *arg)
{
    (void)arg;
    for (;;) {
        size_t len = 4 << 20;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            continue;
        memset(m, 1, len);
        munmap(m, len);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "unmapper") == 0) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_t t;
        if (pthread_create(&t, NULL, unmapper, NULL) != 0)
            return 1;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        nanosleep(&(struct timespec){0, 50000000}, NULL);
        return 0;
    }
    if (argc > 1 && strncmp(argv[1], "nosig", 5) == 0)
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
            signal(s, on_signal);
    static int never[2];
    pthread_t w;
    if (argc > 1 && strcmp(argv[1], "nosig") == 0 &&
        (pipe(never) < 0 || pthread_create(&w, NULL, waiter, &never[0]) != 0))
        return 1;
    char *big = malloc(8 << 20);
    if (!big)
        return 1;
    memset(big, 1, 8 << 20);
    __libc_free(big);
    puts("freed");
    return 0;
}
