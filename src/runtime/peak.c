/* peak.c — the heap at its highest (see peak.h). */
#include "peak.h"

#include "counters.h"
#include "dump.h"
#include "sampler.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Buckets start at stamp 0: saved on their first change. */
peak_high_t peak_high = {.epoch = PEAK_STEP};

/* Snapshots, resets and fork, one at a time; never taken by a hook. */
static rt_lock_t snap_lock = RT_LOCK_INIT;

/* A few pauses, then the core to others: the thread being waited for may
 * have been preempted. */
static void relax(unsigned spins)
{
    if (spins < 64)
        rt_cpu_relax();
    else
        sched_yield();
}

void peak_save(bucket_counts_t *b, uint64_t now)
{
    for (unsigned spins = 0;; spins++) {
        uint64_t s = __atomic_load_n(&b->peak_epoch, __ATOMIC_ACQUIRE);
        /* Saved for this epoch or a later one, or being saved from values
         * read before the claim this load saw: change away. */
        if ((s & ~PEAK_BUSY) >= now)
            return;
        if (s & PEAK_BUSY) { /* an older epoch's save still writing */
            relax(spins);
            continue;
        }
        /* Read before the claim: a change by another thread that sees the
         * claim comes after it, so after these reads (peak.h). */
        uint64_t fo = __atomic_load_n(&b->free_objects, __ATOMIC_ACQUIRE);
        uint64_t fb = __atomic_load_n(&b->free_bytes, __ATOMIC_ACQUIRE);
        uint64_t ao = __atomic_load_n(&b->alloc_objects, __ATOMIC_ACQUIRE);
        uint64_t ab = __atomic_load_n(&b->alloc_bytes, __ATOMIC_ACQUIRE);
        rt_self.locks++; /* a handler on this thread must not wait for it */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        bool won = rt_cas_hot(&b->peak_epoch, &s, now | PEAK_BUSY);
        if (won) {
            __atomic_store_n(&b->peak_alloc_objects, ao, __ATOMIC_RELAXED);
            __atomic_store_n(&b->peak_alloc_bytes, ab, __ATOMIC_RELAXED);
            __atomic_store_n(&b->peak_free_objects, fo, __ATOMIC_RELAXED);
            __atomic_store_n(&b->peak_free_bytes, fb, __ATOMIC_RELAXED);
            __atomic_store_n(&b->peak_epoch, now, __ATOMIC_RELEASE);
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rt_self.locks--;
        if (won)
            return;
    }
}

/* Coarse (a few ms): a growing heap sets a new high at every sampled
 * allocation, and the precise clock was 3% of a run at rate 1. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Raises the high's bytes to live (they never go down but at a reset).
 * A compare-and-swap even when the caller holds the only counter block:
 * a thread without one (an exited thread's destructors) or a reset may
 * raise them between its read and its write. */
static void raise_live(uint64_t live)
{
    uint64_t cur = __atomic_load_n(&peak_high.live, __ATOMIC_RELAXED);
    while (live > cur)
        if (rt_cas_hot(&peak_high.live, &cur, live)) {
            __atomic_store_n(&peak_high.ns, now_ns(), __ATOMIC_RELAXED);
            return;
        }
}

/* A snapshot reads: wait for it to unfreeze the epoch word. */
static void wait_thaw(void)
{
    uint32_t t = __atomic_load_n(&peak_high.thaw, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE) & PEAK_FROZEN)
        rt_futex_wait(&peak_high.thaw, t, -1);
}

uint64_t peak_close(void)
{
    uint64_t w = __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE);
    /* Never frozen while open (peak_snapshot closes as it freezes). */
    while (w & PEAK_OPEN) {
        uint64_t next = (w & ~PEAK_OPEN) + PEAK_STEP;
        if (rt_cas_hot(&peak_high.epoch, &w, next))
            return next;
    }
    return w;
}

