/* stress_xthread.c — cross-thread malloc/free for a few seconds: 4
 * producers allocate objects of known sizes in produce_object() and hand
 * them through mutex-protected queues to 4 consumers, which grow every 16th
 * one with realloc (consume_grow) and free them all. Nothing is left
 * allocated. At the end it prints the truth,
 *   TRUTH <function> <alloc_objects> <alloc_bytes> <inuse_objects> <inuse_bytes>
 * and, when cprof_stats can be found (linked or preloaded), the change of
 * its counters over the workload:
 *   STATS <mallocs> <frees> <live_objects> <sampled_allocs> <sampled_frees> <dropped>
 *   DONE <allocations made> <frees made>
 * (realloc counts as one allocation and one free.)
 * Argument: seconds (default 3). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define NPROD 4
#define NCONS 4
#define QSIZE 1024

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

/* cprof_stats_t's layout (include/cprof.h), found at run time. */
typedef struct {
    uint64_t mallocs, frees, total_alloc_bytes, live_bytes, live_objects;
    int64_t rate;
    uint64_t sampled_allocs, sampled_frees, dropped_samples, stack_buckets, profiler_bytes,
        profiler_limit;
} stats_t;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t nonempty, nonfull;
    void *items[QSIZE];
    int head, n;
} queue_t;

static queue_t queues[NCONS];
static volatile int stop;
static int producers_left = NPROD;
static pthread_mutex_t left_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    long objects, bytes;
} tally_t;

static tally_t prod_tally[NPROD], grow_tally[NCONS];
static long freed[NCONS];

static void push(queue_t *q, void *p)
{
    pthread_mutex_lock(&q->lock);
    while (q->n == QSIZE)
        pthread_cond_wait(&q->nonfull, &q->lock);
    q->items[(q->head + q->n++) % QSIZE] = p;
    pthread_cond_signal(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

/* NULL once the queue is empty and every producer is done. */
static void *pop(queue_t *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->n == 0) {
        if (__atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0) {
            pthread_mutex_unlock(&q->lock);
            return NULL;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&q->nonempty, &q->lock, &ts);
    }
    void *p = q->items[q->head];
    q->head = (q->head + 1) % QSIZE;
    q->n--;
    pthread_cond_signal(&q->nonfull);
    pthread_mutex_unlock(&q->lock);
    return p;
}

NOINLINE void *produce_object(size_t size)
{
    char *p = E(malloc(size));
    p[0] = (char)size;
    return p;
}

NOINLINE void *consume_grow(void *p, size_t size)
{
    return E(realloc(p, size));
}

static void *producer(void *arg)
{
    int id = (int)(intptr_t)arg;
    tally_t *t = &prod_tally[id];
    for (unsigned i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
        size_t size = 16 + ((i * 7 + (unsigned)id) % 64) * 8;
        void *p = produce_object(size);
        t->objects++;
        t->bytes += (long)size;
        push(&queues[(i + (unsigned)id) % NCONS], p);
    }
    pthread_mutex_lock(&left_lock);
    __atomic_sub_fetch(&producers_left, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&left_lock);
    for (int c = 0; c < NCONS; c++) { /* wake sleeping consumers */
        pthread_mutex_lock(&queues[c].lock);
        pthread_cond_broadcast(&queues[c].nonempty);
        pthread_mutex_unlock(&queues[c].lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    int id = (int)(intptr_t)arg;
    void *p;
    for (unsigned i = 0; (p = pop(&queues[id])); i++) {
        if (i % 16 == 0) {
            size_t size = 1000 + (i % 5) * 100;
            p = consume_grow(p, size);
            grow_tally[id].objects++;
            grow_tally[id].bytes += (long)size;
        }
        free(p);
        freed[id]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    int (*stats)(stats_t *) = (int (*)(stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    for (int c = 0; c < NCONS; c++) {
        pthread_mutex_init(&queues[c].lock, NULL);
        pthread_cond_init(&queues[c].nonempty, NULL);
        pthread_cond_init(&queues[c].nonfull, NULL);
    }
    pthread_t th[NPROD + NCONS];
    stats_t before = {0}, after = {0};
    if (stats)
        stats(&before);
    for (int i = 0; i < NCONS; i++)
        pthread_create(&th[NPROD + i], NULL, consumer, (void *)(intptr_t)i);
    for (int i = 0; i < NPROD; i++)
        pthread_create(&th[i], NULL, producer, (void *)(intptr_t)i);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < NPROD + NCONS; i++)
        pthread_join(th[i], NULL);
    if (stats)
        stats(&after);

    tally_t prod = {0, 0}, grow = {0, 0};
    long nfreed = 0;
    for (int i = 0; i < NPROD; i++) {
        prod.objects += prod_tally[i].objects;
        prod.bytes += prod_tally[i].bytes;
    }
    for (int i = 0; i < NCONS; i++) {
        grow.objects += grow_tally[i].objects;
        grow.bytes += grow_tally[i].bytes;
        nfreed += freed[i];
    }
    if (nfreed != prod.objects) {
        fprintf(stderr, "lost objects: %ld made, %ld freed\n", prod.objects, nfreed);
        return 1;
    }
    /* Every grown object was freed; its original block was freed by the
     * realloc: produce_object's in-use is 0 either way. */
    printf("TRUTH produce_object %ld %ld 0 0\n", prod.objects, prod.bytes);
    printf("TRUTH consume_grow %ld %ld 0 0\n", grow.objects, grow.bytes);
    if (stats) {
        printf("STATS %llu %llu %lld %llu %llu %llu\n",
               (unsigned long long)(after.mallocs - before.mallocs),
               (unsigned long long)(after.frees - before.frees),
               (long long)(after.live_objects - before.live_objects),
               (unsigned long long)(after.sampled_allocs - before.sampled_allocs),
               (unsigned long long)(after.sampled_frees - before.sampled_frees),
               (unsigned long long)(after.dropped_samples - before.dropped_samples));
        printf("DONE %ld %ld\n", prod.objects + grow.objects, nfreed + grow.objects);
    }
    return 0;
}
