/* profile.c — storage of the in-memory profile: growable element arrays,
 * a chunk allocator for the small per-sample arrays, the string intern
 * table, and the id indexes. */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/hash.h"
#include "base/hslots.h"
#include "base/pages.h"
#include "base/path.h"

/* Small arrays (sample stacks, values, labels, location lines, strings) come
 * from chunks so that a 200,000-sample profile costs a few hundred mallocs,
 * not a million. */
struct profile_chunk {
    struct profile_chunk *next;
    size_t used, size;
    max_align_t data[];
};

#define CHUNK_SIZE (256u << 10)
/* Mapping a large profile's new chunks written at once (pages_populate,
 * from each kind's second chunk on) against the page faults of its
 * copies (11% of strings -svg's samples) measured no faster: perf
 * samples of all threads, 6 interleaved runs at load 1-3, median 1,771
 * without, 1,859 with. Not done. */

/* size bytes aligned to align (a power of two up to max_align_t's): each
 * kind only as aligned as it needs, so that strings (the most numerous)
 * are packed, not each padded to 16 bytes. */
static void *chunk_alloc(struct profile_chunk **list, struct profile_chunk **spare, size_t size,
                         size_t align)
{
    struct profile_chunk *c = *list;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->size || c->size - at < size) {
        size_t sz = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        if (sz == CHUNK_SIZE && *spare) { /* profile_clear's */
            c = *spare;
            *spare = c->next;
        } else if (!(c = malloc(sizeof(*c) + sz))) {
            return NULL;
        }
        c->used = 0;
        c->size = sz;
        /* A big one-off block goes behind the current chunk so the current
         * chunk's free space is not lost. */
        if (*list && sz > CHUNK_SIZE) {
            c->next = (*list)->next;
            (*list)->next = c;
        } else {
            c->next = *list;
            *list = c;
        }
        at = 0;
    }
    c->used = at;
    void *r = (char *)c->data + c->used;
    c->used += size;
    return r;
}

static void chunks_free(struct profile_chunk *c)
{
    for (struct profile_chunk *n; c; c = n) {
        n = c->next;
        free(c);
    }
}

/* Puts the chunks of from behind the current chunk of *to, which goes on
 * serving allocations. */
static void chunks_take(struct profile_chunk **to, struct profile_chunk **from)
{
    struct profile_chunk *tail = *from;
    if (!tail)
        return;
    while (tail->next)
        tail = tail->next;
    if (*to) {
        tail->next = (*to)->next;
        (*to)->next = *from;
    } else {
        *to = *from;
    }
    *from = NULL;
}

void *profile_alloc(profile_t *p, size_t size)
{
    return chunk_alloc(&p->chunks, &p->spare_chunks, size, sizeof(max_align_t));
}

/* Storage for a string of len bytes and its NUL: byte-aligned. */
static char *alloc_str(profile_t *p, size_t len)
{
    return chunk_alloc(&p->chunks, &p->spare_chunks, len + 1, 1);
}

uint64_t *profile_alloc_stack(profile_t *p, const uint64_t *ids, size_t n)
{
    uint64_t *s = n ? chunk_alloc(&p->stack_chunks, &p->spare_chunks, n * sizeof(*s), _Alignof(uint64_t)) : NULL;
    if (s && ids)
        memcpy(s, ids, n * sizeof(*s));
    return s;
}

profile_line_t *profile_alloc_lines(profile_t *p, const profile_line_t *lines, size_t n)
{
    profile_line_t *l = n ? chunk_alloc(&p->line_chunks, &p->spare_chunks,
                                             n * sizeof(*l), _Alignof(profile_line_t)) : NULL;
    if (l && lines)
        memcpy(l, lines, n * sizeof(*l));
    else if (l)
        memset(l, 0, n * sizeof(*l));
    return l;
}

void profile_drop_stacks(profile_t *p)
{
    for (size_t i = 0; i < p->n_samples; i++) {
        p->samples[i].location_ids = NULL;
        p->samples[i].n_location_ids = 0;
    }
    chunks_free(p->stack_chunks);
    p->stack_chunks = NULL;
}

