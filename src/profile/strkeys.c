/* strkeys.c — keys of a profile's strings (see strkeys.h). */
#include "strkeys.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/hslots.h"

struct strkeys {
    const profile_t *p;
    uint64_t *slots; /* the first index of each distinct string */
    size_t mask;
    uint32_t *keys;   /* p->n_strings */
    uint32_t next;    /* the next new key (strkeys_of) */
};

/* The slot of s (hash hv) in k's table: the full one holding an equal
 * string, else the empty one where it goes. */
static size_t find(const strkeys_t *k, const char *s, uint64_t hv)
{
    size_t h = hv & k->mask;
    for (uint64_t e; (e = k->slots[h]); h = (h + 1) & k->mask)
        if (hslots_same_hash(e, hv) && strcmp(k->p->strings[hslots_pos(e)], s) == 0)
            break;
    return h;
}

strkeys_t *strkeys_new(const profile_t *p)
{
    if (p->n_strings >= UINT32_MAX / 2)
        return NULL;
    strkeys_t *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    /* at most 3/4 full: short probes at 8 bytes a slot */
    size_t ns = 64;
    while (ns * 3 / 4 < p->n_strings + 1)
        ns *= 2;
    k->p = p;
    k->mask = ns - 1;
    k->next = (uint32_t)p->n_strings;
    k->slots = profile_calloc_written(ns, sizeof(*k->slots));
    k->keys = malloc((p->n_strings + 1) * sizeof(*k->keys));
    if (!k->slots || !k->keys) {
        strkeys_free(k);
        return NULL;
    }
    for (size_t i = 0; i < p->n_strings; i++) {
        const char *s = p->strings[i];
        uint64_t hv = hash_fnv1a(s, strlen(s));
        size_t h = find(k, s, hv);
        if (!k->slots[h])
            k->slots[h] = hslots_entry(hv, i);
        k->keys[i] = (uint32_t)hslots_pos(k->slots[h]);
    }
    return k;
}

const uint32_t *strkeys_keys(const strkeys_t *k)
{
    return k->keys;
}

uint32_t strkeys_of(strkeys_t *k, const char *s)
{
    size_t h = find(k, s, hash_fnv1a(s, strlen(s)));
    if (k->slots[h])
        return (uint32_t)hslots_pos(k->slots[h]);
    return k->next < UINT32_MAX ? k->next++ : UINT32_MAX;
}

void strkeys_free(strkeys_t *k)
{
    if (!k)
        return;
    free(k->slots);
    free(k->keys);
    free(k);
}

/* --- over a series ------------------------------------------------------------ */

struct strkeys_series {
    profile_t *dict;   /* every string keyed so far, interned: key = index */
    uint32_t *last;    /* the last profile's keys */
    size_t n_last;
};

strkeys_series_t *strkeys_series_new(void)
{
    strkeys_series_t *s = calloc(1, sizeof(*s));
    if (s && !(s->dict = profile_new())) {
        free(s);
        return NULL;
    }
    return s;
}

uint32_t *strkeys_series_add(strkeys_series_t *s, const profile_t *p)
{
    uint32_t *keys = malloc((p->n_strings + 1) * sizeof(*keys));
    for (size_t i = 0; keys && i < p->n_strings; i++) {
        if (i < s->n_last && strcmp(s->dict->strings[s->last[i]], p->strings[i]) == 0) {
            keys[i] = s->last[i];
            continue;
        }
        int64_t k = profile_intern(s->dict, p->strings[i]);
        if (k < 0 || k >= UINT32_MAX) {
            free(keys);
            keys = NULL;
            break;
        }
        keys[i] = (uint32_t)k;
    }
    uint32_t *l = keys ? realloc(s->last, (p->n_strings + 1) * sizeof(*l)) : NULL;
    if (l)
        memcpy(l, keys, p->n_strings * sizeof(*l));
    else
        free(s->last);
    s->last = l;
    s->n_last = l ? p->n_strings : 0;
    return keys;
}

void strkeys_series_free(strkeys_series_t *s)
{
    if (!s)
        return;
    profile_free(s->dict);
    free(s->last);
    free(s);
}
