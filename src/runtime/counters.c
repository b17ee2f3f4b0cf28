/* counters.c — per-thread allocation counters (see counters.h). */
#include "counters.h"

#include "arena.h"

#include <pthread.h>

static rt_lock_t lock = RT_LOCK_INIT;
static counters_t *all_blocks;  /* append-only list, published with release */
static counters_t *free_blocks; /* under lock */
static uint32_t nblocks;        /* under lock */
/* The bound (counters.h), on a line of its own: written once per
 * COUNTERS_BATCH bytes a thread's heap moves, read at every sample. */
static struct {
    uint64_t net;    /* sum of the blocks' published (wraps like them) */
    uint64_t in_use; /* blocks held by threads */
} __attribute__((aligned(64))) bound;
static counters_sum_t orphan;   /* atomically updated */
static pthread_key_t exit_key;
static bool have_key;

/* Pausing (counters.h). excluded and paused_at change only under an odd
 * seq; kept is atomically updated. */
int counters_paused_flag;
static unsigned seq;
static counters_sum_t excluded;  /* counted in pauses that ended */
static counters_sum_t paused_at; /* the raw sums when this pause began */
static counters_sum_t kept;      /* frees of sampled blocks while paused */

static void on_thread_exit(void *arg)
{
    counters_t *s = arg;
    /* Off the block first: a signal handler's allocation after the publish
     * would count in it unpublished, outside the sole holder's exact sum. */
    rt_self.stats = rt_self.fast = NULL;
    rt_self.slow = 1;
    rt_self.exited = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    /* Its whole delta in the sum: the block is no longer in in_use's slack. */
    counters_publish_slow(s, s->alloc_bytes - s->free_bytes);
    __atomic_sub_fetch(&bound.in_use, 1, __ATOMIC_RELEASE);
    rt_lock(&lock);
    s->next_free = free_blocks;
    free_blocks = s;
    rt_unlock(&lock);
}

void counters_init(void)
{
    have_key = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

counters_t *counters_acquire(rt_thread_t *t)
{
    /* After its exit hook a thread may still allocate (other destructors);
     * taking a block then would leak it, so count into the orphans. */
    if (t->exited)
        return NULL;
    /* In a signal handler that interrupted this thread holding a lock (maybe
     * ours, heap.h): count into the orphans rather than wait. */
    if (t->locks)
        return NULL;
    uint32_t g = rt_guard_enter();
    rt_lock(&lock);
    counters_t *s = free_blocks;
    if (s) {
        free_blocks = s->next_free;
    } else if ((s = arena_alloc_aligned(sizeof(*s), _Alignof(counters_t)))) {
        s->slot = ++nblocks;
        s->next_all = all_blocks;
        __atomic_store_n(&all_blocks, s, __ATOMIC_RELEASE);
    }
    rt_unlock(&lock);
    if (s) /* before any count into it: its slack is in the bound */
        __atomic_add_fetch(&bound.in_use, 1, __ATOMIC_ACQ_REL);
    /* pthread_setspecific may calloc (keys past the first 32): guarded. */
    if (s && have_key)
        pthread_setspecific(exit_key, s);
    rt_guard_leave(g);
    t->stats = s;
    t->fast = __atomic_load_n(&rt_glibc_chunks, __ATOMIC_ACQUIRE) ? s : NULL;
    t->slow = !t->fast;
    return s;
}

void counters_orphan_add(uint64_t mallocs, uint64_t frees, uint64_t ab, uint64_t fb)
{
    __atomic_add_fetch(&orphan.mallocs, mallocs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&orphan.frees, frees, __ATOMIC_RELAXED);
    __atomic_add_fetch(&orphan.alloc_bytes, ab, __ATOMIC_RELAXED);
    __atomic_add_fetch(&orphan.free_bytes, fb, __ATOMIC_RELAXED);
}

void counters_publish_slow(counters_t *s, uint64_t net)
{
    __atomic_add_fetch(&bound.net, net - s->published, __ATOMIC_RELEASE);
    s->published = net;
}

static uint64_t orphan_net(void)
{
    return __atomic_load_n(&orphan.alloc_bytes, __ATOMIC_RELAXED) -
           __atomic_load_n(&orphan.free_bytes, __ATOMIC_RELAXED);
}

static bool sole_holder(const counters_t *s, uint64_t in_use)
{
    return s && in_use == 1;
}

/* The exact live bytes while the caller's block s is the only one held:
 * every other block is published in full (on_thread_exit), the sum counts
 * s as published, and s itself says how far it moved since. */
static uint64_t sole_net(const counters_t *s)
{
    return __atomic_load_n(&bound.net, __ATOMIC_ACQUIRE) + orphan_net() +
           (s->alloc_bytes - s->free_bytes - s->published);
}

uint64_t counters_live_bound(bool *exact)
{
    *exact = false;
    if (counters_ever_paused())
        return UINT64_MAX;
    const counters_t *s = rt_self.stats;
    uint64_t in_use = __atomic_load_n(&bound.in_use, __ATOMIC_ACQUIRE);
    uint64_t net, slack = 0;
    if (sole_holder(s, in_use)) {
        net = sole_net(s);
        *exact = true;
    } else {
        net = __atomic_load_n(&bound.net, __ATOMIC_ACQUIRE) + orphan_net();
        slack = in_use * COUNTERS_BATCH;
    }
    /* The sum wraps as the counters do: a net below zero (frees of
     * blocks allocated before cprof attached) bounds nothing. */
    if ((int64_t)net < 0 || net + slack < net) {
        *exact = false;
        return UINT64_MAX;
    }
    return net + slack;
}

void counters_fork_child_bound(void)
{
    for (counters_t *s = all_blocks; s; s = s->next_all)
        counters_publish_slow(s, s->alloc_bytes - s->free_bytes);
}

static void raw_sum(counters_sum_t *out)
{
    out->mallocs = __atomic_load_n(&orphan.mallocs, __ATOMIC_RELAXED);
    out->frees = __atomic_load_n(&orphan.frees, __ATOMIC_RELAXED);
    out->alloc_bytes = __atomic_load_n(&orphan.alloc_bytes, __ATOMIC_RELAXED);
    out->free_bytes = __atomic_load_n(&orphan.free_bytes, __ATOMIC_RELAXED);
    for (counters_t *s = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE); s; s = s->next_all) {
        out->mallocs += __atomic_load_n(&s->mallocs, __ATOMIC_RELAXED);
        out->frees += __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
        out->alloc_bytes += __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED);
        out->free_bytes += __atomic_load_n(&s->free_bytes, __ATOMIC_RELAXED);
    }
}

