/* sigalloc.c — a program that allocates in signal handlers: SIGALRM and
 * SIGPROF, each at 5 kHz (setitimer), malloc and free blocks of their own
 * while the main loop mallocs, reallocs and frees. Unwise, but
 * glibc runs it; under cprof a handler that interrupts a hook holding a
 * lock must not wait for it (heap.h).
 *
 *   sigalloc [MIN_HANDLER_CALLS]   (default 1000 per signal; SIGPROF
 *   comes at most once a scheduler tick whatever the interval asks)
 *
 * Runs until each handler ran that often (or 30 s of wall time passed) and
 * prints what is the same in every run: the checksum of the main loop's
 * first 20 rounds of 100000 operations (it runs at least those). On
 * stderr: the handler counts and, under cprof, its counters. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cprof.h"

#define RING 64
#define HANDLER_SIZE 32

static volatile sig_atomic_t calls[2];
static void *ring[2][RING];

/* Each call frees one of its blocks and mallocs another of the same small
 * size. The main loop's blocks are larger than glibc's tcache holds and the
 * ring starts full, so glibc serves the handler from its per-thread cache
 * alone and never from the arena the main loop may be in the middle of
 * (and the handlers do not nest): glibc itself runs this cleanly. */
static void handler(int sig)
{
    int k = sig == SIGPROF;
    unsigned n = (unsigned)calls[k];
    void **slot = &ring[k][n % RING];
    free(*slot);
    *slot = malloc(HANDLER_SIZE);
    if (*slot)
        memset(*slot, k, HANDLER_SIZE);
    calls[k] = (sig_atomic_t)(n + 1);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    long want = argc > 1 ? atol(argv[1]) : 1000;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < RING; i++)
            ring[k][i] = malloc(HANDLER_SIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    /* One handler at a time: nested, they would race in glibc's cache. */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGALRM);
    sigaddset(&sa.sa_mask, SIGPROF);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    setitimer(ITIMER_PROF, &it, NULL);

    static void *slots[1024];
    uint64_t sum = 0, first = 0;
    long rounds = 0;
    time_t start = time(NULL);
    /* Whole rounds of 100000 operations, so the checksum is fixed. */
    while (rounds < 20 || ((calls[0] < want || calls[1] < want) && time(NULL) - start < 30)) {
        for (int i = 0; i < 100000; i++) {
            uint64_t r = next();
            size_t k = r % 1024, size = 1100 + (r >> 20) % 2000;
            if (r & (1 << 10)) {
                void *q = realloc(slots[k], size);
                if (q)
                    slots[k] = q;
            } else {
                free(slots[k]);
                slots[k] = malloc(size);
            }
            if (slots[k])
                ((unsigned char *)slots[k])[0] = (unsigned char)r;
            sum += size;
        }
        if (++rounds == 20)
            first = sum;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    setitimer(ITIMER_PROF, &off, NULL);
    fprintf(stderr, "rounds %ld, SIGALRM handler %d, SIGPROF handler %d\n", rounds, (int)calls[0],
            (int)calls[1]);
    int (*stats)(cprof_stats_t *) = (int (*)(cprof_stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    cprof_stats_t st;
    if (stats && stats(&st) == 0)
        fprintf(stderr, "cprof: mallocs %llu, sampled %llu, dropped %llu\n",
                (unsigned long long)st.mallocs, (unsigned long long)st.sampled_allocs,
                (unsigned long long)st.dropped_samples);
    printf("handlers ran: %s\n", calls[0] > 0 && calls[1] > 0 ? "yes" : "no");
    /* The checksum of the first 20 rounds: the same in every run. */
    printf("checksum %llu\n", (unsigned long long)first);
    return 0;
}