bool peak_check(void)
{
    /* At rate 1, no new high and no dump step within the bound: not a
     * line of another thread's read (counters.h). Other rates sum: a
     * sample is rare, and the bound misses the growth between samples. */
    counters_publish(&rt_self);
    bool exact = false;
    uint64_t live = 0;
    if (rt_self.taken_rate == 1) {
        uint64_t bound = counters_live_bound(&exact);
        if (bound <= __atomic_load_n(&peak_high.live, __ATOMIC_RELAXED) &&
            bound < __atomic_load_n(&dump_inuse_next, __ATOMIC_RELAXED))
            return false;
        live = bound; /* the sum itself when exact: one thread holds a block */
    }
    /* With threads the sum reads the other blocks' lines, which their
     * threads write at every allocation, and a high writes the shared
     * words: mtindex 2 x 400k with this function returning false at rate 1
     * took cprof's perf samples over indexer's 0.968 -> 0.870 and 1.061 ->
     * 0.906 (medians of 9 and 13). Prefetching the high's line for write
     * (and the epoch's) before the sum, to overlap the misses, was measured
     * and dropped: 0.968 -> 0.967 (9), 1.061 -> 1.060 (13, both lines for
     * write), the peak's own share 0.0789 -> 0.0743 and 0.0895 -> 0.0979.
     * Skipping the sum while the word is open (the run's bytes summed at
     * its close) pays little and is not exact: in callgrind (2 x 100k)
     * 350,232 highs opened 315,170 runs, so at most 35 K of the 509,385
     * sums would go, and a free free()'s fast path keeps from cprof (a
     * block the live map never had) would not end the run. */
    if (!exact)
        live = counters_live_now();
    dump_check_inuse(live); /* CPROF_DUMP_INUSE's steps, on the same sum */
    uint64_t e = __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE);
    for (;;) {
        if (live <= __atomic_load_n(&peak_high.live, __ATOMIC_RELAXED))
            return false;
        if (e & PEAK_OPEN) /* a run of highs: the word stays as it is */
            break;
        if (RT_UNLIKELY(e & PEAK_FROZEN)) {
            wait_thaw();
            e = __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE);
            continue;
        }
        if (rt_cas_hot(&peak_high.epoch, &e, e | PEAK_OPEN))
            break;
    }
    raise_live(live);
    return true;
}

void peak_reset(void)
{
    rt_lock(&snap_lock);
    __atomic_store_n(&peak_high.live, counters_live_now(), __ATOMIC_RELAXED);
    __atomic_store_n(&peak_high.ns, now_ns(), __ATOMIC_RELAXED);
    /* The heap now is the peak: open (never frozen: the lock is ours). */
    __atomic_fetch_or(&peak_high.epoch, PEAK_OPEN, __ATOMIC_ACQ_REL);
    rt_unlock(&snap_lock);
}

