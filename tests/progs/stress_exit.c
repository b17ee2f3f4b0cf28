/* stress_exit.c — main calls exit() while 4 other threads are still
 * allocating, reallocating and freeing in tight loops (and being sampled,
 * so unwinding and table inserts are in flight while the profile is
 * written and libc shuts down). argv[1]: milliseconds before exit
 * (default 100), and at least MIN_ROUNDS rounds. Must exit with status 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

/* A round allocates ~16.6 KB (8 blocks of 1600 bytes on average, a
 * realloc to ~3500, a calloc of 300), so 2000 rounds are ~63 times the
 * default rate: the odds that a default-rate profile has no sample, which
 * the test checks it has, are e^-63. Counted, not timed: on a loaded
 * machine the workers may get little of main's sleep. */
#define MIN_ROUNDS 2000

static volatile long spins[4];

__attribute__((noinline)) static void churn(unsigned i)
{
    void *p[8];
    for (int k = 0; k < 8; k++)
        p[k] = E(malloc(8 + ((i * 13 + (unsigned)k) % 200) * 16));
    p[1] = E(realloc(p[1], 3000 + i % 1000));
    p[2] = E(calloc(3, 100));
    for (int k = 0; k < 8; k++)
        free(p[k]);
}

static void *worker(void *arg)
{
    volatile long *n = arg;
    for (unsigned i = 0;; i++) {
        churn(i);
        (*n)++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 100;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)&spins[i]))
            return 2;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    struct timespec tick = {0, 1000000};
    for (;;) { /* every worker got going, and together made MIN_ROUNDS */
        long rounds = 0;
        int idle = 0;
        for (int i = 0; i < 4; i++) {
            rounds += spins[i];
            idle += spins[i] == 0;
        }
        if (!idle && rounds >= MIN_ROUNDS)
            break;
        nanosleep(&tick, NULL);
    }
    printf("exiting\n");
    exit(0);
}
