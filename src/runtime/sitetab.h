/* sitetab.h — small tables of distinct stacks, each with two counters, for
 * the profiles other than the heap's: mutex and block (contentions,
 * delay) and threadcreate (live threads). The heap's bucket table
 * (buckets.h) stays its own: these tables never add to its counts.
 *
 * Memory comes from the arena (arena.h), mapped when a table is first used;
 * entries are never freed. Lookups are lock-free over append-only hash
 * chains; inserts take the table's rt_lock and publish with release stores
 * (no call out while it is held). When the table is full (its entry bound,
 * or CPROF_MEMORY_LIMIT), stacks count into one overflow entry whose single
 * frame is cprof_stack_table_full, as in the heap profile. Not for signal
 * handlers (the insert takes a lock). */
#ifndef CPROF_SITETAB_H
#define CPROF_SITETAB_H

#include "rt.h"

#include <stdint.h>

typedef struct site {
    int64_t v[2];               /* counters, atomically updated; meaning per table */
    struct site *chain;       /* next in the hash chain */
    struct site *next_all;    /* next older entry, for iteration */
    uint64_t hash;
    uint32_t depth;
    uint32_t labels;            /* label set id (labels.h), part of the key */
    uintptr_t pcs[];            /* return addresses, leaf first */
} site_t;

typedef struct {
    site_t **heads;           /* SITETAB_HEADS chains, mapped on first use */
    site_t *all;              /* newest entry first, published with release */
    site_t *overflow;
    uint32_t count, max;        /* entries made, and the bound */
    rt_lock_t lock;             /* inserts */
} sitetab_t;

#define SITETAB_INIT(max_entries) {.max = (max_entries), .lock = RT_LOCK_INIT}

/* The entry of this stack and label set (0: none), made if new; the
 * overflow entry (no labels) when the table is full; NULL only when not
 * even that can be mapped. */
site_t *sitetab_intern_labeled(sitetab_t *t, const uintptr_t *pcs, int depth, uint32_t labels);

static inline site_t *sitetab_intern(sitetab_t *t, const uintptr_t *pcs, int depth)
{
    return sitetab_intern_labeled(t, pcs, depth, 0);
}

/* The newest entry (then follow next_all with acquire loads), or NULL. */
static inline site_t *sitetab_first(sitetab_t *t)
{
    return __atomic_load_n(&t->all, __ATOMIC_ACQUIRE);
}

static inline site_t *sitetab_next(const site_t *e)
{
    return __atomic_load_n(&e->next_all, __ATOMIC_ACQUIRE);
}

/* Zeroes every counter (a fork child starting afresh). */
void sitetab_reset(sitetab_t *t);

/* fork: hold / release the insert lock around fork(). */
void sitetab_fork_prepare(sitetab_t *t);
void sitetab_fork_release(sitetab_t *t);

#endif
