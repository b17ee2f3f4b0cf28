/* merge.c — pprof's Merge/Compact, Scale/ScaleN, Normalize, SetLabel and
 * the -base/-diff_base combination (see merge.h).
 *
 * The merged profile is built in a new profile_t whose string table interns
 * every string, so that "same string" is "same index" and element keys can
 * be compared as integers. Each element kind has an open-addressing hash
 * table from key to the element's position in the output; each source has
 * position-indexed memo arrays (source element -> output element) that play
 * the role of pprof's per-profile *ByID maps.
 *
 * Order, ids and tie-breaking follow merge.go exactly: output ids are 1..N
 * in order of creation, the first source that has mappings contributes its
 * mapping[0] first, a location's address is shifted by the difference of
 * the start addresses when its mapping matched one of another profile, and
 * a merge whose result holds all-zero samples (e.g. a -base cancelling a
 * stack) is merged once more to drop them and whatever only they used.
 */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/hslots.h"

static const char *S(const profile_t *p, int64_t i)
{
    return i >= 0 && (uint64_t)i < p->n_strings ? p->strings[i] : "";
}

/* --- compatibility ------------------------------------------------------------ */

static void types_str(const profile_t *p, char *buf, size_t n)
{
    size_t w = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < p->n_sample_types && w < n; i++)
        w += (size_t)snprintf(buf + w, n - w, "%s%s/%s", i ? " " : "",
                              S(p, p->sample_types[i].type), S(p, p->sample_types[i].unit));
    if (w < n)
        snprintf(buf + w, n - w, "]");
}

static bool same_vt(const profile_t *a, const profile_value_type_t *x, const profile_t *b,
                    const profile_value_type_t *y)
{
    return strcmp(S(a, x->type), S(b, y->type)) == 0 && strcmp(S(a, x->unit), S(b, y->unit)) == 0;
}

int profile_compatible(const profile_t *a, const profile_t *b, char *err, size_t errlen)
{
    if (!same_vt(a, &a->period_type, b, &b->period_type))
        return err_fmt(err, errlen, -EINVAL, "incompatible period types %s/%s and %s/%s",
                    S(a, a->period_type.type), S(a, a->period_type.unit),
                    S(b, b->period_type.type), S(b, b->period_type.unit));
    bool same = a->n_sample_types == b->n_sample_types;
    for (size_t i = 0; same && i < a->n_sample_types; i++)
        same = same_vt(a, &a->sample_types[i], b, &b->sample_types[i]);
    if (!same) {
        char x[160], y[160];
        types_str(a, x, sizeof(x));
        types_str(b, y, sizeof(y));
        return err_fmt(err, errlen, -EINVAL, "incompatible sample types %s and %s", x, y);
    }
    return 0;
}

/* --- hash table of output positions -------------------------------------------- */

/* Each slot holds an element's position + 1 (low half; 0: empty) and the
 * low half of its hash (high half): a probe compares hashes without
 * loading anything else, the element itself only on a match. A table has
 * fewer than 2^32 slots, so the stored half also places the slot again
 * when the table grows. */
typedef struct {
    uint64_t *slots;
    size_t mask, n;
} htab_t;

static void ht_free(htab_t *h)
{
    free(h->slots);
}

/* Makes room for one more element; -ENOMEM on failure. */
static int ht_reserve(htab_t *h)
{
    size_t old = h->slots ? h->mask + 1 : 0;
    if ((h->n + 1) * 2 <= old)
        return 0;
    return hslots_resize(&h->slots, &h->mask, old ? old * 2 : 512);
}

/* Sizes an empty table for n elements at once: a large source's tables
 * then never hold their old and new slots together while doubling. */
static int ht_presize(htab_t *h, size_t n)
{
    if (h->slots)
        return 0;
    size_t ns = 512;
    while (ns < (n + 1) * 2)
        ns *= 2;
    if (!(h->slots = profile_calloc_written(ns, sizeof(*h->slots))))
        return -ENOMEM;
    h->mask = ns - 1;
    return 0;
}

/* Inserts position h->n (the element just appended) with hash hv. */
static void ht_insert(htab_t *h, uint64_t hv)
{
    size_t k = hv & h->mask;
    while (h->slots[k])
        k = (k + 1) & h->mask;
    h->slots[k] = hslots_entry(hv, h->n);
    h->n++;
}

