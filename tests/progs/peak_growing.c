/* peak_growing.c — threads growing the heap at once, for the peak profile
 * at CPROF_RATE=1 (tests/e2e/peak_growing.sh).
 *
 * NT threads each allocate R blocks from grab() (one stack, one bucket at
 * rate 1), meeting at a barrier every few blocks so that they allocate at
 * the same time and each sets new highs while the other allocates. Then,
 * with both parked, main allocates one more block: the highest point, set
 * by a thread holding almost none of the heap, so only a new-high test
 * that sums every live thread's counters finds it (peak.c;
 * tests/e2e/heap_threads_peak.sh has the thread holding the heap set it).
 * Parking both first keeps the result exact: peak.h lets an allocation
 * racing with a new high land on either side of it. Then every block is
 * freed:
 *   PEAK grab inuse_objects inuse_bytes
 *   TRUTH grab alloc_objects alloc_bytes inuse_objects inuse_bytes   (at exit) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { NT = 2, R = 3000, EVERY = 4 };

static void *blocks[NT][R];
static pthread_barrier_t step, parked;

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
    pthread_barrier_wait(&parked); /* all in: main's turn */
    pthread_barrier_wait(&parked); /* main's block is in */
    return NULL;
}

int main(void)
{
    pthread_t ids[NT];
    pthread_barrier_init(&step, NULL, NT);
    pthread_barrier_init(&parked, NULL, NT + 1);
    for (int k = 0; k < NT; k++)
        if (pthread_create(&ids[k], NULL, worker, blocks[k]) != 0)
            return 1;
    pthread_barrier_wait(&parked);
    void *last = grab(size_of(0));
    pthread_barrier_wait(&parked);
    for (int k = 0; k < NT; k++)
        pthread_join(ids[k], NULL);
    uint64_t bytes = size_of(0);
    for (int i = 0; i < R; i++)
        bytes += NT * size_of(i);
    for (int k = 0; k < NT; k++)
        for (int i = 0; i < R; i++)
            free(blocks[k][i]);
    free(last);
    printf("PEAK grab %d %llu\n", NT * R + 1, (unsigned long long)bytes);
    printf("TRUTH grab %d %llu 0 0\n", NT * R + 1, (unsigned long long)bytes);
    return 0;
}
