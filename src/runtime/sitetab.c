/* sitetab.c — tables of stacks with two counters (see sitetab.h). */
#include "sitetab.h"

#include "arena.h"
#include "buckets.h"

#include "base/hash.h"

#include <string.h>

#define SITETAB_HEADS (1u << 12)

/* buckets.c: the one frame of an overflow entry. */
void cprof_stack_table_full(void);

static site_t *find(site_t *e, uint64_t h, const uintptr_t *pcs, int depth, uint32_t labels)
{
    for (; e; e = __atomic_load_n(&e->chain, __ATOMIC_ACQUIRE))
        if (e->hash == h && e->depth == (uint32_t)depth && e->labels == labels &&
            memcmp(e->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0)
            return e;
    return NULL;
}

/* Links a new entry into the iteration list (lock held). */
static void publish_locked(sitetab_t *t, site_t *e)
{
    e->next_all = t->all;
    __atomic_store_n(&t->all, e, __ATOMIC_RELEASE);
}

site_t *sitetab_intern_labeled(sitetab_t *t, const uintptr_t *pcs, int depth, uint32_t labels)
{
    uint64_t h = hash_pcs(pcs, (size_t)depth);
    if (labels)
        h = hash_pcs_step(h, labels);
    site_t **heads = __atomic_load_n(&t->heads, __ATOMIC_ACQUIRE);
    site_t *e;
    if (heads && (e = find(__atomic_load_n(&heads[h & (SITETAB_HEADS - 1)], __ATOMIC_ACQUIRE), h,
                           pcs, depth, labels)))
        return e;
    rt_lock(&t->lock);
    if (!t->heads)
        __atomic_store_n(&t->heads, arena_map(SITETAB_HEADS * sizeof(*heads)), __ATOMIC_RELEASE);
    heads = t->heads;
    e = NULL;
    if (heads) {
        site_t **head = &heads[h & (SITETAB_HEADS - 1)];
        site_t *first = *head;
        e = find(first, h, pcs, depth, labels);
        if (!e && t->count < t->max &&
            (e = arena_alloc(sizeof(*e) + (size_t)depth * sizeof(uintptr_t)))) {
            e->hash = h;
            e->depth = (uint32_t)depth;
            e->labels = labels;
            memcpy(e->pcs, pcs, (size_t)depth * sizeof(*pcs));
            e->chain = first;
            t->count++;
            publish_locked(t, e);
            __atomic_store_n(head, e, __ATOMIC_RELEASE);
        }
    }
    if (!e) {
        if (!t->overflow && (t->overflow = arena_alloc(sizeof(*e) + sizeof(uintptr_t)))) {
            /* +1: writers name pc-1, which must stay inside the function. */
            t->overflow->pcs[0] = (uintptr_t)cprof_stack_table_full + 1;
            t->overflow->depth = 1;
            publish_locked(t, t->overflow);
        }
        e = t->overflow;
    }
    rt_unlock(&t->lock);
    return e;
}

void sitetab_reset(sitetab_t *t)
{
    for (site_t *e = sitetab_first(t); e; e = sitetab_next(e)) {
        __atomic_store_n(&e->v[0], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->v[1], 0, __ATOMIC_RELAXED);
    }
}

void sitetab_fork_prepare(sitetab_t *t)
{
    rt_lock(&t->lock);
}

void sitetab_fork_release(sitetab_t *t)
{
    rt_unlock(&t->lock);
}
