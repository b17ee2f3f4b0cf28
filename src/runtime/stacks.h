/* stacks.h — capturing the stack of a sampled allocation, and the table of
 * distinct stacks ("buckets") with their alloc/free counters.
 *
 * Capture: libunwind (default) or a frame-pointer walk (CPROF_UNWIND=fp),
 * with cprof's own frames and the C++ operator new frames removed, so the
 * leaf is the program's allocating function. PCs are stored as return
 * addresses; the writer subtracts 1 to name the call site.
 *
 * Table: lookups are lock-free over append-only hash chains; inserts take
 * one lock and publish with release stores. A bucket is never freed. When
 * the table is full (CPROF_MEMORY_LIMIT or 2^20 stacks), samples count into
 * one overflow bucket, whose single frame is the function
 * cprof_stack_table_full, so reports say what happened. */
#ifndef CPROF_STACKS_H
#define CPROF_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#define STACKS_MAX_DEPTH 256

typedef struct bucket {
    /* atomically updated; bytes are the sizes the program asked for */
    uint64_t alloc_objects, alloc_bytes, free_objects, free_bytes;
    /* freed by the allocating thread before it allocated again (heap.c) */
    uint64_t temp_objects, temp_bytes;
    /* the four counters above as they were at the heap's last high, valid
     * when peak_epoch is the current epoch (peak.h) */
    uint64_t peak_epoch;
    uint64_t peak_alloc_objects, peak_alloc_bytes, peak_free_objects, peak_free_bytes;
    struct bucket *chain; /* next in the hash chain */
    uint64_t hash;
    uint32_t index;       /* position in the table, for the live map */
    uint32_t depth;
    uintptr_t pcs[];      /* return addresses, leaf first */
} bucket_t;

enum { UNWIND_LIBUNWIND, UNWIND_FP };

/* Maps the tables and learns which code to skip. 0 or -ENOMEM. */
int stacks_init(int unwinder, int max_depth);

/* Captures the caller's stack into pcs (up to the configured depth) with
 * cprof's frames removed; returns the depth. */
int stacks_capture(uintptr_t *pcs);

/* The bucket of this stack, created if new; the overflow bucket when the
 * table is full. Never NULL after a successful stacks_init. */
bucket_t *stacks_intern(const uintptr_t *pcs, int depth);

/* The hash of a stack, for the tables keyed by stacks (here and stktab.h). */
static inline uint64_t stacks_hash(const uintptr_t *pcs, int depth)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)depth;
    for (int i = 0; i < depth; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

uint32_t stacks_count(void);
bucket_t *stacks_get(uint32_t index);

/* fork: hold / release the insert lock around fork(). */
void stacks_fork_prepare(void);
void stacks_fork_release(void);

#endif
