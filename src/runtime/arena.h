/* arena.h — memory for the runtime's tables, mapped by cprof itself and
 * never taken from the profiled program's heap. Every byte mapped is
 * counted against one limit (CPROF_MEMORY_LIMIT); a request past it fails,
 * and the caller degrades (drops the sample and counts the drop).
 * Thread-safe; never calls malloc. */
#ifndef CPROF_ARENA_H
#define CPROF_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bump allocation of small, never-freed objects (stack buckets, per-thread
 * counters), zeroed, 16-byte aligned. NULL past the limit. */
void *arena_alloc(size_t size);

/* The same, aligned to align (a power of two, 16 to 4096): a type that
 * asks for more than 16 (a cache line against false sharing) gets it. */
void *arena_alloc_aligned(size_t size, size_t align);

/* Whole zeroed pages for a table that may later be released. */
void *arena_map(size_t size);
void arena_unmap(void *p, size_t size);

/* Bytes mapped now (every mapping counts in full, touched or not, so the
 * limit bounds the worst case), and the limit. */
/* Counts bytes mapped elsewhere (the private heap, ownheap.h) in the
 * profiler's memory, outside the limit: that memory is transient working
 * space, as large as the profile being written, and the limit must not
 * stop cprof from writing what its tables hold. Negative to give back. */
void arena_account(int64_t bytes);

/* The address ranges arena_map has mapped and not unmapped, for the leak
 * scan (leaks.h), whose conservative scan must not take cprof's tables
 * (the live map holds every sampled address) for the program's memory.
 * Copies at most max into out; returns the number of ranges, and false in
 * *complete if some mapping could not be recorded (more than the registry
 * holds). */
typedef struct {
    uintptr_t lo, hi;
} arena_range_t;
size_t arena_ranges(arena_range_t *out, size_t max, bool *complete);

uint64_t arena_bytes(void);
uint64_t arena_limit(void);
/* Sets the limit; the first call also registers the fork handlers that
 * hold the arena's locks across fork (the start, before any other
 * module's, so they are taken last). */
void arena_set_limit(uint64_t bytes);

#endif
