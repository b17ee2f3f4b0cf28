/* heap.c — recording sampled allocations and their frees (see heap.h).
 *
 * Temporary allocations (heaptrack's): a block freed by the thread that
 * allocated it before that thread allocated anything else. Only sampled
 * blocks are judged, so the common path pays nothing: a sampled
 * allocation notes its address and the thread's allocation count
 * (threadstats.h, which counts every allocation); a free of a sampled
 * block on the same thread with the count unchanged is a temporary. A
 * block is sampled independently of how long it lives, so scaling the
 * sampled temporaries as the allocations are scaled gives an unbiased
 * estimate; at rate 1 the count is exact. realloc is not a free in this
 * sense: growing a block just made is not wasted work. */
#include "heap.h"

#include "peak.h"
#include "stacks.h"

static uint64_t dropped; /* samples lost to a full live map */

static void credit_free(uint32_t index, uint64_t size)
{
    bucket_t *b = stacks_get(index);
    peak_touch(b);
    __atomic_add_fetch(&b->free_objects, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&b->free_bytes, size, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void heap_record_alloc(void *p, size_t size)
{
    uint32_t g = rt_guard_enter();
    uintptr_t pcs[STACKS_MAX_DEPTH];
    int depth = stacks_capture(pcs);
    bucket_t *b = stacks_intern(pcs, depth);
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
        peak_touch(b);
        __atomic_add_fetch(&b->alloc_objects, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&b->alloc_bytes, size, __ATOMIC_RELAXED);
        peak_check();
        rt_thread_t *t = &rt_self;
        if (t->stats) {
            t->temp_cand = ~(uintptr_t)p;
            t->temp_mark = t->stats->mallocs;
        }
    }
    rt_guard_leave(g);
}

__attribute__((noinline)) void heap_record_free(const void *p, heap_freed_t *out)
{
    heap_freed_t mine;
    bool is_free = !out; /* realloc passes out, free() does not */
    if (!out)
        out = &mine;
    if (livemap_remove(p, &out->bucket, &out->size)) {
        out->sampled = true;
        credit_free(out->bucket, out->size);
        rt_thread_t *t = &rt_self;
        if (is_free && t->temp_cand == ~(uintptr_t)p && t->stats &&
            t->stats->mallocs == t->temp_mark) {
            bucket_t *b = stacks_get(out->bucket);
            __atomic_add_fetch(&b->temp_objects, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&b->temp_bytes, out->size, __ATOMIC_RELAXED);
        }
    }
}

void heap_undo_free(void *p, const heap_freed_t *f)
{
    tstats_free(&rt_self, (uint64_t)-1, -f->usable);
    if (!f->sampled)
        return;
    bucket_t *b = stacks_get(f->bucket);
    peak_touch(b);
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