/* Adds c's values at the high of epoch now (the epoch word frozen). */
static void set_at(bucket_counts_t *b, uint64_t now, heap_record_t *r, int64_t *fo, int64_t *fb)
{
    for (unsigned spins = 0;; spins++) {
        uint64_t s = __atomic_load_n(&b->peak_epoch, __ATOMIC_ACQUIRE);
        if (s == (now | PEAK_BUSY)) { /* counters may have moved on already */
            relax(spins);
            continue;
        }
        bool saved = s == now;
        uint64_t *ao = saved ? &b->peak_alloc_objects : &b->alloc_objects;
        uint64_t *ab = saved ? &b->peak_alloc_bytes : &b->alloc_bytes;
        uint64_t *fro = saved ? &b->peak_free_objects : &b->free_objects;
        uint64_t *frb = saved ? &b->peak_free_bytes : &b->free_bytes;
        int64_t o = (int64_t)__atomic_load_n(fro, __ATOMIC_ACQUIRE);
        int64_t y = (int64_t)__atomic_load_n(frb, __ATOMIC_ACQUIRE);
        int64_t x = (int64_t)__atomic_load_n(ao, __ATOMIC_ACQUIRE);
        int64_t z = (int64_t)__atomic_load_n(ab, __ATOMIC_ACQUIRE);
        /* Unchanged since the high unless a save began meanwhile (a
         * change claims first): then read again. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&b->peak_epoch, __ATOMIC_RELAXED) == s) {
            r->alloc_objects += x;
            r->alloc_bytes += z;
            *fo += o;
            *fb += y;
            return;
        }
    }
}

/* b's values at the high: the sum of its sets'. */
static void bucket_at(bucket_t *b, uint64_t now, heap_record_t *r, int64_t *fo, int64_t *fb)
{
    r->alloc_objects = r->alloc_bytes = *fo = *fb = 0;
    set_at(&b->cell->counts, now, r, fo, fb);
    bucket_shard_t *sh = __atomic_load_n(&b->cell->shards, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; sh && i < BUCKET_SHARDS; i++)
        set_at(&sh[i].c, now, r, fo, fb);
}

int peak_snapshot(heap_snapshot_t *s)
{
    s->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    s->temp = false;
    s->resident = false; /* residency is the heap profile's alone */
    s->n = buckets_count();
    s->recs = calloc(s->n ? s->n : 1, sizeof(*s->recs));
    if (!s->recs)
        return -ENOMEM;
    rt_lock(&snap_lock);
    /* Frozen, and closed if open: the counters as they are now are the
     * high's, and the changes that follow save them as after any close. */
    uint64_t now = __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE), frozen;
    do
        frozen = ((now & PEAK_OPEN) ? (now & ~PEAK_OPEN) + PEAK_STEP : now) | PEAK_FROZEN;
    while (!__atomic_compare_exchange_n(&peak_high.epoch, &now, frozen, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE));
    now = frozen & ~PEAK_FROZEN;
    for (size_t i = 0; i < s->n; i++) {
        heap_record_t *r = &s->recs[i];
        int64_t fo, fb;
        bucket_at(buckets_get((uint32_t)i), now, r, &fo, &fb);
        r->inuse_objects = r->alloc_objects - fo;
        r->inuse_bytes = r->alloc_bytes - fb;
        heap_record_site(r, buckets_get((uint32_t)i));
    }
    uint64_t live = __atomic_load_n(&peak_high.live, __ATOMIC_RELAXED);
    int64_t at = __atomic_load_n(&peak_high.ns, __ATOMIC_RELAXED);
    __atomic_and_fetch(&peak_high.epoch, ~PEAK_FROZEN, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&peak_high.thaw, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&peak_high.thaw, INT32_MAX);
    rt_unlock(&snap_lock);
    time_t sec = (time_t)(at / 1000000000);
    struct tm tm;
    char when[40] = "";
    if (at && gmtime_r(&sec, &tm))
        strftime(when, sizeof(when), " at %Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(s->comment, sizeof(s->comment),
             "cprof peak: %llu bytes live (exact, usable sizes)%s; the samples are the "
             "sampled objects live then", (unsigned long long)live, when);
    return 0;
}

void peak_fork_prepare(void)
{
    rt_lock(&snap_lock);
}

void peak_fork_parent(void)
{
    rt_unlock(&snap_lock);
}

/* A thread of the parent's that was writing a save is gone: its bucket is
 * marked unsaved (it is read as it is now), or it would be waited for
 * forever. The child has one thread: nothing races with this. */
void peak_fork_child(void)
{
    uint32_t n = buckets_count();
    for (uint32_t i = 0; i < n; i++) {
        bucket_cell_t *b = buckets_cell(i);
        if (b->counts.peak_epoch & PEAK_BUSY)
            b->counts.peak_epoch = 0;
        for (unsigned k = 0; b->shards && k < BUCKET_SHARDS; k++)
            if (b->shards[k].c.peak_epoch & PEAK_BUSY)
                b->shards[k].c.peak_epoch = 0;
    }
    counters_fork_child_bound();
    rt_unlock(&snap_lock);
}
