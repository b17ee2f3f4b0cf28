/* heap.c — recording sampled allocations and their frees (see heap.h).
 *
 * Temporary allocations (heaptrack's idea, not its counts: see
 * docs/peak-temporaries-leaks.md): a block freed by the thread that
 * allocated it before that thread allocated anything else. Only sampled
 * blocks are judged, so the common path pays nothing: a sampled allocation
 * notes its address and the thread's allocation count (counters.h, which
 * counts every allocation); a free of a sampled block on the same thread
 * with the count unchanged is a temporary. A block is sampled
 * independently of how long it lives, so scaling the sampled temporaries
 * as the allocations are scaled gives an unbiased estimate; at rate 1 the
 * count is exact. realloc is not a free in this sense: growing a block
 * just made is not wasted work. */
#include "heap.h"

#include "arena.h"
#include "buckets.h"
#include "flightrec.h"
#include "labels.h"
#include "peak.h"
#include "unwind.h"
#include "usdt.h"

#include <string.h>

static uint64_t dropped; /* samples lost to a full live map, or taken in a
                          * signal handler that interrupted cprof (heap.h) */

/* Two adds, without the lock prefix while the process has one thread
 * (rt.h). On a Zen 4, plain adds (and the live map without its stripe
 * locks) measured no faster at rate 1 (python3, perf samples /
 * libpython's, medians of 5: 1.97 and 2.04 against 1.97). On this Xeon
 * (Emerald Rapids) a locked add waits for the misses before it: with the
 * live map's lock gone alone, these adds took its samples (credit_free
 * 2.5 -> 3.5% of python3's run). With the adds, the lock and the peak's
 * compare-and-swaps all unlocked, cprof's samples over libpython's went
 * 0.726 -> 0.560 and over libxml2's 2.61 -> 1.67 (medians of 7), but
 * much of that wait moved into the program's own code (libpython's
 * samples +8%, the run's -2%, medians of 5): CPU time fell 3.6% on
 * python3 and 4.3% on xmllint (medians of 30 interleaved runs, load
 * 5-6; the head run faster in 55% and 63% of the pairs). */
static void credit_free(uint32_t index, uint64_t size)
{
    bucket_counts_t *c = bucket_cell_counts(buckets_cell(index), counters_slot(&rt_self));
    peak_touch(c);
    rt_add_hot(&c->free_objects, 1);
    rt_add_hot(&c->free_bytes, size);
}

static void record_sampled(uintptr_t key, size_t size, uint32_t labels, const void *frame);

/* The flight recorder's event for a free: reserved after the live entry
 * left, so it follows its allocation's in the ring (flightrec.h). */
static void record_event(int kind, uintptr_t key, uint32_t bucket, uint64_t size)
{
    if (RT_UNLIKELY(flightrec_on))
        flightrec_put(flightrec_reserve(), kind, key, bucket, size);
}

__attribute__((noinline)) void heap_record_alloc(void *p, size_t size, const void *frame)
{
    record_sampled((uintptr_t)p, size, labels_now(), frame);
}

void heap_record_custom_alloc(const void *p, size_t size, uint32_t labels)
{
    record_sampled((uintptr_t)p | LIVEMAP_CUSTOM, size, labels, NULL);
}

/* Takes key's live entry out, crediting a free to its bucket: no
 * temporaries, no exact counters (the memory is not freed). */
static bool forget(uintptr_t key)
{
    uint32_t bucket;
    uint64_t size;
    if (RT_UNLIKELY(rt_self.locks) || !livemap_maybe((const void *)key) ||
        !livemap_remove((const void *)key, &bucket, &size))
        return false;
    credit_free(bucket, size);
    record_event(FLIGHTREC_FREE, key, bucket, size);
    return true;
}

bool heap_record_custom_free(const void *p)
{
    return forget((uintptr_t)p | LIVEMAP_CUSTOM);
}

bool heap_forget_block(const void *p)
{
    return forget((uintptr_t)p);
}

/* Records a sampled object under key (its address, or with LIVEMAP_CUSTOM
 * for a custom heap's) in the bucket of this stack and label set; frame:
 * the hook's, where the walk starts (unwind.h), or NULL. */
