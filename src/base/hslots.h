/* hslots.h — open-addressing tables of 64-bit slots that keep a hash
 * beside a position (base): the hash's low half in the slot's high half,
 * position + 1 in its low half (0: empty). A probe compares hashes
 * without loading the element, and a table grows from its slots alone.
 * Used by the profile's intern table, the merge's tables and the graph's
 * node index. */
#ifndef CPROF_BASE_HSLOTS_H
#define CPROF_BASE_HSLOTS_H

#include <stddef.h>
#include <stdint.h>

/* Remakes *slots (NULL: none yet; else *mask + 1 slots) as nslots slots
 * (a power of two), each full slot placed again by its stored hash with
 * linear probing. 0, or -ENOMEM with the table as it was. */
int hslots_resize(uint64_t **slots, size_t *mask, size_t nslots);

#endif
