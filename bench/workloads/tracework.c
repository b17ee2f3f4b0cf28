/* tracework.c — workloads for bench/trace_overhead.sh:
 *   lock   THREADS threads share one mutex: ITERS rounds of lock, a little
 *          work on a shared table, unlock, a little work of their own, so
 *          that many lock calls find the mutex held and block (what the
 *          trace records).
 *   handoff  THREADS threads pass a token around ITERS / 20 times through
 *          a mutex and a condition variable: every pass blocks and wakes
 *          (the trace's worst case: every lock and wait is an event).
 *   alloc  THREADS threads each ITERS rounds of malloc/free of mixed sizes,
 *          keeping a window of 64 blocks live.
 *   sys    THREADS threads each ITERS / 20 rounds of write(2) and read(2)
 *          of one byte through a pipe of their own: system calls that do
 *          not block (each one GoSysCall with its stack in a trace).
 * Prints a checksum, so that the work cannot be optimized away.
 * Usage: tracework lock|handoff|alloc|sys [ITERS [THREADS]]  (default 2000000, 4) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long token;
static int nthreads = 4;
static uint64_t table[256];
static long iters = 2000000;

static uint64_t mix(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

static void *lock_run(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, mine = 0;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&mu);
        for (int k = 0; k < 64; k++) {
            x = mix(x);
            table[x & 255] += x;
        }
        pthread_mutex_unlock(&mu);
        for (int k = 0; k < 8; k++)
            mine += x = mix(x);
    }
    return (void *)(uintptr_t)mine;
}

static void *handoff_run(void *arg)
{
    long me = (long)(uintptr_t)arg - 1, passes = 0;
    long rounds = iters / 20;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (token % nthreads != me && token < rounds)
            pthread_cond_wait(&cv, &mu);
        if (token >= rounds)
            break;
        token++;
        passes++;
        pthread_cond_broadcast(&cv);
    }
    pthread_mutex_unlock(&mu);
    return (void *)(uintptr_t)passes;
}

static void *alloc_run(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, sum = 0;
    void *live[64] = {0};
    for (long i = 0; i < iters; i++) {
        x = mix(x);
        size_t n = 16 + (x & 1023);
        int slot = (int)(x >> 20) & 63;
        free(live[slot]);
        char *p = malloc(n);
        p[0] = (char)i;
        sum += (uint64_t)p[0] + n;
        live[slot] = p;
    }
    for (int i = 0; i < 64; i++)
        free(live[i]);
    return (void *)(uintptr_t)sum;
}

static void *sys_run(void *arg)
{
    int p[2];
    uint64_t sum = 0;
    if (pipe(p))
        return NULL;
    for (long i = 0; i < iters / 20; i++) {
        char c = (char)(i + (uintptr_t)arg), d = 0;
        if (write(p[1], &c, 1) != 1 || read(p[0], &d, 1) != 1)
            break;
        sum += (uint8_t)d;
    }
    close(p[0]);
    close(p[1]);
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    void *(*run)(void *) = NULL;
    if (argc > 1)
        run = !strcmp(argv[1], "lock") ? lock_run : !strcmp(argv[1], "handoff") ? handoff_run
            : !strcmp(argv[1], "alloc") ? alloc_run : !strcmp(argv[1], "sys") ? sys_run : NULL;
    if (!run) {
        fprintf(stderr, "usage: tracework lock|handoff|alloc|sys [ITERS [THREADS]]\n");
        return 2;
    }
    if (argc > 2)
        iters = atol(argv[2]);
    nthreads = argc > 3 ? atoi(argv[3]) : 4;
    pthread_t th[64];
    if (nthreads < 1 || nthreads > 64)
        return 2;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, run, (void *)(uintptr_t)(i + 1));
    uint64_t sum = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        pthread_join(th[i], &r);
        sum += (uintptr_t)r;
    }
    if (run == lock_run)
        for (int i = 0; i < 256; i++)
            sum += table[i];
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
