/* pairtab.c — the pair table of the entropy order's passes. */
#include "tool/graph/pairtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* key of a pair: dst + 1 so that no pair's key is 0 (node indexes stay
 * below UINT32_MAX) */
static inline uint64_t pair_key(uint32_t src, uint32_t dst)
{
    return (uint64_t)src << 32 | (uint32_t)(dst + 1);
}

static int resize(pairtab_t *t, size_t cap)
{
    size_t nslots = 32;
    while (nslots / 2 < cap)
        nslots *= 2;
    pairslot_t *slots = calloc(nslots, sizeof(*slots));
    uint32_t *order = malloc((nslots / 2) * sizeof(*order));
    if (!slots || !order || nslots - 1 > UINT32_MAX) {
        free(slots);
        free(order);
        return -ENOMEM;
    }
    /* the pairs move in the order they were added, which order keeps */
    for (size_t i = 0; i < t->n; i++) {
        const pairslot_t *s = &t->slots[t->order[i]];
        size_t h = pairtab_hash(pairtab_src(s), pairtab_dst(s)) & (nslots - 1);
        while (slots[h].key)
            h = (h + 1) & (nslots - 1);
        slots[h] = *s;
        order[i] = (uint32_t)h;
    }
    free(t->slots);
    free(t->order);
    t->slots = slots;
    t->order = order;
    t->mask = nslots - 1;
    t->cap = nslots / 2;
    return 0;
}

int pairtab_init(pairtab_t *t, size_t cap)
{
    memset(t, 0, sizeof(*t));
    return resize(t, cap < 16 ? 16 : cap);
}

void pairtab_free(pairtab_t *t)
{
    free(t->slots);
    free(t->order);
    memset(t, 0, sizeof(*t));
}

void pairtab_clear(pairtab_t *t)
{
    memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
    t->n = 0;
}

int pairtab_add(pairtab_t *t, uint32_t src, uint32_t dst, uint32_t stamp, int64_t val)
{
    const uint64_t key = pair_key(src, dst);
    size_t h = pairtab_hash(src, dst) & t->mask;
    for (; t->slots[h].key; h = (h + 1) & t->mask) {
        pairslot_t *s = &t->slots[h];
        if (s->key == key) {
            if (s->stamp != stamp) {
                s->stamp = stamp;
                s->weight += val;
            }
            return 0;
        }
    }
    if (t->n == t->cap) {
        if (resize(t, t->cap * 2) < 0)
            return -ENOMEM;
        return pairtab_add(t, src, dst, stamp, val);
    }
    t->slots[h] = (pairslot_t){key, val, stamp};
    t->order[t->n++] = (uint32_t)h;
    return 0;
}
