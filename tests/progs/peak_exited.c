/* peak_exited.c — the peak at CPROF_RATE=1 when one thread is left
 * counting (tests/e2e/peak_exited.sh). A thread allocates HELD blocks
 * from held() and exits; main then allocates RUN blocks from grow() in a
 * row, each a new high (cprof opens the epoch once, peak.h), reads
 * cprof_stats (found with dlsym: the program runs preloaded) at that
 * highest point, frees the thread's blocks (the first change after the
 * high: it must save held()'s values) and allocates fewer from after(),
 * so the heap never comes back up. The peak's bytes come from the counters
 * of the exited thread, published at its exit, and main's own; they must
 * equal cprof_stats' sum over every block. Prints:
 *   LIVE bytes                 cprof_stats' live bytes at the highest point
 *   PEAK fn inuse_objects inuse_bytes */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { HELD = 200, RUN = 150, AFTER = 50, SIZE = 1000 };

typedef struct {
    uint64_t mallocs, frees, total_alloc_bytes, live_bytes, live_objects;
    int64_t rate;
    uint64_t rest[6];
} stats_t;

static void *held_blocks[HELD], *run_blocks[RUN], *after_blocks[AFTER];

static void *must(void *p)
{
    if (!p)
        abort();
    *(volatile char *)p = 1; /* used: the allocation stays */
    return p;
}

__attribute__((noinline)) void *held(void)
{
    return must(malloc(SIZE));
}

__attribute__((noinline)) void *grow(void)
{
    return must(malloc(SIZE));
}

__attribute__((noinline)) void *after(void)
{
    return must(malloc(SIZE));
}

static void *thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < HELD; i++)
        held_blocks[i] = held();
    return NULL;
}

int main(void)
{
    int (*stats)(stats_t *) = (int (*)(stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    if (!stats) {
        puts("cprof_stats not found");
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, thread, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    for (int i = 0; i < RUN; i++)
        run_blocks[i] = grow();
    stats_t s;
    if (stats(&s) != 0)
        return 1;
    for (int i = 0; i < HELD; i++)
        free(held_blocks[i]);
    for (int i = 0; i < AFTER; i++)
        after_blocks[i] = after();
    printf("LIVE %llu\n", (unsigned long long)s.live_bytes);
    printf("PEAK held %d %d\nPEAK grow %d %d\nPEAK after 0 0\n", HELD, HELD * SIZE, RUN, RUN * SIZE);
    for (int i = 0; i < RUN; i++)
        free(run_blocks[i]);
    for (int i = 0; i < AFTER; i++)
        free(after_blocks[i]);
    return 0;
}