/* Iterates the candidates with hash hv: call with *k = SIZE_MAX first. */
static int64_t ht_next(const htab_t *h, uint64_t hv, size_t *k)
{
    if (!h->slots)
        return -1;
    *k = *k == SIZE_MAX ? hv & h->mask : (*k + 1) & h->mask;
    for (uint64_t v; (v = h->slots[*k]); *k = (*k + 1) & h->mask)
        if (hslots_same_hash(v, hv))
            return (int64_t)hslots_pos(v);
    return -1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* --- the merger ---------------------------------------------------------------- */

/* A source location of the sample being mapped, its key computed. */
typedef struct {
    uint64_t hv;         /* its hash (loc_hash), when has_hv */
    uint64_t addr;       /* address, shifted to out's mapping */
    uint64_t mid, rel;   /* out's mapping id (0: none), address relative to it */
    uint32_t line0, nl;  /* its lines: m->lines[line0 .. line0 + nl) */
    bool folded;
    bool has_hv; /* else it is first checked against its hint */
} locpre_t;

/* Positions in a source's array. */
typedef struct {
    uint32_t *pos;
    size_t n, cap;
} poslist_t;

#define UNMAPPED 4 /* merger_t's unmapped[]: prefetch_lines is 4 samples ahead */

typedef struct {
    profile_t *out;
    bool adopt; /* out took the storage of its only source (merge_owned):
                 * its samples' arrays are rewritten in place, not copied */
    htab_t fns, maps, locs, samples;
    /* per source */
    const profile_t *src;
    int32_t *strmap; /* src string index -> out index, -1 unknown (a
                      * string takes 2 bytes of a profile of at most 1 GiB) */
    uint32_t *fn_out, *loc_out, *map_out; /* src position -> out position + 1 */
    int64_t *map_off;                     /* address shift per src mapping */
    size_t cap_strmap, cap_fn_out, cap_loc_out, cap_map; /* their room, in elements,
                                                          * kept for the next source */
    /* The last source's fn_out and loc_out, n_* long: a series' snapshots
     * mostly hold the last one's elements at the same positions, so an
     * element is first checked against the out element its position
     * mapped to (one compare of what a probe would compare) before its
     * hash is computed and its table probed. Prefetching the hints and
     * their out elements in merge_src's steps measured no faster (50
     * snapshots -top, main-thread perf samples at 2 kHz, 6 interleaved
     * runs at load 3-4: 1628/1751/1716/1398/1309/1362 without,
     * 1606/1772/1618/1321/1723/1474 with): not done. */
    uint32_t *fn_hint, *loc_hint;
    size_t n_fn_hint, n_loc_hint, cap_fn_hint, cap_loc_hint;
    /* The same for samples: a snapshot's j-th sample is first compared
     * with the out sample the last snapshot's j-th became, before its key
     * is hashed and the table probed (a miss each). */
    uint32_t *smp_out, *smp_hint; /* src sample position -> out position + 1 */
    size_t cap_smp_out, cap_smp_hint, n_smp_hint;
    bool src_done;                /* fn_out, loc_out and smp_out are a source's */
    size_t n_fn_last, n_loc_last, n_smp_last; /* that source's counts */
    /* scratch */
    uint64_t *ids;
    size_t cap_ids;
    profile_label_t *labels;
    size_t cap_labels;
    profile_line_t *lines; /* the lines of a sample's new locations */
    size_t cap_lines;
    locpre_t *pre; /* a sample's new locations between loc_prepare and loc_finish */
    size_t cap_pre;
    /* merge_src's prefetch steps: the source positions of the locations
     * of sample j not mapped when prefetch_lines reached it, in
     * unmapped[j % UNMAPPED], for the later steps of that sample (most
     * of a large source's frames are mapped by then: each step reread
     * every frame's position and loc_out slot) */
    poslist_t unmapped[UNMAPPED];
    /* the caller's keys of the source's strings (profile_merger_add_keyed),
     * and each key's out index + 1 (0: not interned yet), kept across
     * sources */
    const uint32_t *keys;
    size_t n_keys;
    uint32_t *key_out;
    size_t cap_key_out;
    /* profile_merge_keyed: the source's strings stand for themselves by
     * their index until the keys come (keys_finish); order lists those
     * used, in the order of first use */
    const profile_keyer_t *keyer;
    uint32_t *order;
    size_t n_order;
    bool waited; /* keyer's wait was called */
    bool kept;   /* out's strings are the source's (SAME_STRINGS) */
} merger_t;

/* A merge of one profile whose string table keys_finish made: out keeps
 * its strings as they are, which is the order a merge of the profile it
 * came from gives them (a merge of this one would follow the labels'
 * sorted order instead). */
static const profile_keyer_t same_strings;
#define SAME_STRINGS (&same_strings)

/* Records out index o for key. -1 on OOM. */
static int key_set(merger_t *m, uint32_t key, int64_t o)
{
    size_t cap = m->cap_key_out;
    if (err_grow((void **)&m->key_out, &m->cap_key_out, (size_t)key + 1, sizeof(*m->key_out)) < 0)
        return -1;
    memset(m->key_out + cap, 0, (m->cap_key_out - cap) * sizeof(*m->key_out));
    m->key_out[key] = (uint32_t)o + 1;
    return 0;
}

/* The out index of the source's i-th string, interning it. A keyed
 * string is interned once for all sources: later ones read its key's
 * index, with no hashing and no comparing of strings. */
static int64_t str_out(merger_t *m, int64_t i)
{
    if (i < 0 || (uint64_t)i >= m->src->n_strings)
        return -1;
    if (m->strmap[i] >= 0)
        return m->strmap[i];
    if (m->kept)
        return m->strmap[i] = (int32_t)i;
    if (m->keyer) {
        m->order[m->n_order++] = (uint32_t)i;
        return m->strmap[i] = (int32_t)i;
    }
    bool keyed = (uint64_t)i < m->n_keys;
    uint32_t key = keyed ? m->keys[i] : 0;
    int64_t o;
    if (keyed && key < m->cap_key_out && m->key_out[key]) {
        o = (int64_t)m->key_out[key] - 1;
    } else {
        /* Adopted, the source's strings are out's: interned, not copied. */
        o = m->adopt ? profile_intern_owned(m->out, m->src->strings[i])
                     : profile_intern(m->out, m->src->strings[i]);
        if (o < 0 || o > INT32_MAX)
            return -1;
        if (keyed && key_set(m, key, o) < 0)
            return -1;
    }
    m->strmap[i] = (int32_t)o;
    return o;
}

static uint64_t map_size_key(const profile_mapping_t *mp)
{
    /* Sizes rounded up to 4 KiB, so that slightly different ranges of one
     * file across runs still match (address space randomization). */
    uint64_t size = mp->memory_limit - mp->memory_start;
    size = size + 0x1000 - 1;
    return size - size % 0x1000;
}

/* Output position of the mapping of src position pos, creating it. */
static int64_t map_mapping(merger_t *m, size_t pos)
{
    if (m->map_out[pos])
        return m->map_out[pos] - 1;
    const profile_mapping_t *sm = &m->src->mappings[pos];
    profile_mapping_t key = *sm;
    key.filename = str_out(m, sm->filename);
    key.build_id = str_out(m, sm->build_id);
    if (key.filename < 0 || key.build_id < 0)
        return -1;
    /* "" is index 0 in every profile, so an empty build id is 0. */
    int64_t name = key.build_id != 0 ? key.build_id : key.filename;
    uint64_t hv = mix(mix(mix(1, map_size_key(&key)), key.file_offset), (uint64_t)name);
    size_t k = SIZE_MAX;
    for (int64_t c; (c = ht_next(&m->maps, hv, &k)) >= 0;) {
        const profile_mapping_t *om = &m->out->mappings[c];
        int64_t oname = om->build_id != 0 ? om->build_id : om->filename;
        if (map_size_key(om) == map_size_key(&key) && om->file_offset == key.file_offset &&
            oname == name) {
            m->map_out[pos] = (uint32_t)c + 1;
            m->map_off[pos] = (int64_t)(om->memory_start - sm->memory_start);
            return c;
        }
    }
    if (ht_reserve(&m->maps) < 0)
        return -1;
    profile_mapping_t *om = profile_add_mapping(m->out);
    if (!om)
        return -1;
    *om = key;
    om->id = m->out->n_mappings;
    ht_insert(&m->maps, hv);
    m->map_out[pos] = (uint32_t)(m->out->n_mappings - 1) + 1;
    m->map_off[pos] = 0;
    return (int64_t)m->out->n_mappings - 1;
}

/* The position of id through a dense index of n ids (idx NULL: the ids
 * are the positions + 1, profile.h), -1 if it is not there. */
static inline __attribute__((always_inline)) int64_t dense_pos(const uint32_t *idx, size_t n,
                                                              uint64_t id)
{
    if (id >= n)
        return -1;
    if (!idx)
        return id ? (int64_t)id - 1 : -1;
    return idx[id] ? (int64_t)idx[id] - 1 : -1;
}

/* The position of src's element id through its dense index (the common
 * case, inlined: a sample's every frame is looked up), else by_id's; -1 if
 * there is none. */
#define SRC_POS(src, idx, nidx, arr, by_id, id)                                              \
    (dense_pos((src)->idx, (src)->nidx, id) >= 0                                              \
         ? dense_pos((src)->idx, (src)->nidx, id)                                              \
         : src_pos_slow((const void *)by_id(src, id), (const void *)(src)->arr, sizeof(*(src)->arr)))

static int64_t src_pos_slow(const void *el, const void *base, size_t size)
{
    return el ? (int64_t)(((const char *)el - (const char *)base) / size) : -1;
}

/* The function key's hash: start line and out's string indexes. */
static inline uint64_t fn_hash(const profile_function_t *key)
{
    return mix(mix(mix(mix(2, (uint64_t)key->start_line), (uint64_t)key->name),
                   (uint64_t)key->system_name),
               (uint64_t)key->filename);
}

/* Whether out's function of equals key (out's string indexes). */
static inline bool fn_same(const profile_function_t *of, const profile_function_t *key)
{
    return of->start_line == key->start_line && of->name == key->name &&
           of->system_name == key->system_name && of->filename == key->filename;
}

/* The out position of the source element at pos by the last source's
 * element there (hint, n long), -1 if it had none: for the caller to
 * check. */
static inline int64_t hinted(const uint32_t *hint, size_t n, size_t pos)
{
    return pos < n && hint[pos] ? (int64_t)hint[pos] - 1 : -1;
}

static int64_t map_function(merger_t *m, uint64_t id)
{
    int64_t fp = SRC_POS(m->src, fn_index, n_fn_index, functions, profile_function_by_id, id);
    if (fp < 0)
        return -1;
    size_t pos = (size_t)fp;
    if (m->fn_out[pos])
        return m->fn_out[pos] - 1;
    const profile_function_t *sf = &m->src->functions[pos];
    profile_function_t key = *sf;
    key.name = str_out(m, sf->name);
    key.system_name = str_out(m, sf->system_name);
    key.filename = str_out(m, sf->filename);
    if (key.name < 0 || key.system_name < 0 || key.filename < 0)
        return -1;
    /* out's functions are unique: the hint, if equal, is what the table
     * gives */
    int64_t h = hinted(m->fn_hint, m->n_fn_hint, pos);
    if (h >= 0 && fn_same(&m->out->functions[h], &key)) {
        m->fn_out[pos] = (uint32_t)h + 1;
        return h;
    }
    uint64_t hv = fn_hash(&key);
    size_t k = SIZE_MAX;
    for (int64_t c; (c = ht_next(&m->fns, hv, &k)) >= 0;) {
        if (fn_same(&m->out->functions[c], &key)) {
            m->fn_out[pos] = (uint32_t)c + 1;
            return c;
        }
    }
    if (ht_reserve(&m->fns) < 0)
        return -1;
    profile_function_t *of;
    if (m->adopt) {
        /* Adopted, out's functions are made in the source's array as its
         * locations are (loc_finish): the k-th takes slot k, whose source
         * function moves to this one's slot. No second array. */
        size_t k = m->out->n_functions;
        profile_swap_functions((profile_t *)m->src, k, pos);
        m->fn_out[pos] = m->fn_out[k];
        pos = k;
        of = &m->out->functions[k];
        m->out->n_functions++;
    } else if (!(of = profile_add_function(m->out))) {
        return -1;
    }
    *of = key;
    of->id = m->out->n_functions;
    ht_insert(&m->fns, hv);
    m->fn_out[pos] = (uint32_t)m->out->n_functions;
    return (int64_t)m->out->n_functions - 1;
}

/* The location key's hash: address relative to its mapping, mapping,
 * lines. */
static uint64_t loc_hash(const locpre_t *lp, const profile_line_t *lines)
{
    uint64_t h = mix(mix(mix(3, lp->rel), lp->mid), lp->folded);
    for (uint32_t i = 0; i < lp->nl; i++)
        h = mix(mix(h, lines[i].function_id), (uint64_t)lines[i].line);
    return mix(h, lp->nl);
}

/* Whether out's location ol has the key prepared as lp. */
static inline bool loc_same(const profile_t *out, const profile_location_t *ol,
                            const locpre_t *lp, const profile_line_t *lines)
{
    const profile_mapping_t *om = ol->mapping_id ? &out->mappings[ol->mapping_id - 1] : NULL;
    uint64_t orel = om ? ol->address - om->memory_start : ol->address;
    if (orel != lp->rel || ol->mapping_id != lp->mid || ol->is_folded != lp->folded ||
        ol->n_lines != lp->nl)
        return false;
    for (uint32_t i = 0; i < lp->nl; i++)
        if (ol->lines[i].function_id != lines[i].function_id || ol->lines[i].line != lines[i].line)
            return false;
    return true;
}

/* A sample's locations are mapped in two passes, so that the probes of
 * its new locations, a cache miss each in a table of every location,
 * overlap: loc_prepare maps each one's mapping and functions (in the
 * sample's order, which makes theirs and their strings' order), computes
 * its key and hash and starts loading its slot; loc_finish then finds or
 * creates each in the sample's order, which makes the locations'. */
static int loc_prepare(merger_t *m, size_t pos, locpre_t *lp, size_t *nlines)
{
    const profile_location_t *sl = &m->src->locations[pos];
    int64_t mpos = -1;
    int64_t off = 0;
    if (sl->mapping_id) {
        const profile_mapping_t *sm = profile_mapping_by_id(m->src, sl->mapping_id);
        if (sm) {
            size_t spos = (size_t)(sm - m->src->mappings);
            mpos = map_mapping(m, spos);
            if (mpos < 0)
                return -1;
            off = m->map_off[spos];
        }
    }
    const uint32_t nl = sl->n_lines;
    if (err_grow((void **)&m->lines, &m->cap_lines, *nlines + nl + 1, sizeof(*m->lines)) < 0)
        return -1;
    profile_line_t *lines = m->lines + *nlines;
    for (uint32_t i = 0; i < nl; i++) {
        int64_t f = map_function(m, sl->lines[i].function_id);
        if (f < 0)
            return -1;
        lines[i].function_id = (uint64_t)f + 1; /* out's ids are positions + 1 */
        lines[i].line = sl->lines[i].line;
    }
    lp->line0 = *nlines;
    lp->nl = nl;
    *nlines += nl;
    lp->folded = sl->is_folded;
    lp->addr = (uint64_t)((int64_t)sl->address + off);
    lp->mid = mpos >= 0 ? m->out->mappings[mpos].id : 0;
    lp->rel = mpos >= 0 ? lp->addr - m->out->mappings[mpos].memory_start : lp->addr;
    /* with a hint (loaded ahead: prefetch_lines), the hash waits until
     * the hint is found another location */
    lp->has_hv = hinted(m->loc_hint, m->n_loc_hint, pos) < 0;
    if (lp->has_hv) {
        lp->hv = loc_hash(lp, lines);
        if (m->locs.slots)
            __builtin_prefetch(&m->locs.slots[lp->hv & m->locs.mask]);
    }
    return 0;
}

/* The output position of the source location id prepared as lp. */
static int64_t loc_finish(merger_t *m, uint64_t id, const locpre_t *lp)
{
    /* Found again: adopted, an earlier location's creation may have
     * moved it (below), and an earlier one may have been the same id. */
    int64_t sp = SRC_POS(m->src, loc_index, n_loc_index, locations, profile_location_by_id, id);
    if (sp < 0)
        return -1;
    size_t pos = (size_t)sp;
    if (m->loc_out[pos])
        return m->loc_out[pos] - 1;
    const profile_line_t *lines = m->lines + lp->line0;
    const uint32_t nl = lp->nl;
    uint64_t hv = lp->hv;
    if (!lp->has_hv) {
        /* out's locations are unique: the hint, if equal, is what the
         * table gives */
        int64_t h = hinted(m->loc_hint, m->n_loc_hint, pos);
        if (h >= 0 && loc_same(m->out, &m->out->locations[h], lp, lines)) {
            m->loc_out[pos] = (uint32_t)h + 1;
            return h;
        }
        hv = loc_hash(lp, lines);
    }
    size_t k = SIZE_MAX;
    for (int64_t c; (c = ht_next(&m->locs, hv, &k)) >= 0;) {
        if (loc_same(m->out, &m->out->locations[c], lp, lines)) {
            m->loc_out[pos] = (uint32_t)c + 1;
            return c;
        }
    }
    if (ht_reserve(&m->locs) < 0)
        return -1;
    profile_location_t *ol;
    if (m->adopt) {
        /* Adopted, out's locations are made in the source's array: the
         * k-th takes slot k, whose source location (not an out location:
         * those are the slots below k) moves to this one's slot; and its
         * lines array is rewritten in place (a source location is mapped
         * once). No second array of every location. */
        size_t k = m->out->n_locations;
        profile_location_t cur = m->src->locations[pos];
        profile_swap_locations((profile_t *)m->src, k, pos);
        m->loc_out[pos] = m->loc_out[k];
        pos = k;
        ol = &m->out->locations[k];
        *ol = cur;
        if (nl)
            memcpy((profile_line_t *)cur.lines, lines, nl * sizeof(*lines));
        m->out->n_locations++;
    } else if (!(ol = profile_add_location(m->out, lines, nl))) {
        return -1;
    }
    ol->id = m->out->n_locations;
    ol->mapping_id = lp->mid;
    ol->address = lp->addr;
    ol->is_folded = lp->folded;
    ht_insert(&m->locs, hv);
    m->loc_out[pos] = (uint32_t)m->out->n_locations;
    return (int64_t)m->out->n_locations - 1;
}

/* Canonical label order, as Go's encoder writes them: string labels, then
 * numeric ones, each by key; values of one key keep their order. */
static int label_before(const profile_t *p, const profile_label_t *a, const profile_label_t *b)
{
    bool na = a->str == 0, nb = b->str == 0;
    if (na != nb)
        return na ? 1 : -1;
    return strcmp(S(p, a->key), S(p, b->key));
}

typedef struct {
    profile_label_t l;
    size_t pos;
    const profile_t *p;
} label_pos_t;

static int label_pos_cmp(const void *a, const void *b)
{
    const label_pos_t *x = a, *y = b;
    int c = label_before(x->p, &x->l, &y->l);
    if (c)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* stable */
}

static int sort_labels(const profile_t *p, profile_label_t *l, size_t n)
{
    if (n > 16) { /* a hostile sample may have very many */
        label_pos_t *t = malloc(n * sizeof(*t));
        if (!t)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++)
            t[i] = (label_pos_t){l[i], i, p};
        qsort(t, n, sizeof(*t), label_pos_cmp);
        for (size_t i = 0; i < n; i++)
            l[i] = t[i].l;
        free(t);
        return 0;
    }
    for (size_t i = 1; i < n; i++) { /* stable insertion sort: n is small */
        profile_label_t x = l[i];
        size_t j = i;
        while (j > 0 && label_before(p, &x, &l[j - 1]) < 0) {
            l[j] = l[j - 1];
            j--;
        }
        l[j] = x;
    }
    return 0;
}

