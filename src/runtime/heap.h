/* heap.h — what the allocation hooks do besides forwarding: count every
 * allocation and free (counters.h), sample (sampler.h), and for sampled
 * objects record the stack (unwind.h, buckets.h) and the live object (livemap.h).
 *
 * The inline functions are the general path of an unsampled call: a few
 * thread-local adds, the allocator's usable-size lookup, the sampler
 * countdown, and on free one read of the live-map filter. With glibc
 * behind, malloc and free do the same in their own fast paths (allochooks.c).
 *
 * Signal handlers: a program may call malloc and free in a handler (unwise,
 * but glibc copes). If the handler interrupted cprof on its own thread while
 * it held a lock (rt_self.locks: a live-map stripe in a free, the stats list,
 * the private heap), the hooks must not wait for that lock: the allocation
 * is counted but its sample dropped (heap_dropped), a free leaves its live
 * entry for the next sample or free at that address to settle, and a block
 * of the private heap freed there is leaked. The next allocator is called as
 * always. */
#ifndef CPROF_HEAP_H
#define CPROF_HEAP_H

#include "cprof.h"
#include "livemap.h"
#include "rt.h"
#include "sampler.h"
#include "counters.h"

#include <stdint.h>

/* What a free of a sampled object took out of the tables, so a failed
 * realloc can put it back. */
typedef struct {
    bool sampled;
    uint32_t bucket;
    uint64_t size;
    uint64_t usable;
} heap_freed_t;

/* frame: the hook's frame address (unwind_capture_hash), or NULL. */
void heap_record_alloc(void *p, size_t size, const void *frame);
void heap_record_free(const void *p, heap_freed_t *out);
void heap_undo_free(void *p, const heap_freed_t *f);

/* A custom heap's object (customheap.c), sampled by the caller, recorded
 * with the label set labels under its own key (livemap.h's
 * LIVEMAP_CUSTOM); its free, true when it was sampled and live. */
void heap_record_custom_alloc(const void *p, size_t size, uint32_t labels);
bool heap_record_custom_free(const void *p);
/* A malloc block that a custom heap took as its backing memory
 * (cprof_heap_backing): its sampled live entry, if any, is taken out as
 * if freed, without touching the exact counters or temporaries. */
bool heap_forget_block(const void *p);

/* The stack is walked from the caller of the hook this is inlined into:
 * always inlined, as GCC would not inline a function that takes its
 * frame's address (and the unsampled calloc or realloc would pay a call). */
static inline __attribute__((always_inline)) void heap_on_alloc(rt_thread_t *t, void *p,
                                                                size_t size)
{
    counters_alloc(t, rt_usable_size(p));
    if (RT_UNLIKELY(sampler_take(t, size)))
        heap_record_alloc(p, size, __builtin_frame_address(0));
}

/* Called before the real free: the address may be reused right after.
 * out (NULL: not wanted) tells what was counted, for heap_undo_free; free()
 * passes NULL, so that no local of its own outlives the call and the real
 * free can be a jump. */
static inline void heap_on_free(rt_thread_t *t, void *p, heap_freed_t *out)
{
    size_t usable = rt_usable_size(p);
    counters_free(t, 1, usable);
    if (out) {
        out->sampled = false;
        out->usable = usable;
    }
    if (RT_UNLIKELY(livemap_maybe(p)))
        heap_record_free(p, out);
}

uint64_t heap_dropped(void);

/* The exact counters and the profiler's own figures (cprof_stats). */
void heap_stats(cprof_stats_t *st);

#endif
