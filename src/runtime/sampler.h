/* sampler.h — which allocations are sampled: Go's MemProfileRate scheme.
 *
 * Each thread counts down the bytes left before its next sample
 * (rt_self.next_sample). An allocation of `size` bytes is sampled when
 * size >= next_sample, after which a new gap is drawn from an exponential
 * distribution with mean `rate`; otherwise the size is subtracted. Because
 * the gaps are memoryless, an allocation of size s is sampled with
 * probability 1 - exp(-s/rate), which the profile writer divides out
 * (heapprof.c). rate 1 samples everything, 0 nothing. */
#ifndef CPROF_SAMPLER_H
#define CPROF_SAMPLER_H

#include "rt.h"

#include <stdint.h>

/* bytes; read relaxed on every allocation (hidden: one instruction) */
extern int64_t sampler_rate __attribute__((visibility("hidden")));

/* Slow path of sampler_take: seeds a new thread, or draws the next gap.
 * Returns whether this allocation is sampled; if so, t->taken_rate is the
 * rate it was sampled at, which its record is scaled by: the rate of the
 * gap it ends, drawn before the rate may have changed (cprof_set_rate, a
 * second cprof attach). A gap left by a rate that is gone goes on: being
 * memoryless, its rest is still a gap of that rate. */
bool sampler_slow(rt_thread_t *t, size_t size, int64_t rate);

/* The common case, inline in the hooks: true when the allocation is not
 * sampled (its size then taken off the countdown, or the rate is 0);
 * false when sampler_slow must decide, with nothing changed, so a caller
 * may hand the allocation on to a path that calls sampler_take. One test
 * of the rate (> 1: counting down) and one of the countdown. */
static inline bool sampler_skip(rt_thread_t *t, size_t size)
{
    int64_t rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    if (RT_LIKELY(rate > 1 && (int64_t)size < t->next_sample)) {
        t->next_sample -= (int64_t)size;
        return true;
    }
    return rate <= 0;
}

static inline bool sampler_take(rt_thread_t *t, size_t size)
{
    if (sampler_skip(t, size))
        return false;
    return sampler_slow(t, size, __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED));
}

void sampler_set_rate(int64_t rate);

/* In a fork child (its only thread t): forgets the parent's countdown and
 * random state, so that the child's samples fall at points of its own,
 * not where the parent's next one falls. */
void sampler_fork_child(rt_thread_t *t);

/* The rate a bucket's samples are scaled by: its own, or for the overflow
 * bucket (rate 0: samples of any rate) the last rate other than 0, so that
 * cprof_set_rate(0) leaves its estimate as it was. */
int64_t sampler_record_rate(int64_t bucket_rate);

/* Go's scaleHeapSample: divides a record's (count, bytes) by the
 * probability 1 - exp(-avg/rate) that an object of its average size is
 * sampled, truncating as Go does; unbiased when the record holds one size
 * (buckets.h). Unchanged when rate <= 1. */
void sampler_scale(int64_t count, int64_t bytes, int64_t rate, int64_t *count_out,
                   int64_t *bytes_out);

/* Fixed seed (CPROF_SEED) for reproducible runs; 0 = seed from the clock. */
void sampler_set_seed(uint64_t seed);

#endif