static bool is_zero(const profile_t *p, const profile_sample_t *s)
{
    for (size_t i = 0; i < p->n_sample_types; i++)
        if (s->values[i])
            return false;
    return true;
}

/* Where a new sample keeps the n elements of size sz mapped from the
 * source's array src: when out took the source's storage, src itself,
 * rewritten (each sample owns its arrays, and merging reads a source's
 * once), else a copy in out's storage (stack: its stack storage, for
 * location ids). NULL on OOM. */
static void *place(merger_t *m, void *src, const void *mapped, size_t n, size_t sz, bool stack)
{
    void *d = m->adopt ? src
              : stack  ? (void *)profile_alloc_stack(m->out, NULL, n)
                       : profile_alloc(m->out, n * sz);
    if (d && d != mapped)
        memcpy(d, mapped, n * sz);
    return d;
}

/* Whether out's sample os has the key of a sample with these mapped
 * location ids and labels. */
static inline bool sample_same(const profile_sample_t *os, uint32_t n_ids, const uint64_t *ids,
                               uint32_t n_labels, const profile_label_t *labels)
{
    return os->n_location_ids == n_ids && os->n_labels == n_labels &&
           (!n_ids || memcmp(os->location_ids, ids, n_ids * sizeof(*ids)) == 0) &&
           (!n_labels || memcmp(os->labels, labels, n_labels * sizeof(*labels)) == 0);
}

