/* peak.h — the heap at its highest: the sampled live set at the moment the
 * exact live bytes (counters.h) last reached a new high, for the peak
 * profile (CPROF_PEAK_PROFILE, /debug/pprof/peak, cprof_peak_profile_*).
 *
 * Nothing is copied when a new high is set — a growing heap sets one at
 * every sampled allocation. A high only marks the epoch word open
 * (PEAK_OPEN: the counters as they are now are the high's), which a run
 * of highs finds already set and leaves alone; the first change that is
 * not a high's own allocation (peak_touch) closes it, starting a new
 * epoch. Each bucket saves its counters lazily, the first time they
 * change in an epoch (peak_touch, before the change); each of a bucket's
 * sets of counters (buckets.h) on its own, so a thread saves on its own
 * shard's lines. At the peak, a set's values are its current ones while
 * the word is open, else its saved ones if it changed since the close,
 * else its current ones; a bucket's are the sum of its sets'.
 *
 * Highs are looked for at each sampled allocation (frees only lower the
 * heap), with the exact live bytes summed over the threads' counters; at
 * rate 1 only where the bound on them (counters_live_bound, which reads
 * no other thread's counters) says a high or a dump step may be reached;
 * while the calling thread holds the only counter block the bound is the
 * exact sum, read without a loop. At rate 1 in a single thread that is
 * every allocation, so the peak is exact. At the default rate the heap may grow past the last high by up
 * to what each thread allocates between two samples (about one rate)
 * before the next check sees it; with threads, the counters are summed
 * while other threads run, and an allocation racing with a new high may
 * land on either side of it. Changes that follow a high (in time, and
 * through the epoch word or a bucket's stamp) are never in its profile.
 *
 * No lock on the hooks' path: threads allocating at rate 1 set highs and
 * save buckets at once (issue 24: one lock serialised them). A high opens
 * the epoch word, a close claims the next epoch, each with a
 * compare-and-swap on it; the high's bytes and time sit on a line of
 * their own, so the word's line stays shared while threads set highs. A
 * bucket's save
 * reads its counters, then claims the bucket with a compare-and-swap of its
 * stamp (to the epoch, PEAK_BUSY set), writes the saved values and clears
 * PEAK_BUSY. The first to claim in an epoch saves; the others change the
 * counters at once, after the claim, so after the values it read. Only a
 * save of an older epoch still writing (its thread preempted between two
 * stores while a new high passed) is waited for, on that bucket alone.
 * While a snapshot reads the buckets (peak_snapshot: not a hook) the epoch
 * word is frozen (PEAK_FROZEN; an open word is closed by the freeze, so a
 * change goes on as after any close): a thread setting a new high waits for it,
 * as it waited for the lock before; the snapshot's own lock is taken by
 * snapshots, resets and fork only.
 *
 * Called from heap.c on the sampled path (guard set). A thread holding a
 * claim counts it in rt_self.locks, so a signal handler that interrupts
 * it records nothing (heap.h) and never waits for its own thread. */
#ifndef CPROF_PEAK_H
#define CPROF_PEAK_H

#include "buckets.h"
#include "heapprof.h"

#include <stdbool.h>
#include <stdint.h>

/* The epoch word: the epoch in steps of PEAK_STEP, PEAK_OPEN while no
 * change followed the high, PEAK_FROZEN while a snapshot reads (never
 * with PEAK_OPEN). A bucket's stamp is the epoch of its save, PEAK_BUSY
 * while the save is being written. */
#define PEAK_FROZEN 1ull
#define PEAK_OPEN 2ull
#define PEAK_STEP 4ull
#define PEAK_BUSY 1ull

/* The epoch word, read by every change of a bucket and written by a close;
 * on the next line the high it stands for, written by every high. Both
 * on one line measured no better with two threads at rate 1 (bench
 * mtindex 2 x 400k, perf samples of the peak's functions over indexer's,
 * medians of 14 interleaved runs: 0.0841 apart, 0.0880 together). */
typedef struct {
    uint64_t epoch; /* the epoch word */
    uint32_t thaw;  /* futex word: bumped when a snapshot unfreezes */
    uint64_t live __attribute__((aligned(64))); /* exact live bytes at the
                                                 * high (usable sizes) */
    int64_t ns;     /* CLOCK_REALTIME_COARSE of the high */
} __attribute__((aligned(64))) peak_high_t;

extern peak_high_t peak_high __attribute__((visibility("hidden")));

void peak_save(bucket_counts_t *c, uint64_t now);

/* Closes an open epoch word: the epoch word after the close. */
uint64_t peak_close(void);

/* Before any change to c, one of a bucket's sets of counters
 * (bucket_counts), but a high's own allocation: each set is saved on its
 * own, as a bucket was. */
static inline void peak_touch(bucket_counts_t *c)
{
    uint64_t w = __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE);
    if (__builtin_expect((w & PEAK_OPEN) != 0, 0))
        w = peak_close();
    uint64_t now = w & ~(PEAK_FROZEN | PEAK_OPEN);
    if (__atomic_load_n(&c->peak_epoch, __ATOMIC_ACQUIRE) != now)
        peak_save(c, now);
}

/* When a sampled allocation is in the exact counters, before it is in its
 * bucket's: sets a new high if it is one, and says so. The caller then
 * adds to its counters without peak_touch: the high counts the allocation. */
bool peak_check(void);

/* The heap profile at the peak (since the start or the last reset), with
 * the peak's exact live bytes and time as its comment. 0 or -ENOMEM. */
int peak_snapshot(heap_snapshot_t *s);

/* Starts a new window: the peak becomes the heap now. */
void peak_reset(void);

/* fork: hold the snapshot lock around fork(); release it in the parent;
 * in the child also drop the claims of threads the child does not have. */
void peak_fork_prepare(void);
void peak_fork_parent(void);
void peak_fork_child(void);

#endif
