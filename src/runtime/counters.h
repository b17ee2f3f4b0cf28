/* counters.h — the exact whole-process counters (cprof_stats_t's
 * mallocs, frees, bytes), kept per thread so that counting costs a few
 * non-atomic adds on a cache line no other thread writes.
 *
 * Each thread takes a counter block on its first allocation and gives it
 * back when it exits; a block keeps its sums when it changes hands, so the
 * totals are simply the sum over every block ever made (plus the orphan
 * counters for the few allocations a thread makes after its exit hook ran).
 * Blocks come from the arena and are reused: thread storms stay bounded.
 *
 * Paused (cprof detach, attach.h): the hooks that stay routed (free,
 * realloc) keep counting into the blocks, but counters_sum leaves out
 * everything counted while paused (malloc is not seen then, so the frees
 * would pile up unmatched), except the frees of sampled blocks, whose
 * allocations were counted (counters_kept_free). Pause and resume are
 * serialized by their caller and run with the sampling rate at 0, so no
 * hook (peak_check), nor a signal handler's malloc, reads the sums while
 * they write them; counters_sum reads lock-free (a sequence count). */
#ifndef CPROF_COUNTERS_H
#define CPROF_COUNTERS_H

#include "rt.h"

#include <stdbool.h>
#include <stdint.h>

struct counters {
    uint64_t mallocs, frees;          /* counts */
    uint64_t alloc_bytes, free_bytes; /* usable sizes, bytes */
    struct counters *next_all;          /* every block, for summing */
    struct counters *next_free;         /* blocks of exited threads */
    uint64_t published;                 /* alloc_bytes - free_bytes when
                                         * last added to the bound's sum;
                                         * the holder's alone */
    uint32_t slot;                      /* 1, 2, ... in order of creation: the
                                         * holder's shard of a bucket's
                                         * counters (buckets.h) */
} __attribute__((aligned(64)));

typedef struct {
    uint64_t mallocs, frees, alloc_bytes, free_bytes;
} counters_sum_t;

/* Slow path: gives the calling thread a block (NULL if none can be had). */
counters_t *counters_acquire(rt_thread_t *t);

/* Counts into the thread's block, or the orphan counters if it has none.
 * Relaxed atomic stores: a concurrent reader sees whole values. One
 * function per event, so each call touches only the two counters it
 * changes. */
void counters_orphan_add(uint64_t mallocs, uint64_t frees, uint64_t ab, uint64_t fb);

static inline counters_t *counters_block(rt_thread_t *t)
{
    counters_t *s = t->stats;
    return RT_LIKELY(s != NULL) ? s : counters_acquire(t);
}

/* The thread's slot (buckets.h), 0 without a block. Blocks go back on a
 * thread's exit, so the threads alive at once hold distinct slots. */
static inline uint32_t counters_slot(const rt_thread_t *t)
{
    return t->stats ? t->stats->slot : 0;
}

/* Counts into a block the caller holds (the hooks' fast path, which has
 * already checked t->stats). */
static inline void counters_add_alloc(counters_t *s, uint64_t bytes)
{
    __atomic_store_n(&s->mallocs, s->mallocs + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->alloc_bytes, s->alloc_bytes + bytes, __ATOMIC_RELAXED);
}

/* count is 1 for a free, (uint64_t)-1 to take one back (failed realloc). */
static inline void counters_add_free(counters_t *s, uint64_t count, uint64_t bytes)
{
    __atomic_store_n(&s->frees, s->frees + count, __ATOMIC_RELAXED);
    __atomic_store_n(&s->free_bytes, s->free_bytes + bytes, __ATOMIC_RELAXED);
}

static inline void counters_alloc(rt_thread_t *t, uint64_t bytes)
{
    counters_t *s = counters_block(t);
    if (RT_UNLIKELY(!s)) {
        counters_orphan_add(1, 0, bytes, 0);
        return;
    }
    counters_add_alloc(s, bytes);
}

static inline void counters_free(rt_thread_t *t, uint64_t count, uint64_t bytes)
{
    counters_t *s = counters_block(t);
    if (RT_UNLIKELY(!s)) {
        counters_orphan_add(0, count, 0, bytes);
        return;
    }
    counters_add_free(s, count, bytes);
}

void counters_sum(counters_sum_t *out);

/* counters_live_bytes of counters_sum, summing the bytes alone. */
uint64_t counters_live_now(void);

/* A bound on the live bytes that reads no other thread's block, for the
 * peak (peak.h), after the percpu_counter_compare of Linux: each thread
 * adds its net bytes (allocated minus freed) to one shared sum whenever
 * they moved by more than COUNTERS_BATCH since it last did
 * (counters_publish, at its sampled allocations; in full when it exits),
 * so the live bytes are at most that sum plus COUNTERS_BATCH per block
 * held by a thread. At rate 1 every allocation is followed by its thread's
 * publish, so the bound holds but for allocations racing with the reader;
 * at other rates a thread's growth between samples is not in it.
 * UINT64_MAX once a pause began (its exclusions are not in the sum).
 * When the calling thread holds the only block, every other block is
 * published in full (on its thread's exit), so the sum with the caller's
 * own unpublished bytes is the exact live bytes: then *exact is set. */
#define COUNTERS_BATCH (32u << 10)
uint64_t counters_live_bound(bool *exact);
void counters_publish_slow(counters_t *s, uint64_t net);

static inline void counters_publish(const rt_thread_t *t)
{
    counters_t *s = t->stats;
    if (RT_UNLIKELY(!s))
        return;
    uint64_t net = s->alloc_bytes - s->free_bytes;
    if (net - s->published + COUNTERS_BATCH > 2 * (uint64_t)COUNTERS_BATCH)
        counters_publish_slow(s, net);
}

/* fork child: the parent's other threads are gone mid-publish; their
 * blocks' deltas go into the sum (single-threaded). */
void counters_fork_child_bound(void);

/* Live objects and bytes of a sum; 0 where the frees exceed the
 * allocations, as after cprof attach, which counts the frees of blocks
 * allocated before it but not their allocations (attach.h). */
static inline uint64_t counters_live_objects(const counters_sum_t *s)
{
    return s->mallocs > s->frees ? s->mallocs - s->frees : 0;
}

static inline uint64_t counters_live_bytes(const counters_sum_t *s)
{
    return s->alloc_bytes > s->free_bytes ? s->alloc_bytes - s->free_bytes : 0;
}

void counters_pause(void);
void counters_resume(void);
/* Whether a pause ever began: the sums then miss the blocks freed in it. */
bool counters_ever_paused(void);

extern int counters_paused_flag __attribute__((visibility("hidden"))); /* atomic */

static inline bool counters_paused(void)
{
    return __atomic_load_n(&counters_paused_flag, __ATOMIC_RELAXED) != 0;
}

/* While paused: a free of a sampled block (count 1, its usable bytes), or
 * its undoing by a failed realloc (count -1, bytes negated). */
void counters_kept_free(uint64_t count, uint64_t bytes);

/* Creates the thread-exit key; called once from the constructor. */
void counters_init(void);

/* fork: hold / release the block list lock around fork(). */
void counters_fork_prepare(void);
void counters_fork_release(void);

#endif
