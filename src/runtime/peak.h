/* peak.h — the heap at its highest: the sampled live set at the moment the
 * exact live bytes (counters.h) last reached a new high, for the peak
 * profile (CPROF_PEAK_PROFILE, /debug/pprof/peak, cprof_peak_profile_*).
 *
 * Nothing is copied when a new high is set — a growing heap sets one at
 * every sampled allocation. A high only starts a new epoch; each bucket
 * saves its counters lazily, the first time they change in an epoch
 * (peak_touch, before the change). At the peak, a bucket's values are its
 * saved ones if it changed since, else its current ones.
 *
 * Highs are looked for at each sampled allocation (frees only lower the
 * heap), with the exact live bytes summed over the threads' counters.
 * At rate 1 in a single thread that is every allocation, so the peak is
 * exact. At the default rate the heap may grow past the last high by up
 * to what each thread allocates between two samples (about one rate)
 * before the next check sees it; with threads, the counters are summed
 * while other threads run, and an allocation racing with a new high may
 * land on either side of it.
 *
 * Called from heap.c on the sampled path (guard set); one lock, held only
 * to save a bucket, to set a high, and to copy the counters. */
#ifndef CPROF_PEAK_H
#define CPROF_PEAK_H

#include "buckets.h"
#include "heapprof.h"

#include <stdbool.h>
#include <stdint.h>

extern uint64_t peak_epoch_now;

void peak_save(bucket_t *b);

/* Before any change to b's counters. */
static inline void peak_touch(bucket_t *b)
{
    if (__atomic_load_n(&b->peak_epoch, __ATOMIC_ACQUIRE) !=
        __atomic_load_n(&peak_epoch_now, __ATOMIC_ACQUIRE))
        peak_save(b);
}

/* When a sampled allocation is in the exact counters, before it is in its
 * bucket's: sets a new high if it is one, and says so. The caller then
 * adds to the bucket without peak_touch: the high counts the allocation. */
bool peak_check(void);

/* The heap profile at the peak (since the start or the last reset), with
 * the peak's exact live bytes and time as its comment. 0 or -ENOMEM. */
int peak_snapshot(heap_snapshot_t *s);

/* Starts a new window: the peak becomes the heap now. */
void peak_reset(void);

/* fork: hold / release the lock around fork(). */
void peak_fork_prepare(void);
void peak_fork_release(void);

#endif
