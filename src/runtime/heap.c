/* heap.c — recording sampled allocations and their frees (see heap.h). */
#include "heap.h"

#include "buckets.h"
#include "unwind.h"
#include "arena.h"

#include <string.h>

static uint64_t dropped; /* samples lost to a full live map */

static void credit_free(uint32_t index, uint64_t size)
{
    bucket_t *b = buckets_get(index);
    __atomic_add_fetch(&b->free_objects, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&b->free_bytes, size, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void heap_record_alloc(void *p, size_t size)
{
    uint32_t g = rt_guard_enter();
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth = unwind_capture(pcs);
    bucket_t *b = buckets_intern(pcs, depth);
    uint32_t old_bucket;
    uint64_t old_size;
    int rc = livemap_insert(p, b->index, size, &old_bucket, &old_size);
    if (rc < 0) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
    } else {
        if (rc == 0)
            credit_free(old_bucket, old_size);
        /* Allocation counted after the live entry exists: a snapshot never
         * sees more frees than allocations for a bucket. */
        __atomic_add_fetch(&b->alloc_objects, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&b->alloc_bytes, size, __ATOMIC_RELAXED);
    }
    rt_guard_leave(g);
}

__attribute__((noinline)) void heap_record_free(const void *p, heap_freed_t *out)
{
    heap_freed_t mine;
    if (!out)
        out = &mine;
    if (livemap_remove(p, &out->bucket, &out->size)) {
        out->sampled = true;
        credit_free(out->bucket, out->size);
    }
}

void heap_undo_free(void *p, const heap_freed_t *f)
{
    counters_free(&rt_self, (uint64_t)-1, -f->usable);
    if (!f->sampled)
        return;
    bucket_t *b = buckets_get(f->bucket);
    __atomic_sub_fetch(&b->free_objects, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&b->free_bytes, f->size, __ATOMIC_RELAXED);
    uint32_t ob;
    uint64_t os;
    if (livemap_insert(p, f->bucket, f->size, &ob, &os) < 0)
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
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
    st->live_bytes = s.alloc_bytes - s.free_bytes;
    st->live_objects = s.mallocs - s.frees;
    st->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    uint32_t n = buckets_count();
    for (uint32_t i = 0; i < n; i++) {
        bucket_t *b = buckets_get(i);
        st->sampled_allocs += __atomic_load_n(&b->alloc_objects, __ATOMIC_RELAXED);
        st->sampled_frees += __atomic_load_n(&b->free_objects, __ATOMIC_RELAXED);
    }
    st->stack_buckets = n > 0 ? n - 1 : 0; /* not the overflow bucket */
    st->dropped_samples = heap_dropped();
    st->profiler_bytes = arena_bytes();
    st->profiler_limit = arena_limit();
}