void profile_drop_lines(profile_t *p)
{
    for (size_t i = 0; i < p->n_locations; i++) {
        p->locations[i].lines = NULL;
        p->locations[i].n_lines = 0;
    }
    chunks_free(p->line_chunks);
    p->line_chunks = NULL;
    free(p->functions);
    free(p->fn_index);
    free(p->fn_sparse);
    p->functions = NULL;
    p->fn_index = NULL;
    p->fn_sparse = NULL;
    p->n_functions = p->cap_functions = p->n_fn_index = p->n_fn_sparse = 0;
}

void profile_drop_locations(profile_t *p)
{
    free(p->locations);
    free(p->functions);
    free(p->loc_index);
    free(p->fn_index);
    free(p->loc_sparse);
    free(p->fn_sparse);
    p->locations = NULL;
    p->functions = NULL;
    p->loc_index = p->fn_index = NULL;
    p->loc_sparse = p->fn_sparse = NULL;
    p->n_locations = p->n_functions = 0;
    p->cap_locations = p->cap_functions = 0;
    p->n_loc_index = p->n_fn_index = 0;
    p->n_loc_sparse = p->n_fn_sparse = 0;
    chunks_free(p->line_chunks);
    p->line_chunks = NULL;
}

void profile_take_storage(profile_t *p, profile_t *from)
{
    chunks_take(&p->chunks, &from->chunks);
    chunks_take(&p->stack_chunks, &from->stack_chunks);
    chunks_take(&p->line_chunks, &from->line_chunks);
}

static void *dup_into(profile_t *p, const void *src, size_t size)
{
    if (size == 0)
        return NULL;
    void *d = profile_alloc(p, size);
    if (d && src)
        memcpy(d, src, size);
    else if (d)
        memset(d, 0, size);
    return d;
}

/* --- string table ---------------------------------------------------------- */

/* Each slot holds a string's index + 1 (low half; 0: empty) and the low
 * half of its hash (high half): a probe skips the strings of other hashes
 * without loading them, and the table grows without hashing any string
 * again (it has fewer than 2^32 slots: the stored half places it). */
struct profile_strtab {
    uint64_t *slots; /* NULL: not built (profile_defer_intern), built at
                      * the first intern */
    size_t mask;
};

/* A table of nslots (a power of two) for p's strings, hashed. */
static int strtab_rehash(profile_t *p, size_t nslots)
{
    uint64_t *slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < p->n_strings; i++) {
        uint64_t hv = hash_fnv1a(p->strings[i], strlen(p->strings[i]));
        size_t h = hv & (nslots - 1);
        /* One slot per distinct string (the first index): a decoded table
         * may repeat a string many times, and equal strings share a probe
         * chain, so slots for repeats would make inserts quadratic. */
        bool dup = false;
        for (; slots[h]; h = (h + 1) & (nslots - 1))
            if (hslots_same_hash(slots[h], hv) &&
                strcmp(p->strings[hslots_pos(slots[h])], p->strings[i]) == 0) {
                dup = true;
                break;
            }
        if (!dup)
            slots[h] = hslots_entry(hv, i);
    }
    free(p->strtab->slots);
    p->strtab->slots = slots;
    p->strtab->mask = nslots - 1;
    return 0;
}

/* Doubles the built table, placing each slot by its stored hash. */
static int strtab_grow(profile_t *p)
{
    profile_strtab_t *t = p->strtab;
    return hslots_resize(&t->slots, &t->mask, (t->mask + 1) * 2);
}

/* Builds a deferred intern table, sized for the strings there are. */
static int strtab_build(profile_t *p)
{
    size_t n = 64;
    while (n < (p->n_strings + 1) * 2)
        n *= 2;
    return strtab_rehash(p, n);
}

void profile_defer_intern(profile_t *p)
{
    free(p->strtab->slots);
    p->strtab->slots = NULL;
    p->strtab->mask = 0;
}

/* Interning of s[0..len); copy: into p's storage, else s itself (a
 * NUL-terminated string that p's storage holds). */