/* Adds the values of the source's sample ss to out's sample at c. */
static void sample_add(merger_t *m, size_t c, const profile_sample_t *ss, size_t j)
{
    profile_sample_t *os = &m->out->samples[c];
    for (size_t i = 0; i < m->out->n_sample_types; i++) /* saturates (profile.h) */
        os->values[i] = profile_value_add(os->values[i], ss->values[i]);
    m->smp_out[j] = (uint32_t)c + 1;
}

/* Merges the source's j-th sample, at sp. */
static int map_sample(merger_t *m, profile_sample_t *sp, size_t j)
{
    profile_t *out = m->out;
    /* A copy: adopted, out's new sample may take the source's place. */
    profile_sample_t sv = *sp, *ss = &sv;
    if (err_grow((void **)&m->ids, &m->cap_ids, ss->n_location_ids + 1, sizeof(*m->ids)) < 0 ||
        err_grow((void **)&m->labels, &m->cap_labels, ss->n_labels + 1, sizeof(*m->labels)) < 0)
        return -ENOMEM;
    if (err_grow((void **)&m->pre, &m->cap_pre, ss->n_location_ids + 1, sizeof(*m->pre)) < 0)
        return -ENOMEM;
    size_t nlines = 0;
    for (uint32_t i = 0; i < ss->n_location_ids; i++) {
        uint64_t id = ss->location_ids[i];
        int64_t sp = SRC_POS(m->src, loc_index, n_loc_index, locations, profile_location_by_id, id);
        if (sp < 0)
            return -ENOMEM;
        m->ids[i] = m->loc_out[sp]; /* out's ids are positions + 1 (loc_finish) */
        if (!m->ids[i] && loc_prepare(m, (size_t)sp, &m->pre[i], &nlines) < 0)
            return -ENOMEM;
    }
    for (uint32_t i = 0; i < ss->n_location_ids; i++) {
        if (m->ids[i])
            continue;
        int64_t l = loc_finish(m, ss->location_ids[i], &m->pre[i]);
        if (l < 0)
            return -ENOMEM;
        m->ids[i] = (uint64_t)l + 1;
    }
    for (uint32_t i = 0; i < ss->n_labels; i++) {
        const profile_label_t *sl = &ss->labels[i];
        profile_label_t *l = &m->labels[i];
        l->key = str_out(m, sl->key);
        l->str = str_out(m, sl->str);
        l->num = sl->num;
        l->num_unit = str_out(m, sl->num_unit);
        if (l->key < 0 || l->str < 0 || l->num_unit < 0)
            return -ENOMEM;
    }
    /* keyed, the labels hold the source's indexes still */
    if (sort_labels(m->keyer && !m->kept ? m->src : out, m->labels, ss->n_labels) < 0)
        return -ENOMEM;
    /* out's samples are unique: the hint, if equal, is what the table
     * gives */
    int64_t h = hinted(m->smp_hint, m->n_smp_hint, j);
    if (h >= 0 &&
        sample_same(&out->samples[h], ss->n_location_ids, m->ids, ss->n_labels, m->labels)) {
        sample_add(m, (size_t)h, ss, j);
        return 0;
    }
    uint64_t hv = mix(4, ss->n_location_ids);
    for (uint32_t i = 0; i < ss->n_location_ids; i++)
        hv = mix(hv, m->ids[i]);
    for (uint32_t i = 0; i < ss->n_labels; i++) {
        const profile_label_t *l = &m->labels[i];
        hv = mix(mix(mix(mix(hv, (uint64_t)l->key), (uint64_t)l->str), (uint64_t)l->num),
                 (uint64_t)l->num_unit);
    }
    size_t k = SIZE_MAX;
    for (int64_t c; (c = ht_next(&m->samples, hv, &k)) >= 0;) {
        if (sample_same(&out->samples[c], ss->n_location_ids, m->ids, ss->n_labels, m->labels)) {
            sample_add(m, (size_t)c, ss, j);
            return 0;
        }
    }
    if (ht_reserve(&m->samples) < 0)
        return -ENOMEM;
    uint64_t *ids = ss->n_location_ids ? place(m, ss->location_ids, m->ids, ss->n_location_ids,
                                               sizeof(*m->ids), true)
                                       : NULL;
    int64_t *vals = out->n_sample_types ? place(m, ss->values, ss->values, out->n_sample_types,
                                                sizeof(*vals), false)
                                        : NULL;
    profile_label_t *labels =
        ss->n_labels ? place(m, ss->labels, m->labels, ss->n_labels, sizeof(*m->labels), false) : NULL;
    if ((ss->n_location_ids && !ids) || (out->n_sample_types && !vals) ||
        (ss->n_labels && !labels))
        return -ENOMEM;
    profile_sample_t *os = profile_add_sample_owned(out, ids, ss->n_location_ids, vals);
    if (!os)
        return -ENOMEM;
    os->labels = labels;
    os->n_labels = ss->n_labels;
    ht_insert(&m->samples, hv);
    m->smp_out[j] = (uint32_t)out->n_samples;
    return 0;
}

static void merger_free_src(merger_t *m)
{
    free(m->strmap);
    free(m->fn_out);
    free(m->loc_out);
    free(m->map_out);
    free(m->map_off);
    m->strmap = NULL;
    m->fn_out = m->loc_out = m->map_out = NULL;
    m->map_off = NULL;
    m->cap_strmap = m->cap_fn_out = m->cap_loc_out = m->cap_map = 0;
    free(m->fn_hint);
    free(m->loc_hint);
    m->fn_hint = m->loc_hint = NULL;
    m->n_fn_hint = m->n_loc_hint = m->cap_fn_hint = m->cap_loc_hint = 0;
    free(m->smp_out);
    free(m->smp_hint);
    m->smp_out = m->smp_hint = NULL;
    m->cap_smp_out = m->cap_smp_hint = m->n_smp_hint = 0;
}

/* The last source's out positions become the hints (*hint), its array
 * the next source's (*arr, zeroed by src_array). */