static void record_sampled(uintptr_t key, size_t size, uint32_t labels, const void *frame)
{
    void *p = (void *)key;
    if (RT_UNLIKELY(rt_self.locks)) { /* a signal handler: see heap.h */
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    /* The first probe of the live map missed the cache in nearly half of
     * livemap_insert's time at rate 1 (perf, xmllint, python3, jq): its
     * line now arrives while the stack is unwound. */
    livemap_prefetch(p);
    /* The guard alone, not cprof's own work (rt.h): a signal handler that
     * interrupts this and mallocs gets the next allocator, where its frees
     * go, not the private heap (heap.h). Recording allocates nothing. */
    rt_self.guard++;
    uintptr_t pcs[UNWIND_MAX_DEPTH + UNWIND_SLACK];
    unwind_stack_t st;
    unwind_capture_hash(frame, pcs, &st);
    bool memo;
    int64_t rate = rt_self.taken_rate;
    uint32_t index = buckets_index(&st, size, rate, labels, &memo);
    if (RT_UNLIKELY(unwind_check))
        unwind_check_bucket(
            &st, memo,
            index == buckets_intern(st.pcs, st.depth, st.hash, size, rate, labels)->index);
    bucket_cell_t *cell = buckets_cell(index);
    /* Its counters' line arrives while the live map is written. Without
     * -mprfchw gcc emits a read prefetch (prefetcht0) for this and the live
     * map's prefetches; with it, prefetchw (x86-64, rate 1, perf samples of
     * cprof over the program's library, interleaved, load 2-3): xmllint
     * 2.019 -> 2.022 (medians of 11), python3 0.594 -> 0.588 (9). Not
     * taken: no gain shown, and a flag the arm64 build must not get. */
    __builtin_prefetch(cell, 1);
    unwind_release(&st);
    uint32_t old_bucket;
    uint64_t old_size;
    /* The slot before the live entry exists: a free of it, on any thread,
     * lands after it in the ring (flightrec.h). */
    uint64_t slot = RT_UNLIKELY(flightrec_on) ? flightrec_reserve() : UINT64_MAX;
    int rc = livemap_insert(p, index, size, &old_bucket, &old_size);
    if (slot != UINT64_MAX)
        flightrec_put(slot, rc < 0 ? FLIGHTREC_NONE : FLIGHTREC_ALLOC, key, index, size);
    if (rc < 0) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
    } else {
        if (rc == 0)
            credit_free(old_bucket, old_size);
        /* Allocation counted after the live entry exists: a snapshot never
         * sees more frees than allocations for a bucket. The exact live
         * bytes already include this block, so a new high is set first:
         * then c's values at the high are its values after the add below,
         * and c need not be saved (peak.h). On a growing heap at rate 1
         * that is nearly every allocation. */
        rt_thread_t *t = &rt_self;
        bucket_counts_t *c = bucket_cell_counts(cell, counters_slot(t));
        if (!peak_check())
            peak_touch(c);
        rt_add_hot(&c->alloc_objects, 1);
        rt_add_hot(&c->alloc_bytes, size);
        if (!(key & LIVEMAP_CUSTOM))
            usdt_alloc(p, size, rt_self.taken_rate);
        if (t->stats) {
            t->temp_cand = ~(uintptr_t)p;
            t->temp_mark = t->stats->mallocs;
        }
    }
    rt_self.guard--;
}

__attribute__((noinline)) void heap_record_free(const void *p, heap_freed_t *out)
{
    heap_freed_t mine;
    bool is_free = !out; /* realloc passes out, free() does not */
    if (!out)
        out = &mine;
    /* In a signal handler that interrupted cprof holding a lock (heap.h),
     * the live entry stays: the next sample or free at this address
     * credits the free to its bucket then. */
    if (RT_UNLIKELY(rt_self.locks))
        return;
    if (livemap_remove(p, &out->bucket, &out->size)) {
        out->sampled = true;
        credit_free(out->bucket, out->size);
        record_event(FLIGHTREC_FREE, (uintptr_t)p, out->bucket, out->size);
        usdt_free(p);
        if (RT_UNLIKELY(counters_paused())) /* its allocation was counted */
            counters_kept_free(1, rt_usable_size((void *)p));
        rt_thread_t *t = &rt_self;
        if (is_free && t->temp_cand == ~(uintptr_t)p && t->stats &&
            t->stats->mallocs == t->temp_mark) {
            bucket_counts_t *c = bucket_cell_counts(buckets_cell(out->bucket), counters_slot(t));
            rt_add_hot(&c->temp_objects, 1);
            rt_add_hot(&c->temp_bytes, out->size);
        }
    }
}

void heap_undo_free(void *p, const heap_freed_t *f)
{
    counters_free(&rt_self, (uint64_t)-1, -f->usable);
    if (!f->sampled)
        return;
    if (RT_UNLIKELY(counters_paused()))
        counters_kept_free((uint64_t)-1, -f->usable);
    bucket_counts_t *c = bucket_cell_counts(buckets_cell(f->bucket), counters_slot(&rt_self));
    peak_touch(c);
    __atomic_sub_fetch(&c->free_objects, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&c->free_bytes, f->size, __ATOMIC_RELAXED);
    uint32_t ob;
    uint64_t os;
    if (livemap_insert(p, f->bucket, f->size, &ob, &os) < 0)
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
    else /* live again: the free just recorded is undone by a new life */
        record_event(FLIGHTREC_ALLOC, (uintptr_t)p, f->bucket, f->size);
}

uint64_t heap_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

void heap_stats(cprof_stats_t *st)
{
    counters_sum_t s;
    counters_sum(&s);
    memset(st, 0, sizeof(*st));
    st->mallocs = s.mallocs;
    st->frees = s.frees;
    st->total_alloc_bytes = s.alloc_bytes;
    st->live_bytes = counters_live_bytes(&s);
    st->live_objects = counters_live_objects(&s);
    st->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    uint32_t n = buckets_count();
    for (uint32_t i = 0; i < n; i++) {
        bucket_counts_t c;
        bucket_read(buckets_get(i), &c);
        st->sampled_allocs += c.alloc_objects;
        st->sampled_frees += c.free_objects;
    }
    st->stack_buckets = n > 0 ? n - 1 : 0; /* not the overflow bucket */
    st->dropped_samples = heap_dropped();
    st->profiler_bytes = arena_bytes();
    st->profiler_limit = arena_limit();
}
