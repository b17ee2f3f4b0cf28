/* peak_growing.c — threads growing the heap at once, for the peak profile
 * at CPROF_RATE=1 (tests/e2e/peak_growing.sh).
 *
 * NT threads each allocate R blocks from grab() (one stack, one bucket at
 * rate 1), meeting at a barrier every few blocks so that they allocate at
 * the same time; then every block is freed. The heap is highest when the
 * last block is allocated, a high that either thread may set while the
 * other is still allocating (peak.c's new-high test sums every thread's
 * counters; tests/e2e/heap_threads_peak.sh has one thread alone set it):
 *   PEAK grab inuse_objects inuse_bytes
 *   TRUTH grab alloc_objects alloc_bytes inuse_objects inuse_bytes   (at exit) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { NT = 2, R = 3000, EVERY = 4 };

static void *blocks[NT][R];
static pthread_barrier_t step;

static size_t size_of(int i)
{
    return 24 + 8 * (size_t)(i % 16);
}

__attribute__((noinline)) void *grab(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    *(volatile char *)p = 1;
    return p;
}

static void *worker(void *arg)
{
    void **b = arg;
    for (int i = 0; i < R; i++) {
        if (i % EVERY == 0)
            pthread_barrier_wait(&step);
        b[i] = grab(size_of(i));
    }
    return NULL;
}

int main(void)
{
    pthread_t ids[NT];
    pthread_barrier_init(&step, NULL, NT);
    for (int k = 0; k < NT; k++)
        if (pthread_create(&ids[k], NULL, worker, blocks[k]) != 0)
            return 1;
    for (int k = 0; k < NT; k++)
        pthread_join(ids[k], NULL);
    uint64_t bytes = 0;
    for (int i = 0; i < R; i++)
        bytes += size_of(i);
    for (int k = 0; k < NT; k++)
        for (int i = 0; i < R; i++)
            free(blocks[k][i]);
    printf("PEAK grab %d %llu\n", NT * R, (unsigned long long)(NT * bytes));
    printf("TRUTH grab %d %llu 0 0\n", NT * R, (unsigned long long)(NT * bytes));
    return 0;
}
