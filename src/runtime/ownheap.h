/* ownheap.h — cprof's private heap: what cprof allocates for its own work
 * (building and compressing profiles, its threads, libraries it loads)
 * never comes from the program's allocator.
 *
 * Why: the program's heap is the thing being measured, and touching it has
 * side effects. Writing a profile at exit with glibc's malloc made glibc
 * consolidate the whole freed heap of the program (a 200 MB walk for
 * xmllint: its profiled run took 1.9x its plain one).
 *
 * Which allocations come here: those made while a thread is in cprof's work
 * (rt_guard_enter, rt.h: rt_self.own), not those the next allocator makes
 * while cprof forwards to it. free/realloc/malloc_usable_size recognize a
 * block of this heap by its address alone (one compare), whoever frees it.
 *
 * Layout: one reserved range of address space (64 GiB; under an address-
 * space limit, ulimit -v, an eighth of it, and less if the kernel refuses,
 * down to 4 MiB; when that runs out, cprof's work fails with one message and
 * the program is untouched), committed as the heap
 * grows, counted in the profiler's memory (arena.h) but outside its limit:
 * it is working space for writing what the bounded tables hold. Blocks are power-of-two classes with free lists under one lock;
 * large free blocks give their pages back. Nothing here calls malloc. */
#ifndef CPROF_OWNHEAP_H
#define CPROF_OWNHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* hidden: the hooks read them with one instruction, not through the GOT */
extern uintptr_t ownheap_base __attribute__((visibility("hidden"))); /* 0 until first use */
extern size_t ownheap_size __attribute__((visibility("hidden")));    /* bytes reserved */

static inline bool ownheap_contains(const void *p)
{
    /* size 0 until the reservation is published (size after base) */
    size_t n = __atomic_load_n(&ownheap_size, __ATOMIC_ACQUIRE);
    return (uintptr_t)p - __atomic_load_n(&ownheap_base, __ATOMIC_RELAXED) < n;
}

void *ownheap_malloc(size_t size);
void *ownheap_calloc(size_t n, size_t size);
void *ownheap_realloc(void *p, size_t size);
void *ownheap_memalign(size_t align, size_t size);
void ownheap_free(void *p);
size_t ownheap_usable(const void *p);

#endif