static void rotate(uint32_t **arr, size_t *cap, uint32_t **hint, size_t *cap_hint,
                   size_t *n_hint, size_t n_last)
{
    uint32_t *a = *arr;
    size_t c = *cap;
    *arr = *hint;
    *cap = *cap_hint;
    *hint = a;
    *cap_hint = c;
    *n_hint = a ? n_last : 0;
}

/* *arr as n zeroed elements of size bytes: the last source's array when
 * it has room (a series' sources are about the same size: zeroing it
 * costs less than faulting in a new one), else a new one. */
static void *src_array(void **arr, size_t *cap, size_t n, size_t size)
{
    if (*arr && *cap >= n) {
        memset(*arr, 0, n * size);
        return *arr;
    }
    free(*arr);
    *cap = n;
    return *arr = profile_calloc_written(n, size);
}

static int merger_set_src(merger_t *m, profile_t *src)
{
    /* Adopted, elements move (profile_swap_*): tables follow them. Else
     * ids that are the positions + 1 need none. */
    if ((m->adopt ? profile_index_movable(src) : profile_index(src)) < 0)
        return -ENOMEM;
    if (m->src_done) {
        rotate(&m->fn_out, &m->cap_fn_out, &m->fn_hint, &m->cap_fn_hint, &m->n_fn_hint,
               m->n_fn_last);
        rotate(&m->loc_out, &m->cap_loc_out, &m->loc_hint, &m->cap_loc_hint, &m->n_loc_hint,
               m->n_loc_last);
        rotate(&m->smp_out, &m->cap_smp_out, &m->smp_hint, &m->cap_smp_hint, &m->n_smp_hint,
               m->n_smp_last);
    }
    m->src_done = true;
    m->n_fn_last = src->n_functions;
    m->n_loc_last = src->n_locations;
    m->n_smp_last = src->n_samples;
    m->src = src;
    /* the first source's counts: the most its elements can make */
    if (ht_presize(&m->fns, src->n_functions) < 0 || ht_presize(&m->locs, src->n_locations) < 0 ||
        ht_presize(&m->samples, src->n_samples) < 0)
        return -ENOMEM;
    size_t nm = src->n_mappings + 1;
    src_array((void **)&m->strmap, &m->cap_strmap, src->n_strings + 1, sizeof(*m->strmap));
    src_array((void **)&m->fn_out, &m->cap_fn_out, src->n_functions + 1, sizeof(*m->fn_out));
    src_array((void **)&m->loc_out, &m->cap_loc_out, src->n_locations + 1, sizeof(*m->loc_out));
    src_array((void **)&m->smp_out, &m->cap_smp_out, src->n_samples + 1, sizeof(*m->smp_out));
    /* map_out and map_off: one count for both */
    size_t cap_map = m->cap_map;
    src_array((void **)&m->map_out, &m->cap_map, nm, sizeof(*m->map_out));
    src_array((void **)&m->map_off, &cap_map, nm, sizeof(*m->map_off));
    if (m->keyer && !m->kept && !(m->order = malloc((src->n_strings + 1) * sizeof(*m->order))))
        return -ENOMEM;
    if (!m->strmap || !m->fn_out || !m->loc_out || !m->smp_out || !m->map_out || !m->map_off)
        return -ENOMEM;
    for (size_t i = 0; i < src->n_strings; i++)
        m->strmap[i] = -1;
    return 0;
}

static void merger_free(merger_t *m)
{
    merger_free_src(m);
    ht_free(&m->fns);
    ht_free(&m->maps);
    ht_free(&m->locs);
    ht_free(&m->samples);
    free(m->ids);
    free(m->labels);
    free(m->lines);
    free(m->pre);
    for (size_t k = 0; k < UNMAPPED; k++)
        free(m->unmapped[k].pos);
    free(m->key_out);
    free(m->order);
}

/* combineHeaders */
/* The header's sums over srcs: earliest time, summed duration, largest
 * period. */
static void header_sums(profile_t *out, profile_t *const *srcs, size_t n)
{
    int64_t tn = 0, dn = 0, period = 0;
    for (size_t i = 0; i < n; i++) {
        const profile_t *s = srcs[i];
        /* Quirk kept from merge.go: a zero time_nanos after a nonzero one
         * resets it. */
        if (tn == 0 || s->time_nanos < tn)
            tn = s->time_nanos;
        dn = (int64_t)((uint64_t)dn + (uint64_t)s->duration_nanos);
        if (period == 0 || period < s->period)
            period = s->period;
    }
    out->time_nanos = tn;
    out->duration_nanos = dn;
    out->period = period;
}

static int headers(profile_t *out, profile_t **srcs, size_t n)
{
    const profile_t *s0 = srcs[0];
    for (size_t i = 0; i < s0->n_sample_types; i++)
        if (profile_add_sample_type(out, S(s0, s0->sample_types[i].type),
                                    S(s0, s0->sample_types[i].unit)) < 0)
            return -ENOMEM;
    out->drop_frames = profile_intern(out, S(s0, s0->drop_frames));
    out->keep_frames = profile_intern(out, S(s0, s0->keep_frames));
    out->period_type.type = profile_intern(out, S(s0, s0->period_type.type));
    out->period_type.unit = profile_intern(out, S(s0, s0->period_type.unit));
    if (out->drop_frames < 0 || out->keep_frames < 0 || out->period_type.type < 0 ||
        out->period_type.unit < 0)
        return -ENOMEM;
    const char *dflt = "";
    /* Comments are deduplicated by their interned index, which is below
     * the current table size plus one new string per comment. */
    size_t nseen = out->n_strings;
    for (size_t i = 0; i < n; i++)
        nseen += srcs[i]->n_comments;
    uint8_t *seen = calloc(nseen, 1);
    if (!seen)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const profile_t *s = srcs[i];
        for (size_t c = 0; c < s->n_comments; c++) {
            int64_t k = profile_intern(out, S(s, s->comments[c]));
            if (k < 0) {
                free(seen);
                return -ENOMEM;
            }
            if (seen[k])
                continue;
            seen[k] = 1;
            if (err_grow((void **)&out->comments, &out->cap_comments, out->n_comments + 1,
                     sizeof(*out->comments)) < 0) {
                free(seen);
                return -ENOMEM;
            }
            out->comments[out->n_comments++] = k;
        }
        if (!dflt[0])
            dflt = S(s, s->default_sample_type);
    }
    free(seen);
    header_sums(out, srcs, n);
    out->default_sample_type = profile_intern(out, dflt);
    return out->default_sample_type < 0 ? -ENOMEM : 0;
}

/* The sources of a merge come one at a time from next, so that a streamed
 * merge holds one of them at a time; heads give what is needed before the
 * first sample (the header, the compatibility checks). */
typedef int (*src_fn)(void *ctx, size_t i, profile_t **p, char *err, size_t errlen);

static int from_array(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    *p = ((profile_t **)ctx)[i];
    return 0;
}

/* The first step for a sample: the slots of its locations in the
 * source's index (a table of every location, read at random). */
static void prefetch_loc_index(const merger_t *m, const profile_sample_t *s)
{
    const profile_t *src = m->src;
    for (uint32_t i = 0; src->loc_index && i < s->n_location_ids; i++)
        if (s->location_ids[i] < src->n_loc_index)
            __builtin_prefetch(&src->loc_index[s->location_ids[i]]);
}

/* The source position of function f through the dense index alone, -1 if
 * it is not there: the prefetch steps search no further. */
static inline int64_t dense_fn_pos(const profile_t *src, uint64_t f)
{
    return dense_pos(src->fn_index, src->n_fn_index, f);
}

/* Starts loading the source locations of a sample and their slots in
 * loc_out (the ids of dense profiles, the common case), which map_sample
 * reads one after the other: a large profile's samples name locations all
 * over its arrays, a cache miss each. */
static void prefetch_locations(const merger_t *m, const profile_sample_t *s)
{
    const profile_t *src = m->src;
    for (uint32_t i = 0; i < s->n_location_ids; i++) {
        int64_t p = dense_pos(src->loc_index, src->n_loc_index, s->location_ids[i]);
        if (p >= 0) {
            __builtin_prefetch(&src->locations[p]);
            __builtin_prefetch(&m->loc_out[p]);
        }
    }
}

