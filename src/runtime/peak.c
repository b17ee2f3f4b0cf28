/* peak.c — the heap at its highest (see peak.h). */
#include "peak.h"

#include "counters.h"
#include "dump.h"
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t peak_epoch_now = 1; /* buckets start at 0: saved on first change */
static rt_lock_t lock = RT_LOCK_INIT;
static uint64_t peak_live;   /* exact live bytes at the high (usable sizes) */
static int64_t peak_ns;      /* CLOCK_REALTIME_COARSE of the high */

void peak_save(bucket_t *b)
{
    rt_lock(&lock);
    if (b->peak_epoch != peak_epoch_now) {
        b->peak_alloc_objects = __atomic_load_n(&b->alloc_objects, __ATOMIC_RELAXED);
        b->peak_alloc_bytes = __atomic_load_n(&b->alloc_bytes, __ATOMIC_RELAXED);
        b->peak_free_objects = __atomic_load_n(&b->free_objects, __ATOMIC_RELAXED);
        b->peak_free_bytes = __atomic_load_n(&b->free_bytes, __ATOMIC_RELAXED);
        __atomic_store_n(&b->peak_epoch, peak_epoch_now, __ATOMIC_RELEASE);
    }
    rt_unlock(&lock);
}

static uint64_t live_now(void)
{
    counters_sum_t t;
    counters_sum(&t);
    return counters_live_bytes(&t);
}

/* Coarse (a few ms): a growing heap sets a new high at every sampled
 * allocation, and the precise clock was 3% of a run at rate 1. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A new epoch: every bucket's values now are the peak's. Lock held. */
static void new_high_locked(uint64_t live)
{
    peak_live = live;
    peak_ns = now_ns();
    __atomic_store_n(&peak_epoch_now, peak_epoch_now + 1, __ATOMIC_RELEASE);
}

bool peak_check(void)
{
    uint64_t live = live_now();
    dump_check_inuse(live); /* CPROF_DUMP_INUSE's steps, on the same sum */
    if (live <= __atomic_load_n(&peak_live, __ATOMIC_RELAXED))
        return false;
    rt_lock(&lock);
    bool high = live > peak_live;
    if (high)
        new_high_locked(live);
    rt_unlock(&lock);
    return high;
}

void peak_reset(void)
{
    rt_lock(&lock);
    new_high_locked(live_now());
    rt_unlock(&lock);
}

int peak_snapshot(heap_snapshot_t *s)
{
    s->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    s->temp = false;
    s->n = buckets_count();
    s->recs = calloc(s->n ? s->n : 1, sizeof(*s->recs));
    if (!s->recs)
        return -ENOMEM;
    rt_lock(&lock);
    for (size_t i = 0; i < s->n; i++) {
        bucket_t *b = buckets_get((uint32_t)i);
        heap_record_t *r = &s->recs[i];
        int64_t fo, fb;
        if (__atomic_load_n(&b->peak_epoch, __ATOMIC_ACQUIRE) == peak_epoch_now) {
            r->alloc_objects = (int64_t)b->peak_alloc_objects;
            r->alloc_bytes = (int64_t)b->peak_alloc_bytes;
            fo = (int64_t)b->peak_free_objects;
            fb = (int64_t)b->peak_free_bytes;
        } else { /* unchanged since the high (a change would save first) */
            fo = (int64_t)__atomic_load_n(&b->free_objects, __ATOMIC_ACQUIRE);
            fb = (int64_t)__atomic_load_n(&b->free_bytes, __ATOMIC_ACQUIRE);
            r->alloc_objects = (int64_t)__atomic_load_n(&b->alloc_objects, __ATOMIC_ACQUIRE);
            r->alloc_bytes = (int64_t)__atomic_load_n(&b->alloc_bytes, __ATOMIC_ACQUIRE);
        }
        r->inuse_objects = r->alloc_objects - fo;
        r->inuse_bytes = r->alloc_bytes - fb;
        heap_record_site(r, b);
    }
    uint64_t live = peak_live;
    int64_t at = peak_ns;
    rt_unlock(&lock);
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
    rt_lock(&lock);
}

void peak_fork_release(void)
{
    rt_unlock(&lock);
}
