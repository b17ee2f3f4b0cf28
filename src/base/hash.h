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

/* A stack of n return addresses (the runtime's stack tables). */
static inline uint64_t hash_pcs(const uintptr_t *pcs, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
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
