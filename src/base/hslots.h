/* hslots.h — open-addressing tables of 64-bit slots that keep a hash
 * beside a position (base): the hash's low half in the slot's high half,
 * position + 1 in its low half (0: empty). A probe compares hashes
 * without loading the element, and a table grows from its slots alone.
 * Used by the profile's intern table, the merge's tables and the graph's
 * node index. */
#ifndef CPROF_BASE_HSLOTS_H
#define CPROF_BASE_HSLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A slot for position pos with hash hv. */
static inline uint64_t hslots_entry(uint64_t hv, size_t pos)
{
    return (uint64_t)(uint32_t)hv << 32 | ((uint64_t)pos + 1);
}

/* Whether full slot e was made with hash hv (its low half). */
static inline bool hslots_same_hash(uint64_t e, uint64_t hv)
{
    return (uint32_t)(e >> 32) == (uint32_t)hv;
}

/* The position full slot e holds. */
static inline size_t hslots_pos(uint64_t e)
{
    return (size_t)(uint32_t)e - 1;
}

/* Remakes *slots (NULL: none yet; else *mask + 1 slots) as nslots slots
 * (a power of two), each full slot placed again by its stored hash with
 * linear probing. 0, or -ENOMEM with the table as it was. */
int hslots_resize(uint64_t **slots, size_t *mask, size_t nslots);

#endif
