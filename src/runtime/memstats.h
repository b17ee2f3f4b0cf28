/* memstats.h — Go's runtime.MemStats for a C process, as the "# runtime.MemStats"
 * block of heap?debug=1 (Go's writeHeapInternal: its field names, its order).
 *
 * What each field holds here:
 *   Alloc, HeapAlloc   live bytes (cprof's exact counters: usable sizes)
 *   TotalAlloc         bytes ever allocated;  Mallocs, Frees: counts
 *   HeapObjects        Mallocs - Frees
 *   HeapSys, HeapIdle, HeapInuse, HeapReleased
 *                      the allocator's own figures, from the allocator cprof
 *                      forwards to: glibc mallinfo2, jemalloc mallctl "stats.*"
 *                      (after an "epoch" refresh), tcmalloc
 *                      MallocExtension_GetNumericProperty; found with dlsym in
 *                      that allocator's object, 0 when it has none of them
 *   Stack              thread stacks: bytes below each thread's stack pointer
 *                      to its mapping's top / the mappings' sizes
 *   BuckHashSys        the heap profile's stack records; OtherSys: the rest of
 *                      cprof's own memory
 *   Sys                HeapSys + StackSys + BuckHashSys + OtherSys
 *   GC fields, MSpan, MCache: 0 (no C meaning)
 * Called with the guard set (it allocates, reads /proc); not for signal
 * handlers; takes no cprof lock. */
#ifndef CPROF_MEMSTATS_H
#define CPROF_MEMSTATS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    uint64_t alloc, total_alloc, sys, mallocs, frees;
    uint64_t heap_sys, heap_idle, heap_inuse, heap_released, heap_objects;
    uint64_t stack_inuse, stack_sys, buck_hash_sys, other_sys;
    /* Not Go's: bytes the allocator holds that the program freed, resident
     * (jemalloc: resident - allocated - metadata; tcmalloc: its page heap's
     * and caches' free bytes; glibc: its free chunks), for the memory
     * profile (memprof.h). */
    uint64_t free_held;
} memstats_t;

void memstats_read(memstats_t *m);

/* Only the allocator's figures (heap_* and free_held): no /proc reads. */
void memstats_read_heap(memstats_t *m);

/* Writes the block, "\n# runtime.MemStats" to "# MaxRSS = N". */
void memstats_write(FILE *f, const memstats_t *m);

#endif
