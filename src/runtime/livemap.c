/* livemap.c — live sampled objects (see livemap.h). */
#include "livemap.h"

#include "arena.h"
#include "rt.h"

#include <errno.h>
#include <stdlib.h>

#define STRIPE_BITS 6
#define NSTRIPES (1 << STRIPE_BITS)
#define INITIAL_SLOTS 256

typedef struct {
    uintptr_t key; /* 0 = empty */
    uint64_t val;
} entry_t;

typedef struct {
    rt_lock_t lock;
    entry_t *slots;
    uint64_t mask; /* slots - 1 */
    uint64_t count;
} __attribute__((aligned(64))) stripe_t;

uint8_t *livemap_filter;
static stripe_t stripes[NSTRIPES];

int livemap_init(void)
{
    if (!livemap_filter) {
        uint8_t *f = arena_map(LIVEMAP_FILTER_SLOTS * sizeof(*f));
        if (!f)
            return -ENOMEM;
        __atomic_store_n(&livemap_filter, f, __ATOMIC_RELEASE);
    }
    return 0;
}

/* Where a key lives. The product of its 4 KiB page number and 2^64/phi
 * (Fibonacci hashing) gives, in its top bits, the stripe and then the start
 * of the page's window in the stripe's table; the offset in the page, in
 * 16-byte units, gives the place in the window. Objects of one page, which
 * a program mostly allocates and frees together, then sit in neighbouring
 * slots: a run of inserts or removes touches a few cache lines and one TLB
 * page of the table, where hashing each pointer missed both on nearly
 * every call (livemap_insert and livemap_remove were 48% of xmllint's run
 * at rate 1). Fibonacci hashing spreads consecutive pages, a heap's usual
 * shape, evenly over the table, so the windows of neighbouring pages
 * rarely overlap: measured at rate 1 with tables at most half full, 0.35
 * extra probes per insert on python3 and 0.4 on xmllint, where a
 * general-purpose mixer of the page gave 15 and 3 (overlapping windows
 * merge into long runs). */
static uint64_t page_hash(uintptr_t key)
{
    return (uint64_t)(key >> 12) * 0x9e3779b97f4a7c15ull;
}

static stripe_t *stripe_of(uintptr_t key)
{
    return &stripes[page_hash(key) >> (64 - STRIPE_BITS)];
}

/* mask + 1 is a power of two, at most 2^(64 - STRIPE_BITS) slots. */
static uint64_t slot_of(uintptr_t key, uint64_t mask)
{
    int bits = __builtin_ctzll(mask + 1);
    uint64_t window = (page_hash(key) << STRIPE_BITS) >> (64 - bits);
    return (window + ((key & 0xfff) >> 4)) & mask;
}

static void put(entry_t *slots, uint64_t mask, uintptr_t key, uint64_t val)
{
    uint64_t i = slot_of(key, mask);
    while (slots[i].key)
        i = (i + 1) & mask;
    slots[i] = (entry_t){key, val};
}

/* Doubles the stripe's table (or makes the first one). Lock held. */
static bool grow_locked(stripe_t *s)
{
    uint64_t nslots = s->slots ? (s->mask + 1) * 2 : INITIAL_SLOTS;
    entry_t *n = arena_map(nslots * sizeof(entry_t));
    if (!n)
        return false;
    /* Each page written first, not read: a probe's read of an untouched
     * page maps the shared zero page, and the first insert there then
     * replaces it, which flushes the TLB of every CPU running another of
     * the program's threads (an interrupt each: 12% of a two-thread
     * program's run at rate 1, perf, bench/workloads/mtindex.c). Slots
     * spread over the whole table, so every page is soon used anyway. */
    for (size_t off = 0; off < nslots * sizeof(entry_t); off += 4096)
        ((volatile char *)n)[off] = 0;
    if (s->slots) {
        for (uint64_t i = 0; i <= s->mask; i++)
            if (s->slots[i].key)
                put(n, nslots - 1, s->slots[i].key, s->slots[i].val);
        arena_unmap(s->slots, (s->mask + 1) * sizeof(entry_t));
    }
    /* Atomic: livemap_prefetch reads them without the lock. */
    __atomic_store_n(&s->slots, n, __ATOMIC_RELAXED);
    __atomic_store_n(&s->mask, nslots - 1, __ATOMIC_RELAXED);
    return true;
}

void livemap_prefetch(const void *p)
{
    stripe_t *s = stripe_of((uintptr_t)p);
    uintptr_t slots = (uintptr_t)__atomic_load_n(&s->slots, __ATOMIC_RELAXED);
    uint64_t mask = __atomic_load_n(&s->mask, __ATOMIC_RELAXED);
    if (slots) /* a prefetch never faults, even if the table is gone */
        __builtin_prefetch((const void *)(slots + slot_of((uintptr_t)p, mask) * sizeof(entry_t)), 1);
}

