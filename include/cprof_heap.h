/* cprof_heap.h — custom allocators and pools in cprof's heap profiles.
 *
 * An arena or pool allocator tells cprof about the objects it hands out,
 * and they are sampled like malloc's (same rate, same stacks) and labelled
 * heap=NAME in the heap profile, its peak and temporaries, and the leak
 * profile (an object no pointer reaches is a leak):
 *
 *     static cprof_heap_t pool;
 *     pool = cprof_heap_register("pool");          // once
 *     void *p = carve(n); cprof_heap_alloc(pool, p, n);
 *     cprof_heap_free(pool, p); release(p);
 *
 * Header-only: the program needs no link dependency. The entry points are
 * weak, so without libcprof.so loaded cprof_heap_register returns NULL and
 * every other call costs one branch on the handle. Thread-safe; not from a
 * signal handler. */
#ifndef CPROF_HEAP_H_PUBLIC
#define CPROF_HEAP_H_PUBLIC

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef const struct cprof_heap *cprof_heap_t; /* NULL: cprof is not loaded */

/* The entry points in libcprof.so; call the inline functions below. */
extern cprof_heap_t cprof__heap_register(const char *name) __attribute__((weak));
extern void cprof__heap_alloc(cprof_heap_t heap, const void *p, size_t size)
    __attribute__((weak));
extern void cprof__heap_free(cprof_heap_t heap, const void *p) __attribute__((weak));
extern void cprof__heap_backing(cprof_heap_t heap, const void *block) __attribute__((weak));

/* A heap named name (copied; registering a name twice gives one heap).
 * NULL when cprof is not loaded or out of label sets. */
static inline cprof_heap_t cprof_heap_register(const char *name)
{
    return cprof__heap_register ? cprof__heap_register(name) : (cprof_heap_t)0;
}

/* p, of size bytes, was just handed out by heap. */
static inline void cprof_heap_alloc(cprof_heap_t heap, const void *p, size_t size)
{
    if (heap)
        cprof__heap_alloc(heap, p, size);
}

/* p is about to go back to heap (before it may be handed out again). */
static inline void cprof_heap_free(cprof_heap_t heap, const void *p)
{
    if (heap)
        cprof__heap_free(heap, p);
}

/* old (may be NULL) was replaced by p, of size bytes (p may equal old). */
static inline void cprof_heap_realloc(cprof_heap_t heap, const void *old, const void *p,
                                      size_t size)
{
    if (heap) {
        if (old)
            cprof__heap_free(heap, old);
        cprof__heap_alloc(heap, p, size);
    }
}

/* block, a live block of malloc's (or new's), is heap's backing memory:
 * its bytes are counted through heap's objects only. If it was sampled it
 * leaves the in-use values (its allocation stays in alloc_*), so a pool's
 * bytes are not counted twice; its free later changes nothing. */
static inline void cprof_heap_backing(cprof_heap_t heap, const void *block)
{
    if (heap)
        cprof__heap_backing(heap, block);
}

#ifdef __cplusplus
}
#endif
#endif