static int64_t intern(profile_t *p, const char *s, size_t len, bool copy)
{
    profile_strtab_t *t = p->strtab;
    if (!t->slots && strtab_build(p) < 0)
        return -1;
    if ((p->n_strings + 1) * 2 > t->mask + 1 && strtab_grow(p) < 0)
        return -1;
    uint64_t hv = hash_fnv1a(s, len);
    size_t h = hv & t->mask;
    for (; t->slots[h]; h = (h + 1) & t->mask) {
        if (!hslots_same_hash(t->slots[h], hv))
            continue;
        const char *c = p->strings[hslots_pos(t->slots[h])];
        if (strncmp(c, s, len) == 0 && c[len] == '\0')
            return (int64_t)hslots_pos(t->slots[h]);
    }
    if (err_grow((void **)&p->strings, &p->cap_strings, p->n_strings + 1, sizeof(char *)) < 0)
        return -1;
    char *str = (char *)s;
    if (copy) {
        if (!(str = alloc_str(p, len)))
            return -1;
        memcpy(str, s, len);
        str[len] = '\0';
    }
    p->strings[p->n_strings] = str;
    t->slots[h] = hslots_entry(hv, p->n_strings);
    return (int64_t)p->n_strings++;
}

int64_t profile_intern_n(profile_t *p, const char *s, size_t len)
{
    return intern(p, s, len, true);
}

int64_t profile_intern_owned(profile_t *p, const char *s)
{
    return intern(p, s, strlen(s), false);
}

int64_t profile_add_string(profile_t *p, const char *s, size_t len)
{
    profile_strtab_t *t = p->strtab;
    if (t->slots && (p->n_strings + 1) * 2 > t->mask + 1 && strtab_grow(p) < 0)
        return -1;
    if (err_grow((void **)&p->strings, &p->cap_strings, p->n_strings + 1, sizeof(char *)) < 0)
        return -1;
    char *copy = alloc_str(p, len);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    p->strings[p->n_strings] = copy;
    if (!t->slots) /* deferred: strtab_build hashes them all */
        return (int64_t)p->n_strings++;
    /* A repeat gets no slot of its own (see strtab_rehash): interning keeps
     * returning the first index of the string. */
    uint64_t hv = hash_fnv1a(copy, len);
    size_t h = hv & t->mask;
    bool dup = false;
    for (; t->slots[h]; h = (h + 1) & t->mask)
        if (hslots_same_hash(t->slots[h], hv) &&
            strcmp(p->strings[hslots_pos(t->slots[h])], copy) == 0) {
            dup = true;
            break;
        }
    p->strings[p->n_strings] = copy;
    if (!dup)
        t->slots[h] = hslots_entry(hv, p->n_strings);
    return (int64_t)p->n_strings++;
}

int64_t profile_append_owned(profile_t *p, const char *s)
{
    if (p->strtab->slots)
        profile_defer_intern(p);
    if (err_grow((void **)&p->strings, &p->cap_strings, p->n_strings + 1, sizeof(char *)) < 0)
        return -1;
    p->strings[p->n_strings] = (char *)s;
    return (int64_t)p->n_strings++;
}

int64_t profile_intern(profile_t *p, const char *s)
{
    return profile_intern_n(p, s, strlen(s));
}

/* --- construction ---------------------------------------------------------- */

