/* peak_threads.c — four threads allocating and freeing on one stack at
 * once, for the peak profile and the exact totals at CPROF_RATE=1
 * (tests/e2e/heap_threads_peak.sh).
 *
 * Each round, every thread allocates A blocks from grab() (one stack, so
 * one bucket at rate 1) while the others do, then thread 0 alone allocates
 * one block from cap(), then every thread frees blocks from grab() at once:
 * the first frees of a round race to save the bucket for the high cap()
 * just set. The heap grows for RISE rounds (each keeps 8 blocks a thread)
 * and shrinks for FALL rounds (each frees 16 old blocks a thread): its
 * highest point is cap() of one round, when no other thread runs. The
 * program finds that round itself from malloc_usable_size (cprof's highs
 * are in usable bytes) and prints what was live then:
 *   PEAK fn inuse_objects inuse_bytes
 *   TRUTH fn alloc_objects alloc_bytes inuse_objects inuse_bytes   (at exit)
 * Once the heap shrinks, a thread's allocations of the next round never
 * outweigh its frees of this one (same sizes, more blocks freed), so no
 * moment after the highest cap() is as high. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { NT = 4, A = 64, RISE = 100, FALL = 40, KEEP = 8, DROP = 16, CAP = 3000 };
enum { MAXB = RISE * KEEP + A };

typedef struct {
    void *blocks[MAXB];
    size_t sizes[MAXB];
    int n;
    uint64_t allocs, alloc_bytes; /* grab() totals */
    uint64_t live_bytes, live_usable;
} thread_t;

static thread_t th[NT];
static pthread_barrier_t allocated, capped;
static uint64_t best_usable, peak_objects, peak_bytes, cap_allocs;
static int peak_round = -1;

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

__attribute__((noinline)) void *cap(void)
{
    void *p = malloc(CAP);
    if (!p)
        abort();
    *(volatile char *)p = 1;
    return p;
}

static void release(thread_t *t, int count)
{
    while (count-- > 0) {
        t->n--;
        t->live_bytes -= t->sizes[t->n];
        t->live_usable -= malloc_usable_size(t->blocks[t->n]);
        free(t->blocks[t->n]);
    }
}

static void *worker(void *arg)
{
    thread_t *t = arg;
    for (int r = 0; r < RISE + FALL; r++) {
        for (int i = 0; i < A; i++) {
            size_t s = size_of(i);
            void *p = grab(s);
            t->blocks[t->n] = p;
            t->sizes[t->n++] = s;
            t->allocs++;
            t->alloc_bytes += s;
            t->live_bytes += s;
            t->live_usable += malloc_usable_size(p);
        }
        pthread_barrier_wait(&allocated);
        void *c = NULL;
        if (t == &th[0]) { /* alone: the others wait at capped */
            c = cap();
            cap_allocs++;
            uint64_t usable = malloc_usable_size(c), objects = 0, bytes = 0;
            for (int k = 0; k < NT; k++) {
                usable += th[k].live_usable;
                objects += (uint64_t)th[k].n;
                bytes += th[k].live_bytes;
            }
            if (usable > best_usable) {
                best_usable = usable;
                peak_round = r;
                peak_objects = objects;
                peak_bytes = bytes;
            }
        }
        pthread_barrier_wait(&capped);
        release(t, r < RISE ? A - KEEP : A + DROP);
        free(c);
    }
    return NULL;
}

int main(void)
{
    pthread_t ids[NT];
    pthread_barrier_init(&allocated, NULL, NT);
    pthread_barrier_init(&capped, NULL, NT);
    for (int k = 0; k < NT; k++)
        if (pthread_create(&ids[k], NULL, worker, &th[k]) != 0)
            return 1;
    uint64_t ao = 0, ab = 0, io = 0, ib = 0;
    for (int k = 0; k < NT; k++) {
        pthread_join(ids[k], NULL);
        ao += th[k].allocs;
        ab += th[k].alloc_bytes;
        io += (uint64_t)th[k].n;
        ib += th[k].live_bytes;
    }
    printf("rounds %d peak_round %d\n", RISE + FALL, peak_round);
    printf("PEAK grab %llu %llu\n", (unsigned long long)peak_objects,
           (unsigned long long)peak_bytes);
    printf("PEAK cap 1 %d\n", CAP);
    printf("TRUTH grab %llu %llu %llu %llu\n", (unsigned long long)ao, (unsigned long long)ab,
           (unsigned long long)io, (unsigned long long)ib);
    printf("TRUTH cap %llu %llu 0 0\n", (unsigned long long)cap_allocs,
           (unsigned long long)cap_allocs * CAP);
    return 0;
}
