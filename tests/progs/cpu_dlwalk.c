/* cpu_dlwalk.c — CPU samples taken while the loader's lock is held.
 *
 * The main thread computes inside a dl_iterate_phdr callback, holding the
 * loader's lock (as a C++ exception's unwinder, or cprof's own heap
 * unwinder, does), while another thread computes outside it. Both compute
 * in a long straight-line function, so that nearly every SIGPROF lands at
 * a PC never seen before: the unwinder in the handler must look the PC's
 * unwind rules up, through dl_iterate_phdr. A handler that takes a lock of
 * its own across that lookup (libunwind's global cache) deadlocks: the
 * other thread's handler holds it and waits for the loader's lock, which
 * the main thread holds while its own handler waits for that lock.
 *
 *   cpu_dlwalk ROUNDS MS
 *
 * ROUNDS callbacks of MS ms each; prints "ok" and exits 0. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int stop;
static long ms;

#define S1 x = x * 33 + 7;
#define S4 S1 S1 S1 S1
#define S16 S4 S4 S4 S4
#define S64 S16 S16 S16 S16
#define S256 S64 S64 S64 S64
#define S1K S256 S256 S256 S256
#define S4K S1K S1K S1K S1K

/* About 4096 * 4 instructions, each a PC of its own. */
__attribute__((noinline)) static unsigned wide_code(unsigned seed)
{
    volatile unsigned x = seed;
    S4K
    return x;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *outside(void *arg)
{
    (void)arg;
    unsigned v = 1;
    while (!stop)
        v = wide_code(v);
    return (void *)(uintptr_t)v;
}

/* Computes for ms, the loader's lock held. */
static int inside(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    unsigned *v = arg;
    double end = now_ms() + ms;
    while (now_ms() < end)
        *v = wide_code(*v);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) <= 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s ROUNDS MS\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]);
    ms = atol(argv[2]);
    pthread_t t;
    if (pthread_create(&t, NULL, outside, NULL) != 0)
        return 1;
    unsigned v = 2;
    for (int i = 0; i < rounds; i++)
        dl_iterate_phdr(inside, &v);
    stop = 1;
    pthread_join(t, NULL);
    printf("ok\n");
    return 0;
}
