/* mallocpair.c — the cost of one malloc/free pair, for bench/malloc_pair.sh.
 *
 *   mallocpair PATTERN SIZE THREADS PAIRS
 *
 * Each of THREADS threads makes PAIRS malloc/free pairs of SIZE bytes
 * (writing one byte of each block, so that neither the compiler nor the
 * allocator can skip it) in one of three orders:
 *   lifo    each block freed right after it is allocated (the allocator's
 *           fastest case: the same block again and again)
 *   fifo    a queue of 1024 blocks: each new block replaces the oldest
 *   random  a pool of 16384 blocks: each new block replaces one chosen by a
 *           fixed-seed xorshift, so frees land all over the heap
 * and prints "ns_cpu ns_wall": CPU time per pair (the threads' CPU time
 * over their loops alone, without filling and emptying the pools: the
 * figure to trust on a shared machine) and wall time per pair of the
 * whole run. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LIFO, FIFO, RANDOM };

static int pattern;
static size_t size;
static long pairs;

typedef struct {
    double cpu_ns;
    pthread_t tid;
} worker_t;

static double now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *work(void *arg)
{
    worker_t *w = arg;
    size_t pool = pattern == FIFO ? 1024 : pattern == RANDOM ? 16384 : 1;
    char **blocks = calloc(pool, sizeof(*blocks));
    if (!blocks)
        abort();
    for (size_t i = 0; i < pool; i++)
        if (!(blocks[i] = malloc(size)))
            abort();
    uint64_t x = 88172645463325252ull ^ (uintptr_t)w;
    size_t head = 0;
    double t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < pairs; i++) {
        size_t k;
        if (pattern == RANDOM) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            k = x & (pool - 1);
        } else {
            k = head;
            head = head + 1 == pool ? 0 : head + 1;
        }
        free(blocks[k]);
        char *p = malloc(size);
        if (!p)
            abort();
        *(volatile char *)p = (char)i;
        blocks[k] = p;
    }
    w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    for (size_t i = 0; i < pool; i++)
        free(blocks[i]);
    free(blocks);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mallocpair lifo|fifo|random SIZE THREADS PAIRS\n");
        return 2;
    }
    pattern = !strcmp(argv[1], "lifo") ? LIFO : !strcmp(argv[1], "fifo") ? FIFO : RANDOM;
    size = strtoul(argv[2], NULL, 10);
    int threads = atoi(argv[3]);
    pairs = atol(argv[4]);
    if (threads < 1 || threads > 64 || pairs < 1 || size < 1) {
        fprintf(stderr, "mallocpair: bad arguments\n");
        return 2;
    }
    worker_t w[64];
    double t0 = now_ns(CLOCK_MONOTONIC);
    if (threads == 1) {
        work(&w[0]);
    } else {
        for (int i = 0; i < threads; i++)
            if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0)
                abort();
        for (int i = 0; i < threads; i++)
            pthread_join(w[i].tid, NULL);
    }
    double wall = now_ns(CLOCK_MONOTONIC) - t0, cpu = 0;
    for (int i = 0; i < threads; i++)
        cpu += w[i].cpu_ns;
    printf("%.2f %.2f\n", cpu / ((double)pairs * threads), wall / ((double)pairs * threads));
    return 0;
}