uint64_t counters_live_now(void)
{
    if (counters_ever_paused()) { /* the pauses' corrections: the full sum */
        counters_sum_t t;
        counters_sum(&t);
        return counters_live_bytes(&t);
    }
    const counters_t *own = rt_self.stats;
    /* Acquire: an exited thread's full publish precedes its block's
     * release (on_thread_exit). */
    uint64_t net, in_use = __atomic_load_n(&bound.in_use, __ATOMIC_ACQUIRE);
    if (sole_holder(own, in_use)) {
        net = sole_net(own);
    } else {
        net = orphan_net();
        for (counters_t *s = __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE); s; s = s->next_all)
            net += __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED) -
                   __atomic_load_n(&s->free_bytes, __ATOMIC_RELAXED);
    }
    return (int64_t)net > 0 ? net : 0;
}

static void sub(counters_sum_t *a, const counters_sum_t *b)
{
    a->mallocs -= b->mallocs;
    a->frees -= b->frees;
    a->alloc_bytes -= b->alloc_bytes;
    a->free_bytes -= b->free_bytes;
}

void counters_sum(counters_sum_t *out)
{
    counters_sum_t ex, at;
    unsigned s0;
    bool paused;
    do {
        while ((s0 = __atomic_load_n(&seq, __ATOMIC_ACQUIRE)) & 1)
            ;
        ex = excluded;
        at = paused_at;
        paused = counters_paused();
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while (__atomic_load_n(&seq, __ATOMIC_RELAXED) != s0);
    if (paused) /* nothing since the pause began counts: as at its start */
        *out = at;
    else
        raw_sum(out);
    sub(out, &ex);
    out->frees += __atomic_load_n(&kept.frees, __ATOMIC_RELAXED);
    out->free_bytes += __atomic_load_n(&kept.free_bytes, __ATOMIC_RELAXED);
}

void counters_pause(void)
{
    if (counters_paused())
        return;
    __atomic_store_n(&seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    raw_sum(&paused_at);
    __atomic_store_n(&counters_paused_flag, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&seq, seq + 1, __ATOMIC_RELEASE);
}

bool counters_ever_paused(void)
{
    return __atomic_load_n(&seq, __ATOMIC_RELAXED) != 0;
}

void counters_resume(void)
{
    if (!counters_paused())
        return;
    counters_sum_t now;
    __atomic_store_n(&seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    raw_sum(&now);
    sub(&now, &paused_at);
    excluded.mallocs += now.mallocs;
    excluded.frees += now.frees;
    excluded.alloc_bytes += now.alloc_bytes;
    excluded.free_bytes += now.free_bytes;
    __atomic_store_n(&counters_paused_flag, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&seq, seq + 1, __ATOMIC_RELEASE);
}

void counters_kept_free(uint64_t count, uint64_t bytes)
{
    __atomic_add_fetch(&kept.frees, count, __ATOMIC_RELAXED);
    __atomic_add_fetch(&kept.free_bytes, bytes, __ATOMIC_RELAXED);
}

void counters_fork_prepare(void)
{
    rt_lock(&lock);
}

void counters_fork_release(void)
{
    rt_unlock(&lock);
}
