/* livemap.h — the sampled objects still alive: pointer -> (bucket, size),
 * so that a free of a sampled object is credited to its stack.
 *
 * free() calls livemap_maybe() on every pointer: one read of a counting
 * filter (2^18 one-byte counters, 256 KiB, one per page modulo 2^18) that is
 * zero for almost every pointer at the default rate, with no lock and no
 * write. Only a hit takes the lock (with one thread, only its count:
 * rt.h's rt_lock_hot) of one of 64 stripes (the pages sharing
 * a counter share a stripe), each an open-addressing table of 12-byte
 * slots (linear probing, backward-shift deletion) that grows by doubling,
 * in arena memory. The objects of one page share a stripe and sit in neighbouring
 * slots (livemap.c), so the table is read in the order the heap is. Sizes
 * are exact at every width (the live map is the only place a rate-1
 * object's size is kept).
 *
 * Removal happens before the real free, so an address can never be live
 * twice in the map. */
#ifndef CPROF_LIVEMAP_H
#define CPROF_LIVEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Objects of a custom heap (customheap.h) are keyed by their address with
 * this bit set: user-space addresses never have it (x86-64, arm64), so a
 * pool object at the start of its own sampled backing block (from malloc)
 * takes a key of its own, and free() of the block never finds it. The
 * filter indexes by page, so both share a counter: a free of the block may
 * look into the table for nothing, never miss. */
#define LIVEMAP_CUSTOM (1ull << 63)

#define LIVEMAP_FILTER_SLOTS (1u << 18)
/* Never NULL: a zeroed table until livemap_init. */
extern uint8_t *livemap_filter __attribute__((visibility("hidden")));

/* The filter counts live sampled objects per 4 KiB page, the page number
 * taken modulo 2^18 (pages 1 GiB apart share a counter): frees of blocks
 * in neighbouring pages, the common pattern, read the same cache line (64
 * pages, 256 KiB of heap), where hashing the page or the pointer would
 * miss the cache on almost every free (measured: 40% of the time of
 * cprof's free on xmllint). One byte a page, not four: frees at random
 * over a 16 MiB heap (bench/malloc_pair.sh random:1000) miss the first
 * level cache on the filter 5 times less often (cachegrind: 0.10 misses
 * per free, from 0.53). */
static inline uint8_t *livemap_filter_slot(const void *p)
{
    return &livemap_filter[((uintptr_t)p >> 12) & (LIVEMAP_FILTER_SLOTS - 1)];
}

static inline bool livemap_maybe(const void *p)
{
    return __atomic_load_n(livemap_filter_slot(p), __ATOMIC_RELAXED);
}

/* A counter that reaches 255 stays there: its pages are always "maybe",
 * which costs their frees a look into the table, never a missed free.
 * Called under the stripe lock of p, which every page sharing p's counter
 * shares (livemap.c stripe_of): a plain load and store, atomic only for
 * the readers without the lock. Each returns how much the sum of the
 * squares of the stripe's counters grows or shrinks (livemap.c
 * next_shift): 2v + 1 and 2v - 1 from v; past 255, where the count is
 * lost, each object counts as one in a page of 255, so the sum returns to
 * what it was when they are gone. */
static inline unsigned livemap_filter_add(const void *p)
{
    uint8_t *c = livemap_filter_slot(p);
    uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
    if (v == UINT8_MAX)
        return UINT8_MAX;
    __atomic_store_n(c, v + 1, __ATOMIC_RELAXED);
    return 2u * v + 1;
}

static inline unsigned livemap_filter_remove(const void *p)
{
    uint8_t *c = livemap_filter_slot(p);
    uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
    if (v == UINT8_MAX)
        return UINT8_MAX;
    __atomic_store_n(c, v - 1, __ATOMIC_RELAXED);
    return 2u * v - 1;
}

int livemap_init(void);

/* Records p. Returns 1 when done, 0 when p was already there (its old
 * value is put in *old and replaced), -1 when the table is full. */
int livemap_insert(const void *p, uint32_t bucket, uint64_t size, uint32_t *old_bucket,
                   uint64_t *old_size);

/* Starts loading the cache line of p's slot, for a livemap_insert of p a
 * while later. No lock: a table that grows meanwhile costs only a
 * useless load. */
void livemap_prefetch(const void *p);

/* Removes p; false if it was not recorded. */
bool livemap_remove(const void *p, uint32_t *bucket, uint64_t *size);

uint64_t livemap_count(void);

/* The unit, log2 bytes, in which p's offset in its page places it in its
 * page's window in its stripe's table (livemap.c next_shift), 0 before the
 * stripe has a table. For tests. */
unsigned livemap_unit_shift(const void *p);

/* Holds every stripe (around fork, and for the leak scan: no sampled
 * object is recorded or freed meanwhile), and lets go again. */
void livemap_lock_all(void);
void livemap_unlock_all(void);

/* With every stripe held: copies up to max live objects into out, the
 * custom-heap objects (LIVEMAP_CUSTOM) with their address and custom set;
 * returns how many. */
typedef struct {
    uintptr_t addr;  /* without LIVEMAP_CUSTOM */
    uint64_t size;   /* bytes the program asked for */
    uint32_t bucket;
    bool custom;     /* a custom heap's object, inside memory another holds */
} livemap_entry_t;
size_t livemap_copy_locked(livemap_entry_t *out, size_t max);

/* Sorts a copy by address, a malloc block before a custom-heap object at
 * its address: measured in that order, pagemap.h reads each window of the
 * heap once. */
void livemap_sort_copy(livemap_entry_t *e, size_t n);

#endif
