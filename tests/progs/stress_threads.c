/* stress_threads.c — thread create/join storms: argv[1] threads (default
 * 4000), 8 alive at a time, each allocating 20 objects in thread_alloc()
 * and freeing all but one, which main frees once the thread is gone (a
 * cross-thread free; live objects stay bounded, so the profiler's tables
 * have no reason to grow). One thread of each batch is detached instead
 * of joined. When cprof_stats can be found (preloaded or linked)
 * it prints profiler_bytes after the first 10% of the threads and at the
 * end,
 *   MEM <profiler_bytes after 10%> <profiler_bytes at end> <stack_buckets at end>
 * and always the truth:
 *   TRUTH <function> <alloc_objects> <alloc_bytes> <inuse_objects> <inuse_bytes> */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BATCH 8
#define PER_THREAD 20

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

typedef struct {
    uint64_t mallocs, frees, total_alloc_bytes, live_bytes, live_objects;
    int64_t rate;
    uint64_t sampled_allocs, sampled_frees, dropped_samples, stack_buckets, profiler_bytes,
        profiler_limit;
} stats_t;

static void **kept;
static int detached_running;

NOINLINE void thread_alloc(int id)
{
    void *p[PER_THREAD];
    for (int i = 0; i < PER_THREAD; i++)
        p[i] = E(malloc(100 + (size_t)i * 10));
    for (int i = 1; i < PER_THREAD; i++)
        free(p[i]);
    kept[id] = p[0];
}

static void *thread_main(void *arg)
{
    thread_alloc((int)(intptr_t)arg);
    return NULL;
}

static void *detached_main(void *arg)
{
    thread_alloc((int)(intptr_t)arg);
    __atomic_sub_fetch(&detached_running, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4000;
    n -= n % BATCH;
    int (*stats)(stats_t *) = (int (*)(stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    kept = calloc((size_t)n, sizeof(*kept));
    stats_t early = {0}, late = {0};
    pthread_attr_t det;
    pthread_attr_init(&det);
    pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
    for (int base = 0; base < n; base += BATCH) {
        pthread_t th[BATCH];
        for (int i = 0; i < BATCH; i++) {
            int id = base + i;
            int rc;
            if (i == BATCH - 1) {
                __atomic_add_fetch(&detached_running, 1, __ATOMIC_RELAXED);
                rc = pthread_create(&th[i], &det, detached_main, (void *)(intptr_t)id);
            } else {
                rc = pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)id);
            }
            if (rc) {
                fprintf(stderr, "pthread_create: %d\n", rc);
                return 1;
            }
        }
        for (int i = 0; i < BATCH - 1; i++)
            pthread_join(th[i], NULL);
        while (__atomic_load_n(&detached_running, __ATOMIC_ACQUIRE))
            usleep(50);
        for (int i = 0; i < BATCH; i++)
            free(kept[base + i]);
        if (base + BATCH == n / 10 - (n / 10) % BATCH && stats)
            stats(&early);
    }
    if (stats)
        stats(&late);
    free(kept);
    long bytes = 0;
    for (int i = 0; i < PER_THREAD; i++)
        bytes += 100 + i * 10;
    printf("TRUTH thread_alloc %ld %ld 0 0\n", (long)n * PER_THREAD, (long)n * bytes);
    if (stats)
        printf("MEM %llu %llu %llu\n", (unsigned long long)early.profiler_bytes,
               (unsigned long long)late.profiler_bytes, (unsigned long long)late.stack_buckets);
    return 0;
}
