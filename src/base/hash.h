/* hash.h — the hash functions every part of cprof shares (base).
 * All of them are pure arithmetic: async-signal-safe, usable in the
 * runtime's hooks and signal handlers. */
#ifndef CPROF_BASE_HASH_H
#define CPROF_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 bits, of n bytes. */
static inline uint64_t hash_fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* A stack of n return addresses (the runtime's stack tables), folded from
 * the outermost frame inward: a stack's hash extends the hash of its
 * callers' part, which cfi.c keeps from one stack to the next. */
#define HASH_PCS_SEED 0x9e3779b97f4a7c15ull

/* The hash of a stack one frame deeper: pc called the part hashed in h. */
static inline uint64_t hash_pcs_step(uint64_t h, uintptr_t pc)
{
    h ^= pc;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    return h;
}

static inline uint64_t hash_pcs(const uintptr_t *pcs, size_t n)
{
    uint64_t h = HASH_PCS_SEED;
    while (n)
        h = hash_pcs_step(h, pcs[--n]);
    return h;
}

/* One 64-bit key, its bits spread (addresses, ids). */
static inline uint64_t hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

#endif
