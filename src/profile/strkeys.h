/* strkeys.h — a key for each string of a profile: the index of its first
 * equal string (strcmp), so equal strings share one key and different ones
 * do not. Made where a merge does not run (a second thread), the keys let
 * profile_merge_keyed map the profile's strings without hashing one.
 *
 * One table of 8-byte slots (hash beside index, base/hslots.h) at most
 * three quarters full, sized once: ~10.7 bytes a string with the keys.
 * Threads: a strkeys_t is its maker's; it reads p's strings, which must
 * not change meanwhile. */
#ifndef CPROF_PROFILE_STRKEYS_H
#define CPROF_PROFILE_STRKEYS_H

#include <stdint.h>

#include "profile.h"

typedef struct strkeys strkeys_t;

/* The keys of p's strings; NULL on OOM. */
strkeys_t *strkeys_new(const profile_t *p);

/* keys[i]: the key of p's i-th string. */
const uint32_t *strkeys_keys(const strkeys_t *k);

/* The key of s: that of p's equal string, else a new key (each call with a
 * string p lacks makes another: give such strings once each). UINT32_MAX
 * when the keys run out. */
uint32_t strkeys_of(strkeys_t *k, const char *s);

void strkeys_free(strkeys_t *k);

/* Keys over a series of profiles (profile_merger_add_keyed's): each
 * string's index in a table of every string of the profiles keyed so far.
 * A series' snapshots mostly repeat the last one's table, string for
 * string: the i-th string's key is first guessed to be the last
 * profile's i-th, checked with one compare, and looked up only when the
 * string is another. Threads: its maker's. */
typedef struct strkeys_series strkeys_series_t;

strkeys_series_t *strkeys_series_new(void);

/* The keys of p's strings (n_strings of them, malloc'd: the caller's), or
 * NULL on OOM. */
uint32_t *strkeys_series_add(strkeys_series_t *s, const profile_t *p);

void strkeys_series_free(strkeys_series_t *s);

#endif
