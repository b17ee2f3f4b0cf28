/* pairtab.h — the (caller, callee) pairs of one pass of a large visual
 * graph's entropy order (graph.c's sort_entropy_parts): each pair's weight,
 * a sample's value added once per sample, in one 24-byte slot that a lookup
 * finds with one cache miss (an edge of the graph takes two: its hash slot,
 * then the edge), which the caller can prefetch ahead of the lookup, and the
 * pairs in the order they were first added, which the entropy sums follow.
 * Grows as pairs come (load at most 1/2). Not thread-safe; plain malloc. */
#ifndef CPROF_TOOL_PAIRTAB_H
#define CPROF_TOOL_PAIRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t key;   /* src << 32 | dst + 1; 0: a free slot */
    int64_t weight; /* sum of the values of the samples that hold the pair */
    uint32_t stamp; /* the last sample that added to weight */
} pairslot_t;

typedef struct {
    pairslot_t *slots;
    size_t mask;     /* slots - 1 (a power of 2) */
    uint32_t *order; /* order[i]: the slot of the i-th pair added */
    size_t n, cap;   /* pairs; room in order (slots / 2) */
} pairtab_t;

static inline uint64_t pairtab_hash(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* An empty table with room for cap pairs (at least 16). 0 or -ENOMEM. */
int pairtab_init(pairtab_t *t, size_t cap);
void pairtab_free(pairtab_t *t);
/* Empties t, keeping its room. */
void pairtab_clear(pairtab_t *t);

/* Adds val to the pair's weight unless sample `stamp` did already. 0 or
 * -ENOMEM. */
int pairtab_add(pairtab_t *t, uint32_t src, uint32_t dst, uint32_t stamp, int64_t val);

/* Starts loading the slot where the pair is, or would go. */
static inline void pairtab_prefetch(const pairtab_t *t, uint32_t src, uint32_t dst)
{
    __builtin_prefetch(&t->slots[pairtab_hash(src, dst) & t->mask], 1);
}

static inline uint32_t pairtab_src(const pairslot_t *s)
{
    return (uint32_t)(s->key >> 32);
}

static inline uint32_t pairtab_dst(const pairslot_t *s)
{
    return (uint32_t)s->key - 1;
}

#endif
