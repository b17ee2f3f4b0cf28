/* http_stacks.c — the workload of bench/http_latency.sh: a process with
 * many distinct sampled stacks, and a thread that times its own mallocs.
 *
 *   http_stacks NSTACKS PAUSE_LOG
 *
 * Start-up makes NSTACKS distinct stacks (run it at CPROF_RATE=1): for
 * each i, a chain of 17 calls, each through one of two functions chosen by
 * a bit of i, ends in a 64-byte allocation that is kept. Then a timing
 * thread allocates and frees 32 bytes in a loop (a 20 us nap between
 * rounds), timing each malloc+free with CLOCK_MONOTONIC, and appends to
 * PAUSE_LOG every 100 ms one line:
 *     UNIX_MS MAX_NS ROUNDS BLOCKED_NS
 * (the window's end in CLOCK_REALTIME milliseconds, the longest malloc+free
 * in it, the rounds timed, and the longest one during which the thread
 * gave up the CPU itself: waited on a lock or the kernel, rather than
 * being preempted); PAUSE_LOG "none" runs no timing thread.
 * "ready" goes to stdout once the stacks are
 * made; the process then runs until killed. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define LEVELS 17

static void **kept;
static void step(int level, unsigned bits, size_t slot);

__attribute__((noinline)) static void via_a(int level, unsigned bits, size_t slot)
{
    step(level, bits, slot);
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep the frame */
}

__attribute__((noinline)) static void via_b(int level, unsigned bits, size_t slot)
{
    step(level, bits, slot);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void step(int level, unsigned bits, size_t slot)
{
    if (level == 0) {
        kept[slot] = malloc(64);
        return;
    }
    if (bits & 1)
        via_a(level - 1, bits >> 1, slot);
    else
        via_b(level - 1, bits >> 1, slot);
    __asm__ volatile("" ::: "memory");
}

static int64_t ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long voluntary_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

static void *timer_main(void *arg)
{
    FILE *log = arg;
    int64_t window_end = ns(CLOCK_MONOTONIC) + 100000000, max = 0, blocked = 0, rounds = 0;
    struct timespec nap = {0, 20000};
    for (;;) {
        long sw0 = voluntary_switches();
        int64_t t0 = ns(CLOCK_MONOTONIC);
        void *p = malloc(32);
        __asm__ volatile("" : : "g"(p) : "memory");
        free(p);
        int64_t t1 = ns(CLOCK_MONOTONIC);
        /* A voluntary switch inside malloc+free means it waited (a lock, a
         * page fault on a busy mmap lock); an involuntary one, that the
         * machine had other work: both count in max, only the first in
         * blocked. */
        if (voluntary_switches() != sw0 && t1 - t0 > blocked)
            blocked = t1 - t0;
        if (t1 - t0 > max)
            max = t1 - t0;
        rounds++;
        if (t1 >= window_end) {
            fprintf(log, "%lld %lld %lld %lld\n", (long long)(ns(CLOCK_REALTIME) / 1000000),
                    (long long)max, (long long)rounds, (long long)blocked);
            fflush(log);
            max = blocked = rounds = 0;
            window_end = t1 + 100000000;
        }
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s NSTACKS PAUSE_LOG\n", argv[0]);
        return 2;
    }
    size_t n = strtoul(argv[1], NULL, 10);
    if (n == 0 || n > (1u << LEVELS)) {
        fprintf(stderr, "http_stacks: NSTACKS from 1 to %u\n", 1u << LEVELS);
        return 2;
    }
    kept = calloc(n, sizeof(*kept));
    for (size_t i = 0; i < n; i++)
        step(LEVELS, (unsigned)i, i);
    if (strcmp(argv[2], "none") != 0) {
        FILE *log = fopen(argv[2], "w");
        pthread_t th;
        if (!log || pthread_create(&th, NULL, timer_main, log) != 0)
            return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