/* The next step for sample j, whose locations were prefetched: the lines
 * of those not mapped yet (each location's own array), whose positions
 * it lists for the later steps (none when the list has no room: they
 * only prefetch). */
static void prefetch_lines(merger_t *m, const profile_sample_t *s, size_t j)
{
    const profile_t *src = m->src;
    poslist_t *u = &m->unmapped[j % UNMAPPED];
    u->n = 0;
    if (err_grow((void **)&u->pos, &u->cap, s->n_location_ids, sizeof(*u->pos)) < 0)
        return;
    for (uint32_t i = 0; i < s->n_location_ids; i++) {
        int64_t p = dense_pos(src->loc_index, src->n_loc_index, s->location_ids[i]);
        if (p >= 0 && !m->loc_out[p]) {
            __builtin_prefetch(src->locations[p].lines);
            u->pos[u->n++] = (uint32_t)p;
        }
    }
}

/* The step after prefetch_lines: the slots in the source's index of the
 * functions of sample j's listed locations' lines. */
static void prefetch_fn_index(const merger_t *m, size_t j)
{
    const profile_t *src = m->src;
    const poslist_t *u = &m->unmapped[j % UNMAPPED];
    for (size_t i = 0; src->fn_index && i < u->n; i++) {
        const profile_location_t *l = &src->locations[u->pos[i]];
        for (uint32_t k = 0; k < l->n_lines; k++)
            if (l->lines[k].function_id < src->n_fn_index)
                __builtin_prefetch(&src->fn_index[l->lines[k].function_id]);
    }
}

/* The next step for sample j: the functions of its listed locations, and
 * their slots in fn_out. */
static void prefetch_functions(const merger_t *m, size_t j)
{
    const profile_t *src = m->src;
    const poslist_t *u = &m->unmapped[j % UNMAPPED];
    for (size_t i = 0; i < u->n; i++) {
        const profile_location_t *l = &src->locations[u->pos[i]];
        for (uint32_t k = 0; k < l->n_lines; k++) {
            int64_t f = dense_fn_pos(src, l->lines[k].function_id);
            if (f >= 0) {
                __builtin_prefetch(&src->functions[f]);
                __builtin_prefetch(&m->fn_out[f]);
            }
        }
    }
}

/* The step after prefetch_functions: for the functions not mapped yet,
 * their strings' slots in strmap and, when out's string indexes are the
 * source's (keyed or kept: str_out gives i for i), their slots in the
 * function table, whose hash is then known. The strings shape has a
 * name, system name and file name of its own per function: 250,000
 * functions, four misses each, which map_function met one by one. */
static void prefetch_strings(const merger_t *m, size_t j)
{
    const profile_t *src = m->src;
    const poslist_t *u = &m->unmapped[j % UNMAPPED];
    for (size_t i = 0; i < u->n; i++) {
        const profile_location_t *l = &src->locations[u->pos[i]];
        for (uint32_t k = 0; k < l->n_lines; k++) {
            int64_t f = dense_fn_pos(src, l->lines[k].function_id);
            if (f < 0 || m->fn_out[f])
                continue;
            const profile_function_t *sf = &src->functions[f];
            if ((uint64_t)sf->name < src->n_strings)
                __builtin_prefetch(&m->strmap[sf->name]);
            if ((uint64_t)sf->system_name < src->n_strings)
                __builtin_prefetch(&m->strmap[sf->system_name]);
            if ((uint64_t)sf->filename < src->n_strings)
                __builtin_prefetch(&m->strmap[sf->filename]);
            if (m->keyer && m->fns.slots)
                __builtin_prefetch(&m->fns.slots[fn_hash(sf) & m->fns.mask]);
        }
    }
}

/* Merges src's samples (adopted: out's array that holds them) into m. */
static int merge_src(merger_t *m, profile_t *src, profile_sample_t *adopted)
{
    int rc = merger_set_src(m, src);
    if (rc == 0 && m->out->n_mappings == 0 && src->n_mappings > 0 && map_mapping(m, 0) < 0)
        rc = -ENOMEM;
    profile_sample_t *ss = adopted ? adopted : src->samples;
    for (size_t k = 0; k < UNMAPPED; k++) /* the last source's positions */
        m->unmapped[k].n = 0;
    for (size_t j = 0; rc == 0 && j < src->n_samples; j++) {
        /* six samples ahead, the index slots of their locations load
         * while this one is mapped; five ahead, the locations; four
         * ahead, their lines; three ahead, the index slots of those
         * lines' functions; two ahead, the functions; one ahead, their
         * strings' and table slots. (Run only when the source's tables
         * pass 1 MiB, as graph_build's: callgrind, samples -top, merge_src
         * 1,645 -> 1,149 M, but deep -svg's CPU +3.4%, 4 interleaved
         * pairs, slower in 4 of 4: dropped.) */
        if (j + 6 < src->n_samples)
            prefetch_loc_index(m, &ss[j + 6]);
        if (j + 5 < src->n_samples)
            prefetch_locations(m, &ss[j + 5]);
        if (j + 4 < src->n_samples)
            prefetch_lines(m, &ss[j + 4], j + 4);
        if (j + 3 < src->n_samples)
            prefetch_fn_index(m, j + 3);
        if (j + 2 < src->n_samples)
            prefetch_functions(m, j + 2);
        if (j + 1 < src->n_samples)
            prefetch_strings(m, j + 1);
        if (!is_zero(src, &ss[j]))
            rc = map_sample(m, &ss[j], j);
    }
    return rc;
}

static int merge_from(profile_t **heads, size_t n, bool own, bool stream, src_fn next, void *ctx,
                      const profile_keyer_t *keyer, profile_t **out, char *err, size_t errlen);

/* profile_merge_keyed's strings, once the source's samples are merged:
 * each used source string takes its key's place in out (one of out's
 * header strings, else a new one, in the order of first use, as interning
 * them would have), and out's mappings, functions and labels, made with
 * the source's indexes, get it. *again: two used source strings were
 * equal (or "" had an index other than 0), so the merge may have told
 * apart elements that differ only there: out is to be merged once more,
 * which finds them equal. */
static int keys_finish(merger_t *m, bool *again)
{
    /* The elements are made: their tables go first, so that they and
     * the keys are not held together at the merge's peak. */
    htab_t *tabs[] = {&m->fns, &m->maps, &m->locs, &m->samples};
    for (size_t t = 0; t < sizeof(tabs) / sizeof(*tabs); t++) {
        ht_free(tabs[t]);
        tabs[t]->slots = NULL;
    }
    free(m->fn_out);
    free(m->loc_out);
    m->fn_out = m->loc_out = NULL;
    const uint32_t *keys = m->keyer->wait(m->keyer->ctx);
    m->waited = true;
    profile_t *out = m->out;
    const profile_t *src = m->src;
    const size_t n_hdr = out->n_strings;
    uint8_t *claimed = calloc(n_hdr + m->n_order + 1, 1); /* out index used */
    if (!claimed)
        return -ENOMEM;
    int rc = 0;
    for (size_t j = 0; keys && rc == 0 && j < n_hdr; j++) {
        uint32_t k = m->keyer->key_of(m->keyer->ctx, out->strings[j]);
        rc = k == UINT32_MAX ? -ENOMEM : key_set(m, k, (int64_t)j);
    }
    for (size_t x = 0; rc == 0 && x < m->n_order; x++) {
        uint32_t i = m->order[x], k = keys ? keys[i] : 0;
        int64_t o;
        if (!keys)
            o = profile_intern_owned(out, src->strings[i]);
        else if (k < m->cap_key_out && m->key_out[k])
            o = (int64_t)m->key_out[k] - 1;
        else if ((o = profile_append_owned(out, src->strings[i])) >= 0 && key_set(m, k, o) < 0)
            o = -1;
        if (o < 0 || o > INT32_MAX) {
            rc = -ENOMEM;
            break;
        }
        if (claimed[o] || (o == 0) != (i == 0))
            *again = true;
        claimed[o] = 1;
        m->strmap[i] = (int32_t)o;
    }
    free(claimed);
    if (rc < 0)
        return rc;
    const int32_t *f = m->strmap; /* source index -> out's, for every one used */
    for (size_t j = 0; j < out->n_mappings; j++) {
        profile_mapping_t *mp = &out->mappings[j];
        mp->filename = f[mp->filename];
        mp->build_id = f[mp->build_id];
    }
    for (size_t j = 0; j < out->n_functions; j++) {
        profile_function_t *fn = &out->functions[j];
        fn->name = f[fn->name];
        fn->system_name = f[fn->system_name];
        fn->filename = f[fn->filename];
    }
    for (size_t j = 0; j < out->n_samples; j++) {
        profile_sample_t *sp = &out->samples[j];
        for (uint32_t l = 0; l < sp->n_labels; l++) {
            profile_label_t *lb = &sp->labels[l];
            lb->key = f[lb->key];
            lb->str = f[lb->str];
            lb->num_unit = f[lb->num_unit];
        }
    }
    return 0;
}