int livemap_insert(const void *p, uint32_t bucket, uint64_t size, uint32_t *old_bucket,
                   uint64_t *old_size)
{
    stripe_t *s = stripe_of((uintptr_t)p);
    uint64_t val = (uint64_t)bucket << LIVE_SIZE_BITS | (size > LIVE_SIZE_MAX ? LIVE_SIZE_MAX : size);
    int rc = 1;
    rt_lock(&s->lock);
    /* Up to 7/8 full: with a page's objects in one window, probes stay
     * short (measured at rate 1: 1.5 extra probes per insert on xmllint,
     * 6.6 on python3, in neighbouring lines), and the table, most of
     * cprof's memory at rate 1, often half what it is at 1/2 (peak RSS of
     * xmllint 272 -> 240 MB, of Debian's python3 104 -> 88 MB). */
    if ((!s->slots || (s->count + 1) * 8 > (s->mask + 1) * 7) && !grow_locked(s)) {
        rt_unlock(&s->lock);
        return -1;
    }
    uint64_t i = slot_of((uintptr_t)p, s->mask);
    for (; s->slots[i].key; i = (i + 1) & s->mask) {
        if (s->slots[i].key == (uintptr_t)p) {
            /* Freed behind cprof's back (an unhooked path): replace. */
            *old_bucket = (uint32_t)(s->slots[i].val >> LIVE_SIZE_BITS);
            *old_size = s->slots[i].val & LIVE_SIZE_MAX;
            rc = 0;
            break;
        }
    }
    if (rc)
        s->count++;
    s->slots[i] = (entry_t){(uintptr_t)p, val};
    if (rc)
        livemap_filter_add(p);
    rt_unlock(&s->lock);
    return rc;
}

bool livemap_remove(const void *p, uint32_t *bucket, uint64_t *size)
{
    stripe_t *s = stripe_of((uintptr_t)p);
    rt_lock(&s->lock);
    if (!s->slots) {
        rt_unlock(&s->lock);
        return false;
    }
    uint64_t i = slot_of((uintptr_t)p, s->mask);
    for (; s->slots[i].key != (uintptr_t)p; i = (i + 1) & s->mask) {
        if (!s->slots[i].key) {
            rt_unlock(&s->lock);
            return false;
        }
    }
    *bucket = (uint32_t)(s->slots[i].val >> LIVE_SIZE_BITS);
    *size = s->slots[i].val & LIVE_SIZE_MAX;
    /* Backward-shift deletion: pull later entries of the probe run into
     * the hole, so lookups never need tombstones. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & s->mask; s->slots[j].key; j = (j + 1) & s->mask) {
        uint64_t home = slot_of(s->slots[j].key, s->mask);
        /* Move j into the hole unless its home lies cyclically in (hole, j]. */
        bool home_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_between) {
            s->slots[hole] = s->slots[j];
            hole = j;
        }
    }
    s->slots[hole].key = 0;
    s->count--;
    livemap_filter_remove(p);
    rt_unlock(&s->lock);
    return true;
}

uint64_t livemap_count(void)
{
    uint64_t n = 0;
    for (int i = 0; i < NSTRIPES; i++)
        n += __atomic_load_n(&stripes[i].count, __ATOMIC_RELAXED);
    return n;
}

size_t livemap_copy_locked(livemap_entry_t *out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < NSTRIPES; i++) {
        const stripe_t *s = &stripes[i];
        for (uint64_t j = 0; s->slots && j <= s->mask && n < max; j++)
            if (s->slots[j].key)
                out[n++] = (livemap_entry_t){s->slots[j].key & ~LIVEMAP_CUSTOM,
                                             s->slots[j].val & LIVE_SIZE_MAX,
                                             (uint32_t)(s->slots[j].val >> LIVE_SIZE_BITS),
                                             (s->slots[j].key & LIVEMAP_CUSTOM) != 0};
    }
    return n;
}

/* A block before a custom object at its address: the block holds it. */
static int by_addr(const void *a, const void *b)
{
    const livemap_entry_t *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (int)x->custom - (int)y->custom;
}

void livemap_sort_copy(livemap_entry_t *e, size_t n)
{
    qsort(e, n, sizeof(*e), by_addr);
}

void livemap_lock_all(void)
{
    for (int i = 0; i < NSTRIPES; i++)
        rt_lock(&stripes[i].lock);
}

void livemap_unlock_all(void)
{
    for (int i = 0; i < NSTRIPES; i++)
        rt_unlock(&stripes[i].lock);
}
