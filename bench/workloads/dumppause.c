/* dumppause.c — for bench/dump_pause.sh: how long a dump holds up a
 * program that allocates. Builds LIVE_MIB MiB of live heap (blocks of 1 to
 * 8 KiB, touched), creates DIR/ready, then THREADS threads each allocate
 * and free small blocks in a loop (a ring of 1024 kept live) until
 * DIR/stop exists, timing every iteration. Prints per run "iterations
 * max_gap_us p999_gap_us worst_end": the longest gap between two
 * iterations of any thread, the 99.9th percentile (log2 buckets of 1 us:
 * the bucket's upper edge), and when the longest gap ended (unix seconds,
 * to tell whether a dump was being written then).
 *   dumppause DIR LIVE_MIB THREADS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 1024
#define BUCKETS 40

static const char *dir;
static volatile int stop;
static uint64_t hist[BUCKETS]; /* under lock, at the end */
static uint64_t iters, worst_ns;
static double worst_end; /* CLOCK_REALTIME, seconds */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static int exists(const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *ring[RING] = {0};
    uint64_t h[BUCKETS] = {0}, n = 0, worst = 0, prev = now();
    double worst_at = 0;
    while (!stop) {
        for (int k = 0; k < 64; k++) {
            size_t i = (size_t)rand_r(&seed) % RING;
            free(ring[i]);
            ring[i] = malloc(16 + (size_t)rand_r(&seed) % 2048);
            if (!ring[i])
                exit(5);
            *(volatile char *)ring[i] = 1;
        }
        uint64_t t = now(), gap = t - prev;
        prev = t;
        if (gap > worst) {
            struct timespec rt;
            clock_gettime(CLOCK_REALTIME, &rt);
            worst = gap;
            worst_at = (double)rt.tv_sec + rt.tv_nsec / 1e9;
        }
        int b = 0;
        for (uint64_t us = gap / 1000; us && b < BUCKETS - 1; us >>= 1)
            b++;
        h[b]++;
        n++;
    }
    for (size_t i = 0; i < RING; i++)
        free(ring[i]);
    pthread_mutex_lock(&lock);
    for (int b = 0; b < BUCKETS; b++)
        hist[b] += h[b];
    iters += n;
    if (worst > worst_ns) {
        worst_ns = worst;
        worst_end = worst_at;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    dir = argv[1];
    size_t live = (size_t)atol(argv[2]) << 20, held = 0, n = 0, cap = 1 << 16;
    int threads = atoi(argv[3]);
    void **blocks = malloc(cap * sizeof(*blocks));
    unsigned seed = 1;
    while (blocks && held < live) {
        if (n == cap && !(blocks = realloc(blocks, (cap *= 2) * sizeof(*blocks))))
            break;
        size_t sz = 1024 + (size_t)rand_r(&seed) % (7 * 1024);
        if (!(blocks[n] = malloc(sz)))
            return 5;
        memset(blocks[n++], 1, sz);
        held += sz;
    }
    if (!blocks)
        return 5;
    char p[4096];
    snprintf(p, sizeof(p), "%s/ready", dir);
    FILE *f = fopen(p, "w");
    if (!f || fclose(f))
        return 3;
    pthread_t th[64];
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
            return 4;
    struct timespec nap = {0, 10000000};
    while (!exists("stop"))
        nanosleep(&nap, NULL);
    stop = 1;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    uint64_t seen = 0;
    int b = 0;
    for (; b < BUCKETS; b++)
        if ((seen += hist[b]) * 1000 >= iters * 999)
            break;
    printf("%llu %.0f %llu %.6f\n", (unsigned long long)iters, worst_ns / 1e3,
           (unsigned long long)1 << b, worst_end);
    /* the live heap stays live to the end: the dumps had it to write */
    return blocks[0] == NULL;
}