/* The end of a merge whose samples are all in p (taken) and whose status is
 * rc (src_err: a source's own message stands): indexes p, merges it again
 * when values cancelled out, or when again. */
static int merge_done(profile_t *p, int rc, bool src_err, bool again, profile_t **out,
                      char *err, size_t errlen)
{
    if (rc == 0)
        rc = profile_index(p);
    if (rc < 0) {
        profile_free(p);
        return src_err ? rc : err_fmt(err, errlen, rc, "out of memory while merging profiles");
    }
    bool zero = false;
    for (size_t i = 0; !zero && i < p->n_samples; i++)
        zero = is_zero(p, &p->samples[i]);
    /* Values cancelled out: merge again, interning, to drop the zero
     * samples and what only they referenced (as the merge without keys
     * does). Else keys_finish found equal strings: merge again keeping
     * p's strings where they are. */
    if (zero || again)
        return merge_from(&p, 1, true, false, from_array, &p, zero ? NULL : SAME_STRINGS, out, err,
                          errlen);
    *out = p;
    return 0;
}

/* pprof's Merge of the sources next gives (heads[i] stands for the i-th);
 * own: heads are freed (on failure too); stream: so is each source, once
 * merged (heads are then other profiles than the sources). */
static int merge_from(profile_t **heads, size_t n, bool own, bool stream, src_fn next, void *ctx,
                      const profile_keyer_t *keyer, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = n ? 0 : err_fmt(err, errlen, -EINVAL, "no profiles to merge");
    for (size_t i = 1; rc == 0 && i < n; i++)
        rc = profile_compatible(heads[0], heads[i], err, errlen);
    if (rc < 0) {
        for (size_t i = 0; own && i < n; i++)
            profile_free(heads[i]);
        return rc;
    }
    merger_t m;
    memset(&m, 0, sizeof(m));
    m.out = profile_new();
    rc = m.out ? headers(m.out, heads, n) : -ENOMEM;
    profile_sample_t *adopted = NULL; /* the source's samples, when adopted */
    if (rc == 0 && own && !stream && n == 1) {
        m.adopt = true;
        profile_take_storage(m.out, heads[0]);
        /* Out's k-th sample is made from the source's j-th, j >= k, once
         * the source's first j are read: it takes the source's array. */
        adopted = heads[0]->samples;
        m.out->samples = adopted;
        m.out->cap_samples = heads[0]->n_samples;
        heads[0]->samples = NULL;
        heads[0]->cap_samples = 0;
        /* So do its locations (loc_finish): one array, the source's
         * until the merge ends. */
        m.out->locations = heads[0]->locations;
        m.out->cap_locations = heads[0]->n_locations;
        m.out->functions = heads[0]->functions; /* so do its functions */
        m.out->cap_functions = heads[0]->n_functions;
        m.keyer = keyer;
        m.kept = keyer == SAME_STRINGS;
        /* kept: headers made the same first strings */
        for (size_t j = m.out->n_strings; m.kept && rc == 0 && j < heads[0]->n_strings; j++)
            if (profile_append_owned(m.out, heads[0]->strings[j]) < 0)
                rc = -ENOMEM;
    }
    bool src_err = false; /* next failed: its message stands */
    bool again = false;   /* keys_finish's */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        profile_t *src = NULL;
        if ((rc = next(ctx, i, &src, err, errlen)) < 0) {
            src_err = true;
            break;
        }
        rc = merge_src(&m, src, adopted);
        if (rc == 0 && m.keyer && !m.kept)
            rc = keys_finish(&m, &again);
        if (stream)
            profile_free(src); /* its arrays in m serve the next */
    }
    /* the caller's keying reads the source's strings until it is waited for */
    if (keyer && keyer != SAME_STRINGS && !m.waited)
        keyer->wait(keyer->ctx);
    profile_t *p = m.out;
    m.out = NULL;
    if (m.adopt) { /* the locations and functions arrays are out's now */
        heads[0]->locations = NULL;
        heads[0]->functions = NULL;
    }
    merger_free(&m);
    for (size_t i = 0; own && i < n; i++)
        profile_free(heads[i]);
    return merge_done(p, rc, src_err, again, out, err, errlen);
}

static int merge(profile_t **srcs, size_t n, bool own, profile_t **out, char *err, size_t errlen)
{
    return merge_from(srcs, n, own, false, from_array, srcs, NULL, out, err, errlen);
}

int profile_merge(profile_t **srcs, size_t n, profile_t **out, char *err, size_t errlen)
{
    return merge(srcs, n, false, out, err, errlen);
}

int profile_merge_owned(profile_t **srcs, size_t n, profile_t **out, char *err, size_t errlen)
{
    return merge(srcs, n, true, out, err, errlen);
}

int profile_merge_keyed(profile_t **p, const profile_keyer_t *keyer, profile_t **out, char *err,
                        size_t errlen)
{
    return merge_from(p, 1, true, false, from_array, p, keyer, out, err, errlen);
}

int profile_merge_stream(profile_t **heads, size_t n, profile_source_fn next, void *ctx,
                         profile_t **out, char *err, size_t errlen)
{
    return merge_from(heads, n, true, true, next, ctx, NULL, out, err, errlen);
}

/* --- merging as the sources come ------------------------------------------------ */

struct profile_merger {
    merger_t m;
};

int profile_merger_new(profile_t *head, profile_merger_t **out)
{
    *out = NULL;
    profile_merger_t *pm = calloc(1, sizeof(*pm));
    if (!pm)
        return -ENOMEM;
    pm->m.out = profile_new();
    if (!pm->m.out || headers(pm->m.out, &head, 1) < 0) {
        profile_merger_free(pm);
        return -ENOMEM;
    }
    *out = pm;
    return 0;
}

int profile_merger_add(profile_merger_t *pm, profile_t *src)
{
    return profile_merger_add_keyed(pm, src, NULL, 0);
}

int profile_merger_add_keyed(profile_merger_t *pm, profile_t *src, const uint32_t *keys,
                             size_t n_keys)
{
    int rc = profile_merger_add_kept(pm, src, keys, n_keys);
    profile_free(src);
    return rc;
}

int profile_merger_add_kept(profile_merger_t *pm, profile_t *src, const uint32_t *keys,
                            size_t n_keys)
{
    pm->m.keys = keys;
    pm->m.n_keys = keys ? n_keys : 0;
    int rc = merge_src(&pm->m, src, NULL);
    pm->m.keys = NULL;
    pm->m.n_keys = 0;
    pm->m.src = NULL; /* its arrays in m serve the next */
    return rc;
}

bool profile_merger_same_header(const profile_t *first, const profile_t *h)
{
    char e[8];
    if (profile_compatible(first, h, e, sizeof(e)) < 0)
        return false;
    if (S(h, h->default_sample_type)[0] && !S(first, first->default_sample_type)[0])
        return false;
    for (size_t c = 0; c < h->n_comments; c++) {
        size_t k = 0;
        while (k < first->n_comments &&
               strcmp(S(first, first->comments[k]), S(h, h->comments[c])) != 0)
            k++;
        if (k == first->n_comments)
            return false;
    }
    return true;
}

