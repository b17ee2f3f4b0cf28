/* sampler.c — drawing the gaps between samples (see sampler.h). */
#include "sampler.h"

#include <math.h>
#include <stddef.h>
#include <time.h>

int64_t sampler_rate;
static int64_t last_rate; /* the last rate other than 0 */
static uint64_t fixed_seed;
static uint64_t thread_counter;

void sampler_set_rate(int64_t rate)
{
    __atomic_store_n(&sampler_rate, rate, __ATOMIC_RELAXED);
    if (rate)
        __atomic_store_n(&last_rate, rate, __ATOMIC_RELAXED);
}

int64_t sampler_record_rate(int64_t bucket_rate)
{
    return bucket_rate > 0 ? bucket_rate : __atomic_load_n(&last_rate, __ATOMIC_RELAXED);
}

void sampler_set_seed(uint64_t seed)
{
    fixed_seed = seed;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t next_random(rt_thread_t *t)
{
    /* xorshift64*: fast, and plenty for choosing sample points. */
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* An exponentially distributed gap with mean `rate`, at least 1 byte. */
static int64_t draw_gap(rt_thread_t *t, int64_t rate)
{
    /* u in (0, 1]: 53 random bits, never 0 so log(u) is finite. */
    double u = (double)((next_random(t) >> 11) + 1) * (1.0 / 9007199254740992.0);
    return (int64_t)(-log(u) * (double)rate) + 1;
}

bool sampler_slow(rt_thread_t *t, size_t size, int64_t rate)
{
    if (rate <= 0) /* changed to 0 since sampler_skip looked */
        return false;
    if (RT_UNLIKELY(t->rng == 0)) {
        /* A new thread: seed, and draw its first gap as Go does for a new
         * mcache, so the first allocation is not always sampled. */
        uint64_t n = __atomic_add_fetch(&thread_counter, 1, __ATOMIC_RELAXED);
        uint64_t seed = fixed_seed;
        if (!seed)
            seed = (uint64_t)rt_now_ns() ^ (uintptr_t)t;
        t->rng = splitmix64(seed + n) | 1;
    }
    if (rate == 1) {
        t->gap_rate = t->taken_rate = 1;
        return true;
    }
    if (t->gap_rate <= 1) {
        /* No gap drawn yet (a new thread, or after rate 1): draw the first
         * as Go does for a new mcache, so this allocation is not always
         * sampled. */
        t->gap_rate = rate;
        t->next_sample = draw_gap(t, rate);
        if ((int64_t)size < t->next_sample) {
            t->next_sample -= (int64_t)size;
            return false;
        }
    }
    t->taken_rate = t->gap_rate;
    t->gap_rate = rate;
    t->next_sample = draw_gap(t, rate);
    return true;
}

void sampler_fork_child(rt_thread_t *t)
{
    t->rng = 0;
    t->gap_rate = 0;   /* no gap: the next allocation draws one */
    t->next_sample = 0; /* and goes to sampler_slow to do so */
}

void sampler_scale(int64_t count, int64_t bytes, int64_t rate, int64_t *count_out,
                int64_t *bytes_out)
{
    /* Rate 1 first: a bucket of malloc(0) objects (buckets.h) is counted
     * exactly, not dropped for its zero bytes. */
    if (rate <= 1) {
        *count_out = count;
        *bytes_out = bytes;
        return;
    }
    if (count == 0 || bytes == 0) {
        *count_out = *bytes_out = 0;
        return;
    }
    double avg = (double)bytes / (double)count;
    double scale = 1 / (1 - exp(-avg / (double)rate));
    *count_out = (int64_t)((double)count * scale);
    *bytes_out = (int64_t)((double)bytes * scale);
}