profile_t *profile_new(void)
{
    profile_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->strtab = calloc(1, sizeof(*p->strtab));
    if (!p->strtab || strtab_rehash(p, 64) < 0 || profile_intern(p, "") != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

/* Frees the id indexes (profile_index's); their pointers are left as they
 * were. */
static void free_indexes(profile_t *p)
{
    free(p->loc_index);
    free(p->fn_index);
    free(p->map_index);
    free(p->loc_sparse);
    free(p->fn_sparse);
    free(p->map_sparse);
}

void profile_free(profile_t *p)
{
    if (!p)
        return;
    free(p->sample_types);
    free(p->samples);
    free(p->mappings);
    free(p->locations);
    free(p->functions);
    free(p->strings);
    free(p->comments);
    if (p->strtab)
        free(p->strtab->slots);
    free(p->strtab);
    free_indexes(p);
    chunks_free(p->chunks);
    chunks_free(p->stack_chunks);
    chunks_free(p->line_chunks);
    chunks_free(p->spare_chunks);
    free(p);
}

/* Moves the chunks of *list to *spare, those of the standard size (a
 * larger one was made for one large array: freed). */
static void chunks_spare(struct profile_chunk **list, struct profile_chunk **spare)
{
    for (struct profile_chunk *c = *list, *n; c; c = n) {
        n = c->next;
        if (c->size == CHUNK_SIZE) {
            c->used = 0;
            c->next = *spare;
            *spare = c;
        } else {
            free(c);
        }
    }
    *list = NULL;
}

int profile_clear(profile_t *p)
{
    free(p->comments);
    free_indexes(p);
    chunks_spare(&p->chunks, &p->spare_chunks);
    chunks_spare(&p->stack_chunks, &p->spare_chunks);
    chunks_spare(&p->line_chunks, &p->spare_chunks);
    profile_t keep = *p;
    memset(p, 0, sizeof(*p));
    /* the arrays, their room, and the intern table's storage */
#define KEEP(arr, cap) (p->arr = keep.arr, p->cap = keep.cap)
    KEEP(sample_types, cap_sample_types);
    KEEP(samples, cap_samples);
    KEEP(mappings, cap_mappings);
    KEEP(locations, cap_locations);
    KEEP(functions, cap_functions);
    KEEP(strings, cap_strings);
#undef KEEP
    p->strtab = keep.strtab;
    p->spare_chunks = keep.spare_chunks;
    free(p->strtab->slots);
    p->strtab->slots = NULL;
    /* as profile_new leaves it */
    return strtab_rehash(p, 64) < 0 || profile_intern(p, "") != 0 ? -ENOMEM : 0;
}

int profile_add_sample_type(profile_t *p, const char *type, const char *unit)
{
    if (err_grow((void **)&p->sample_types, &p->cap_sample_types, p->n_sample_types + 1,
             sizeof(*p->sample_types)) < 0)
        return -ENOMEM;
    int64_t t = profile_intern(p, type), u = profile_intern(p, unit);
    if (t < 0 || u < 0)
        return -ENOMEM;
    p->sample_types[p->n_sample_types++] = (profile_value_type_t){t, u};
    return 0;
}

int profile_reserve_samples(profile_t *p, size_t n)
{
    if (n <= p->cap_samples)
        return 0;
    profile_sample_t *a = realloc(p->samples, n * sizeof(*a));
    if (!a)
        return -ENOMEM;
    p->samples = a;
    p->cap_samples = n;
    return 0;
}

profile_sample_t *profile_add_sample_owned(profile_t *p, uint64_t *locs, size_t nlocs,
                                           int64_t *values)
{
    if (err_grow((void **)&p->samples, &p->cap_samples, p->n_samples + 1, sizeof(*p->samples)) < 0)
        return NULL;
    profile_sample_t *s = &p->samples[p->n_samples++];
    *s = (profile_sample_t){.location_ids = locs, .values = values,
                            .n_location_ids = (uint32_t)nlocs};
    return s;
}

profile_sample_t *profile_add_sample(profile_t *p, const uint64_t *locs, size_t nlocs,
                                     const int64_t *values)
{
    uint64_t *l = profile_alloc_stack(p, locs, nlocs);
    int64_t *v = dup_into(p, values, p->n_sample_types * sizeof(*values));
    if ((nlocs && !l) || (p->n_sample_types && !v))
        return NULL;
    return profile_add_sample_owned(p, l, nlocs, v);
}

int profile_sample_add_label(profile_t *p, profile_sample_t *s, const profile_label_t *l)
{
    /* Labels are few per sample: copy-on-grow within chunk storage. */
    profile_label_t *n = profile_alloc(p, (s->n_labels + 1) * sizeof(*n));
    if (!n)
        return -ENOMEM;
    if (s->n_labels)
        memcpy(n, s->labels, s->n_labels * sizeof(*n));
    n[s->n_labels] = *l;
    s->labels = n;
    s->n_labels++;
    return 0;
}

profile_mapping_t *profile_add_mapping(profile_t *p)
{
    if (err_grow((void **)&p->mappings, &p->cap_mappings, p->n_mappings + 1, sizeof(*p->mappings)) < 0)
        return NULL;
    profile_mapping_t *m = &p->mappings[p->n_mappings++];
    memset(m, 0, sizeof(*m));
    return m;
}

profile_location_t *profile_add_location(profile_t *p, const profile_line_t *lines,
                                         size_t nlines)
{
    if (err_grow((void **)&p->locations, &p->cap_locations, p->n_locations + 1,
             sizeof(*p->locations)) < 0)
        return NULL;
    profile_location_t *l = &p->locations[p->n_locations];
    memset(l, 0, sizeof(*l));
    l->lines = profile_alloc_lines(p, lines, nlines);
    if (nlines && !l->lines)
        return NULL;
    l->n_lines = (uint32_t)nlines;
    p->n_locations++;
    return l;
}

profile_function_t *profile_add_function(profile_t *p)
{
    if (err_grow((void **)&p->functions, &p->cap_functions, p->n_functions + 1,
             sizeof(*p->functions)) < 0)
        return NULL;
    profile_function_t *f = &p->functions[p->n_functions++];
    memset(f, 0, sizeof(*f));
    return f;
}

int profile_add_comment(profile_t *p, const char *text)
{
    if (err_grow((void **)&p->comments, &p->cap_comments, p->n_comments + 1, sizeof(*p->comments)) < 0)
        return -ENOMEM;
    int64_t s = profile_intern(p, text);
    if (s < 0)
        return -ENOMEM;
    p->comments[p->n_comments++] = s;
    return 0;
}

/* --- id indexes -------------------------------------------------------------- */

struct profile_idpos {
    uint64_t id;
    uint32_t pos;
};

static int idpos_cmp(const void *a, const void *b)
{
    const profile_idpos_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* first occurrence wins */
}

/* Huge pages measured slower here (strings -top, 4 interleaved runs at
 * load 8.7, perf's main-thread samples at 5 kHz in the merge): these
 * tables madvise'd MADV_HUGEPAGE and the merge source's locations,
 * functions and samples MADV_COLLAPSE'd, 1723/1321/1611/1359 against
 * 1152/1311/1355/1205 without; glibc.malloc.hugetlb=1 with every array
 * on the heap was as mixed. */
void *profile_calloc_written(size_t n, size_t size)
{
    char *p = calloc(n, size);
    if (p && n * size >= ((size_t)64 << 10)) /* calloc checked the product */
        pages_populate(p, n * size);
    return p;
}

static bool ids_are_positions(const void *base, size_t n, size_t elem)
{
    for (size_t i = 0; i < n; i++)
        if (*(const uint64_t *)((const char *)base + i * elem) != i + 1)
            return false;
    return true;
}

/* Dense array for ids up to 2 * count + 1024 (the usual 1..N case); larger
 * ids go to a sorted side table searched by bisection, so that a profile
 * whose writer uses hashes or addresses as ids stays O(log n) per lookup.
 * Ids that are the positions + 1 (movable false) need no array: *idx is
 * NULL and *nidx n + 1, so that a profile read once per report (the tool
 * indexes it six times) writes no table of every element each time. */
static int build_index(uint32_t **idx, size_t *nidx, profile_idpos_t **sparse,
                       size_t *nsparse, const void *base, size_t n, size_t elem, bool movable)
{
    /* The range found in the same pass as this check measured dearer: it
     * is every index's pass, the range only a table's (callgrind, strings
     * -top: build_index 46.0 -> 70.9 M instructions). */
    const bool pos = ids_are_positions(base, n, elem);
    if (!movable && pos) {
        free(*idx);
        *idx = NULL;
        *nidx = n ? n + 1 : 0;
        free(*sparse);
        *sparse = NULL;
        *nsparse = 0;
        return 0;
    }
    size_t limit = 2 * n + 1024, max = pos && n ? n + 1 : 0, ns = 0;
    for (size_t i = 0; !pos && i < n; i++) {
        uint64_t id = *(const uint64_t *)((const char *)base + i * elem);
        if (id < limit && id + 1 > max)
            max = id + 1;
        else if (id >= limit)
            ns++;
    }
    uint32_t *a = profile_calloc_written(max ? max : 1, sizeof(*a));
    profile_idpos_t *s = ns ? malloc(ns * sizeof(*s)) : NULL;
    if (!a || (ns && !s)) {
        free(a);
        free(s);
        return -ENOMEM;
    }
    /* ids that are the positions + 1 (a movable index's usual case) are
     * not read again: each pass over them reads a line for every one or
     * two elements */
    ns = 0;
    for (size_t i = 0; pos && i < n; i++)
        a[i + 1] = (uint32_t)i + 1;
    for (size_t i = 0; !pos && i < n; i++) {
        uint64_t id = *(const uint64_t *)((const char *)base + i * elem);
        if (id < max) {
            if (!a[id])
                a[id] = (uint32_t)i + 1;
        } else if (id >= limit) {
            s[ns++] = (profile_idpos_t){id, (uint32_t)i};
        }
    }
    if (ns)
        qsort(s, ns, sizeof(*s), idpos_cmp);
    free(*idx);
    *idx = a;
    *nidx = max;
    free(*sparse);
    *sparse = s;
    *nsparse = ns;
    return 0;
}

/* Points id's index entry at pos (the id is indexed: profile_index). */
static void reindex(uint32_t *idx, size_t nidx, profile_idpos_t *sparse, size_t nsparse,
                    uint64_t id, size_t pos)
{
    if (id < nidx) {
        idx[id] = (uint32_t)pos + 1;
        return;
    }
    size_t lo = 0, hi = nsparse;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sparse[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nsparse && sparse[lo].id == id)
        sparse[lo].pos = (uint32_t)pos;
}

void profile_swap_locations(profile_t *p, size_t a, size_t b)
{
    if (a == b)
        return;
    profile_location_t t = p->locations[a];
    p->locations[a] = p->locations[b];
    p->locations[b] = t;
    reindex(p->loc_index, p->n_loc_index, p->loc_sparse, p->n_loc_sparse, p->locations[a].id, a);
    reindex(p->loc_index, p->n_loc_index, p->loc_sparse, p->n_loc_sparse, p->locations[b].id, b);
}

void profile_swap_functions(profile_t *p, size_t a, size_t b)
{
    if (a == b)
        return;
    profile_function_t t = p->functions[a];
    p->functions[a] = p->functions[b];
    p->functions[b] = t;
    reindex(p->fn_index, p->n_fn_index, p->fn_sparse, p->n_fn_sparse, p->functions[a].id, a);
    reindex(p->fn_index, p->n_fn_index, p->fn_sparse, p->n_fn_sparse, p->functions[b].id, b);
}

static int index_all(profile_t *p, bool movable)
{
    if (build_index(&p->loc_index, &p->n_loc_index, &p->loc_sparse, &p->n_loc_sparse,
                    p->locations, p->n_locations, sizeof(*p->locations), movable) < 0 ||
        build_index(&p->fn_index, &p->n_fn_index, &p->fn_sparse, &p->n_fn_sparse,
                    p->functions, p->n_functions, sizeof(*p->functions), movable) < 0 ||
        build_index(&p->map_index, &p->n_map_index, &p->map_sparse, &p->n_map_sparse,
                    p->mappings, p->n_mappings, sizeof(*p->mappings), false) < 0)
        return -ENOMEM;
    return 0;
}

int profile_index(profile_t *p)
{
    return index_all(p, false);
}

int profile_index_movable(profile_t *p)
{
    return index_all(p, true);
}

static const void *lookup(const uint32_t *idx, size_t nidx, const profile_idpos_t *sparse,
                          size_t nsparse, const void *base, size_t n, size_t elem, uint64_t id)
{
    if (id == 0)
        return NULL;
    if (id < nidx && !idx)
        return (const char *)base + (id - 1) * elem;
    if (id < nidx)
        return idx[id] ? (const char *)base + (idx[id] - 1) * elem : NULL;
    size_t lo = 0, hi = nsparse;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sparse[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nsparse && sparse[lo].id == id && sparse[lo].pos < n)
        return (const char *)base + sparse[lo].pos * elem;
    /* Not indexed (appended since the last profile_index, or an id between
     * the dense range and the sparse limit): scan. */
    for (size_t i = 0; i < n; i++)
        if (*(const uint64_t *)((const char *)base + i * elem) == id)
            return (const char *)base + i * elem;
    return NULL;
}

const profile_location_t *profile_location_lookup(const profile_t *p, uint64_t id)
{
    return lookup(p->loc_index, p->n_loc_index, p->loc_sparse, p->n_loc_sparse,
                  p->locations, p->n_locations,
                  sizeof(*p->locations), id);
}

const profile_function_t *profile_function_lookup(const profile_t *p, uint64_t id)
{
    return lookup(p->fn_index, p->n_fn_index, p->fn_sparse, p->n_fn_sparse,
                  p->functions, p->n_functions,
                  sizeof(*p->functions), id);
}

const profile_mapping_t *profile_mapping_lookup(const profile_t *p, uint64_t id)
{
    return lookup(p->map_index, p->n_map_index, p->map_sparse, p->n_map_sparse,
                  p->mappings, p->n_mappings,
                  sizeof(*p->mappings), id);
}

bool profile_mapping_unsymbolizable(const char *file)
{
    char buf[256];
    const char *b = path_base(file, buf, sizeof(buf));
    return b[0] == '[' || strncmp(b, "linux-vdso", 10) == 0 || strncmp(file, "/dev/dri/", 9) == 0;
}