int profile_merger_end(profile_merger_t *pm, profile_t *const *heads, size_t n, profile_t **out,
                       char *err, size_t errlen)
{
    profile_t *p = pm->m.out;
    pm->m.out = NULL;
    header_sums(p, heads, n);
    profile_merger_free(pm);
    return merge_done(p, 0, false, false, out, err, errlen);
}

void profile_merger_free(profile_merger_t *pm)
{
    if (!pm)
        return;
    profile_free(pm->m.out);
    merger_free(&pm->m);
    free(pm);
}

int profile_header_copy(const profile_t *p, profile_t **out)
{
    profile_t *h = profile_new();
    *out = NULL;
    if (!h)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n_sample_types; i++)
        rc = profile_add_sample_type(h, S(p, p->sample_types[i].type), S(p, p->sample_types[i].unit));
    for (size_t i = 0; rc == 0 && i < p->n_comments; i++)
        rc = profile_add_comment(h, S(p, p->comments[i]));
    h->drop_frames = profile_intern(h, S(p, p->drop_frames));
    h->keep_frames = profile_intern(h, S(p, p->keep_frames));
    h->period_type.type = profile_intern(h, S(p, p->period_type.type));
    h->period_type.unit = profile_intern(h, S(p, p->period_type.unit));
    h->default_sample_type = profile_intern(h, S(p, p->default_sample_type));
    h->time_nanos = p->time_nanos;
    h->duration_nanos = p->duration_nanos;
    h->period = p->period;
    if (rc < 0 || h->drop_frames < 0 || h->keep_frames < 0 || h->period_type.type < 0 ||
        h->period_type.unit < 0 || h->default_sample_type < 0) {
        profile_free(h);
        return -ENOMEM;
    }
    *out = h;
    return 0;
}

int profile_compact(profile_t *p, profile_t **out, char *err, size_t errlen)
{
    return profile_merge(&p, 1, out, err, errlen);
}

/* --- scaling ------------------------------------------------------------------- */

/* Go's int64(math.Round(x)): half away from zero; saturated where Go's
 * (amd64) gives INT64_MIN and C's conversion is undefined. */
static int64_t round_i64(double x)
{
    return profile_value_of(round(x));
}

int profile_scale_n(profile_t *p, const double *ratios, size_t n)
{
    if (n != p->n_sample_types)
        return -EINVAL;
    bool ones = true;
    for (size_t i = 0; i < n; i++)
        ones = ones && ratios[i] == 1;
    if (ones)
        return 0;
    size_t kept = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        profile_sample_t *s = &p->samples[i];
        bool keep = false;
        for (size_t j = 0; j < n; j++) {
            if (ratios[j] != 1) {
                s->values[j] = round_i64((double)s->values[j] * ratios[j]);
                keep = keep || s->values[j] != 0;
            }
        }
        if (keep)
            p->samples[kept++] = *s;
    }
    p->n_samples = kept;
    return 0;
}

int profile_scale(profile_t *p, double ratio)
{
    if (ratio == 1 || p->n_sample_types == 0)
        return 0;
    double *r = malloc(p->n_sample_types * sizeof(*r));
    if (!r)
        return -ENOMEM;
    for (size_t i = 0; i < p->n_sample_types; i++)
        r[i] = ratio;
    int rc = profile_scale_n(p, r, p->n_sample_types);
    free(r);
    return rc;
}

int profile_normalize(profile_t *p, const profile_t *base, char *err, size_t errlen)
{
    int rc = profile_compatible(p, base, err, errlen);
    if (rc < 0)
        return rc;
    size_t n = p->n_sample_types;
    if (n == 0)
        return 0;
    int64_t *bv = calloc(n, sizeof(*bv)), *sv = calloc(n, sizeof(*sv));
    double *r = calloc(n, sizeof(*r));
    if (!bv || !sv || !r) {
        free(bv);
        free(sv);
        free(r);
        return err_fmt(err, errlen, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < base->n_samples; i++)
        for (size_t j = 0; j < n; j++)
            bv[j] = profile_value_add(bv[j], base->samples[i].values[j]);
    for (size_t i = 0; i < p->n_samples; i++)
        for (size_t j = 0; j < n; j++)
            sv[j] = profile_value_add(sv[j], p->samples[i].values[j]);
    for (size_t j = 0; j < n; j++)
        r[j] = sv[j] == 0 ? 0.0 : (double)bv[j] / (double)sv[j];
    rc = profile_scale_n(p, r, n);
    free(bv);
    free(sv);
    free(r);
    return rc;
}

/* --- labels and -base ------------------------------------------------------------ */

int profile_set_label(profile_t *p, const char *key, const char *value)
{
    int64_t k = profile_intern(p, key), v = profile_intern(p, value);
    if (k < 0 || v < 0)
        return -ENOMEM;
    for (size_t i = 0; i < p->n_samples; i++) {
        profile_sample_t *s = &p->samples[i];
        profile_label_t *nl = profile_alloc(p, (s->n_labels + 1) * sizeof(*nl));
        if (!nl)
            return -ENOMEM;
        uint32_t n = 0;
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (l->str != 0 && strcmp(S(p, l->key), key) == 0)
                continue; /* the key's string values are replaced */
            nl[n++] = *l;
        }
        nl[n++] = (profile_label_t){k, v, 0, 0};
        s->labels = nl;
        s->n_labels = n;
    }
    return 0;
}

int profile_apply_base(profile_t *p, profile_t *base, bool diff_base, bool normalize,
                       profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc;
    if (diff_base && (rc = profile_set_label(base, "pprof::base", "true")) < 0)
        return err_fmt(err, errlen, rc, "out of memory");
    if (normalize && (rc = profile_normalize(p, base, err, errlen)) < 0)
        return rc;
    if ((rc = profile_scale(base, -1)) < 0)
        return err_fmt(err, errlen, rc, "out of memory");
    profile_t *both[2] = {p, base};
    return profile_merge(both, 2, out, err, errlen);
}

/* Columns summed in one pass over the samples: each pass reads every
 * sample and its values, where a pass per column read them once for each
 * (four times for a heap profile). */
#define SUM_COLS 8

int profile_check_sums(const profile_t *p, char *err, size_t errlen)
{
    for (size_t j0 = 0; j0 < p->n_sample_types; j0 += SUM_COLS) {
        size_t nc = p->n_sample_types - j0 < SUM_COLS ? p->n_sample_types - j0 : SUM_COLS;
        uint64_t sum[SUM_COLS] = {0};
        size_t over[SUM_COLS]; /* the sample whose term took the sum past 2^63-1 */
        for (size_t c = 0; c < nc; c++)
            over[c] = SIZE_MAX;
        for (size_t i = 0; i < p->n_samples; i++) {
            const int64_t *vals = p->samples[i].values + j0;
            for (size_t c = 0; c < nc; c++) {
                /* each term <= 2^63: a sum wraps only after it passed */
                sum[c] += vals[c] < 0 ? (uint64_t)0 - (uint64_t)vals[c] : (uint64_t)vals[c];
                if (sum[c] > (uint64_t)INT64_MAX && over[c] == SIZE_MAX)
                    over[c] = i;
            }
        }
        /* the first column that passed, at its first such sample: what a
         * pass per column stopped at */
        for (size_t c = 0; c < nc; c++) {
            if (over[c] == SIZE_MAX)
                continue;
            size_t j = j0 + c, i = over[c];
            const profile_value_type_t *t = &p->sample_types[j];
            const char *type = t->type > 0 && (size_t)t->type < p->n_strings ? p->strings[t->type] : "";
            return err_fmt(err, errlen, -ERANGE,
                           "sample values too large: the %s values (column %zu) add up to "
                           "more than 2^63-1 in absolute value (sample %zu holds %lld)",
                           type, j + 1, i + 1, (long long)p->samples[i].values[j]);
        }
    }
    return 0;
}
