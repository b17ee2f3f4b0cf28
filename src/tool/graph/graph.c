/* graph.c — building, trimming and sorting the call graph. */
#include "tool/graph/graph.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/measure.h"
#include "tool/graph/pairtab.h"
#include "base/err.h"
#include "base/hash.h"
#include "base/hslots.h"
#include "base/path.h"
#include "base/sbuf.h"
#include "base/strs.h"

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t ninfo_hash(const ninfo_t *i)
{
    uint64_t h = 0;
    h = mix(h, (uint64_t)i->name);
    h = mix(h, (uint64_t)i->orig_name);
    h = mix(h, (uint64_t)i->file);
    h = mix(h, (uint64_t)i->objfile);
    h = mix(h, i->address);
    h = mix(h, (uint64_t)i->start_line);
    h = mix(h, (uint64_t)i->lineno);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

static bool ninfo_eq(const ninfo_t *a, const ninfo_t *b)
{
    return a->name == b->name && a->orig_name == b->orig_name && a->file == b->file &&
           a->objfile == b->objfile && a->address == b->address &&
           a->start_line == b->start_line && a->lineno == b->lineno;
}

/* Nodes, edges, tags and tag strings are each found through an index of
 * slots holding element numbers (0: empty), probed linearly from the
 * element's hash and rebuilt twice as large before it is half full. This
 * rebuilds one with nslots (a power of two) for elements first..n-1, each
 * slot holding i + bias. */
static int index_rebuild(const graph_t *g, uint32_t **slots, size_t *mask, size_t nslots,
                         size_t first, size_t n, uint32_t bias,
                         uint64_t (*hash_at)(const graph_t *g, size_t i))
{
    uint32_t *s = calloc(nslots, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (size_t i = first; i < n; i++) {
        size_t h = hash_at(g, i) & (nslots - 1);
        while (s[h])
            h = (h + 1) & (nslots - 1);
        s[h] = (uint32_t)i + bias;
    }
    free(*slots);
    *slots = s;
    *mask = nslots - 1;
    return 0;
}

/* The node index keeps each node's hash beside it (node index + 1 in the
 * low half, the hash's low half in the high half): a probe skips other
 * hashes without loading their nodes (a miss each, on a graph of 500,000
 * nodes), and the index grows from its slots alone. Rebuilt as large, or
 * made with nslots slots if there is none. */
static int node_rehash(graph_t *g, size_t nslots)
{
    return hslots_resize(&g->node_slots, &g->node_mask, nslots);
}

_Static_assert(sizeof(gnode_t) == 96 && offsetof(gnode_t, in_n) + 4 == 32,
               "graph_build's node fields fill the first 32 bytes of 96");

/* Room for one more node. nodes starts on a 64-byte line, so that each
 * node's first 32 bytes (96-byte nodes) sit in one line: nodes_mem is
 * realloc'd with a line to spare (a large block then grows in place, by
 * mremap, not copied beside itself) and the nodes move to the block's
 * new aligned start. -1 on OOM. */
static int grow_nodes(graph_t *g)
{
    if (g->n_nodes < g->cap_nodes)
        return 0;
    size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
    size_t old = g->nodes ? (size_t)((char *)g->nodes - (char *)g->nodes_mem) : 0;
    if (cap > (SIZE_MAX - 64) / sizeof(*g->nodes))
        return -1;
    char *mem = realloc(g->nodes_mem, cap * sizeof(*g->nodes) + 64);
    if (!mem)
        return -1;
    size_t off = (size_t)(-(uintptr_t)mem & 63);
    if (off != old)
        memmove(mem + off, mem + old, g->n_nodes * sizeof(*g->nodes));
    g->nodes_mem = mem;
    g->nodes = (gnode_t *)(void *)(mem + off);
    g->cap_nodes = cap;
    return 0;
}

static int64_t append_node(graph_t *g, const ninfo_t *i)
{
    ninfo_t info = *i;
    if (grow_nodes(g) < 0)
        return -1;
    gnode_t *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof(*n));
    n->info = info;
    return (int64_t)g->n_nodes++;
}

/* Index of the node with info i (hash hv), adding it; -1 on OOM. */
static int64_t find_or_add_node(graph_t *g, const ninfo_t *i, uint64_t hv)
{
    if ((g->n_nodes + 1) * 2 > g->node_mask + 1 && node_rehash(g, (g->node_mask + 1) * 2) < 0)
        return -1;
    size_t h = hv & g->node_mask;
    for (uint64_t v; (v = g->node_slots[h]); h = (h + 1) & g->node_mask)
        if (hslots_same_hash(v, hv) && ninfo_eq(&g->nodes[hslots_pos(v)].info, i))
            return (int64_t)hslots_pos(v);
    int64_t n = append_node(g, i);
    if (n >= 0)
        g->node_slots[h] = hslots_entry(hv, (size_t)n);
    return n;
}

void graph_free(graph_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_pnames; i++)
        free(g->pnames[i]);
    free(g->pnames);
    free(g->nodes_mem);
    free(g->node_slots);
    free(g->loc_first);
    free(g->loc_nodes);
    free(g->s_path_first);
    free(g->s_path);
    free(g->s_path_inl);
    free(g->sel);
    free(g->edges);
    free(g->edge_slots);
    free(g->in_refs);
    free(g->out_refs);
    free(g->tags);
    free(g->tag_slots);
    free(g->tag_first);
    free(g->tag_refs);
    for (size_t i = 0; i < g->n_tstr; i++)
        free(g->tstr[i]);
    free(g->tstr);
    free(g->tstr_slots);
    free(g->s_group);
    free(g->s_num_first);
    free(g->s_num);
    free(g->s_numv);
    free(g->score);
    free(g);
}

/* pprof's newTree: the samples' frames, from the root, as paths in a tree
 * whose children are distinct by NodeInfo (the node made of the same
 * line by graph_new). */
static int build_tree(graph_t *g)
{
    const work_t *w = g->w;
    size_t total = 0, nslots = 16;
    for (size_t si = 0; si < w->n_samples; si++)
        for (uint32_t i = 0; i < w->samples[si].n_locs; i++) {
            uint32_t loc = w->samples[si].locs[i];
            total += g->loc_first[loc + 1] - g->loc_first[loc];
        }
    while (nslots < 2 * total)
        nslots *= 2;
    const size_t mask = nslots - 1, first_tree = g->n_nodes;
    uint32_t *slots = calloc(nslots, sizeof(*slots)); /* tree node - first_tree + 1 */
    uint32_t *parent_of = malloc((total + 1) * sizeof(*parent_of));
    uint32_t *base_of = malloc((total + 1) * sizeof(*base_of));
    g->s_path_first = malloc((w->n_samples + 1) * sizeof(*g->s_path_first));
    g->s_path = malloc((total + 1) * sizeof(*g->s_path));
    g->s_path_inl = malloc((total + 1) * sizeof(*g->s_path_inl));
    int rc = -ENOMEM;
    if (!slots || !parent_of || !base_of || !g->s_path_first || !g->s_path || !g->s_path_inl)
        goto out;
    uint32_t k = 0;
    for (size_t si = 0; si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        g->s_path_first[si] = k;
        uint32_t parent = UINT32_MAX; /* the root's children hang from no node */
        for (uint32_t i = s->n_locs; i-- > 0;) {
            uint32_t first = g->loc_first[s->locs[i]], cnt = g->loc_first[s->locs[i] + 1] - first;
            for (uint32_t li = cnt; li-- > 0;) {
                uint32_t base = g->loc_nodes[first + li];
                size_t h = pairtab_hash(parent, base) & mask;
                for (; slots[h]; h = (h + 1) & mask)
                    if (parent_of[slots[h] - 1] == parent && base_of[slots[h] - 1] == base)
                        break;
                if (!slots[h]) {
                    int64_t n = append_node(g, &g->nodes[base].info);
                    if (n < 0)
                        goto out;
                    parent_of[n - (int64_t)first_tree] = parent;
                    base_of[n - (int64_t)first_tree] = base;
                    slots[h] = (uint32_t)(n - (int64_t)first_tree) + 1;
                }
                parent = (uint32_t)first_tree + slots[h] - 1;
                g->s_path[k] = parent;
                g->s_path_inl[k++] = li != cnt - 1;
            }
        }
    }
    g->s_path_first[w->n_samples] = k;
    rc = 0;
out:
    free(slots);
    free(parent_of);
    free(base_of);
    return rc;
}

/* The node info of line j of location l (its only one when it has no
 * lines); clean: each function's cleaned file name (-1: not yet). -1 on
 * OOM. */
static int make_ninfo(work_t *w, const graph_opts_t *o, const wloc_t *l, uint32_t j,
                      int64_t *clean, ninfo_t *ni)
{
    int64_t objfile = l->mapping ? w->p->mappings[l->mapping - 1].filename : 0;
    *ni = (ninfo_t){0};
    ni->address = l->address;
    uint32_t fn = l->n_lines ? l->lines[j].fn : 0;
    if (!fn) {
        ni->objfile = objfile;
        return 0;
    }
    const wfunc_t *f = &w->funcs[fn - 1];
    ni->lineno = l->lines[j].line;
    ni->name = f->name;
    if (f->filename) {
        if (clean[fn - 1] < 0) {
            char *c = path_clean(work_str(w, f->filename));
            if (!c)
                return -1;
            clean[fn - 1] = profile_intern(w->p, c);
            free(c);
            if (clean[fn - 1] < 0)
                return -1;
        }
        ni->file = clean[fn - 1];
    }
    if (o->obj_names || ni->name == 0) {
        ni->objfile = objfile;
        ni->start_line = f->start_line;
    }
    return 0;
}

/* Lines between a node info made and its node found (graph_new). */
#define NODE_AHEAD 8
typedef struct {
    ninfo_t ni;
    uint64_t hv;
} pend_t;

int graph_new(work_t *w, const graph_opts_t *o, graph_t **out)
{
    *out = NULL;
    graph_t *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->w = w;
    g->o = *o;
    int64_t *clean = NULL;
    size_t total = 0;
    for (size_t i = 0; i < w->n_locs; i++)
        total += w->locs[i].n_lines ? w->locs[i].n_lines : 1;
    g->loc_first = malloc((w->n_locs + 1) * sizeof(*g->loc_first));
    g->loc_nodes = malloc((total + 1) * sizeof(*g->loc_nodes));
    clean = malloc((w->n_funcs + 1) * sizeof(*clean));
    /* The node index made for half as many nodes as locations at once
     * (there are about as many as lines on a large profile of distinct
     * functions): at most one rebuild, where doubling from 1024 rebuilt
     * it ten times on the strings shape, each new table's pages faulted
     * in beside the old one. */
    size_t nslots = 1024;
    while (nslots < w->n_locs && nslots < ((size_t)1 << 31))
        nslots *= 2;
    if (!g->loc_first || !g->loc_nodes || !clean || node_rehash(g, nslots) < 0)
        goto oom;
    for (size_t i = 0; i < w->n_funcs; i++)
        clean[i] = -1;

    /* Each line's node is found NODE_AHEAD lines after its info is made:
     * meanwhile its slot in the node index, then the node there, load (a
     * cache miss each on a profile of 500,000 locations: 80% of this
     * function's time when found one after the other). Infos are made in
     * order, so their strings are interned in order. */
    pend_t ring[NODE_AHEAD];
    uint32_t k = 0; /* lines made; loc_nodes[k] is the k-th line's node */
    for (size_t i = 0; i <= w->n_locs; i++) {
        const wloc_t *l = &w->locs[i];
        uint32_t nl = i == w->n_locs ? NODE_AHEAD : l->n_lines ? l->n_lines : 1;
        if (i < w->n_locs)
            g->loc_first[i] = k;
        for (uint32_t j = 0; j < nl; j++, k++) {
            /* the line made NODE_AHEAD ago, whose ring entry is made next */
            if (k >= NODE_AHEAD && k - NODE_AHEAD < total) {
                const pend_t *pd = &ring[(k - NODE_AHEAD) % NODE_AHEAD];
                int64_t n = find_or_add_node(g, &pd->ni, pd->hv);
                if (n < 0)
                    goto oom;
                g->loc_nodes[k - NODE_AHEAD] = (uint32_t)n;
            }
            if (k >= NODE_AHEAD / 2 && k - NODE_AHEAD / 2 < total) {
                uint64_t hv = ring[(k - NODE_AHEAD / 2) % NODE_AHEAD].hv;
                uint64_t v = g->node_slots[hv & g->node_mask];
                if (v && hslots_same_hash(v, hv))
                    __builtin_prefetch(&g->nodes[hslots_pos(v)].info);
            }
            if (i < w->n_locs) {
                pend_t *pd = &ring[k % NODE_AHEAD];
                if (make_ninfo(w, o, l, j, clean, &pd->ni) < 0)
                    goto oom;
                pd->hv = ninfo_hash(&pd->ni);
                __builtin_prefetch(&g->node_slots[pd->hv & g->node_mask]);
            }
        }
    }
    k = (uint32_t)total;
    g->loc_first[w->n_locs] = k;
    free(clean);
    if (o->call_tree && build_tree(g) < 0) {
        graph_free(g);
        return -ENOMEM;
    }
    *out = g;
    return 0;
oom:
    free(clean);
    graph_free(g);
    return -ENOMEM;
}

/* --- edges -------------------------------------------------------------------- */

static uint64_t edge_hash_at(const graph_t *g, size_t i)
{
    return pairtab_hash(g->edges[i].src, g->edges[i].dst);
}

static int edge_rehash(graph_t *g, size_t nslots)
{
    return index_rebuild(g, &g->edge_slots, &g->edge_mask, nslots, 0, g->n_edges, 1, edge_hash_at);
}

/* find_or_add_edge's new edge, out of line. NULL on OOM. */
static __attribute__((noinline)) gedge_t *add_edge(graph_t *g, uint32_t src, uint32_t dst)
{
    if ((g->n_edges + 1) * 2 > g->edge_mask + 1 && edge_rehash(g, (g->edge_mask + 1) * 2) < 0)
        return NULL;
    size_t h = pairtab_hash(src, dst) & g->edge_mask;
    while (g->edge_slots[h])
        h = (h + 1) & g->edge_mask;
    if (err_grow((void **)&g->edges, &g->cap_edges, g->n_edges + 1, sizeof(*g->edges)) < 0)
        return NULL;
    gedge_t *e = &g->edges[g->n_edges];
    memset(e, 0, sizeof(*e));
    e->src = src;
    e->dst = dst;
    g->edge_slots[h] = (uint32_t)g->n_edges + 1;
    g->n_edges++;
    return e;
}

/* Inline in graph_build's visits, which find an edge far more often than
 * they add one (samples -svg: 11.2M lookups, 236K edges added; entering
 * and leaving the call was 223M of its 588M instructions). The index has
 * room: add_edge grows it before an edge that would fill half of it. */
static inline __attribute__((always_inline)) gedge_t *find_or_add_edge(graph_t *g, uint32_t src,
                                                                      uint32_t dst, bool *created)
{
    for (size_t h = pairtab_hash(src, dst) & g->edge_mask; g->edge_slots[h];
         h = (h + 1) & g->edge_mask) {
        gedge_t *e = &g->edges[g->edge_slots[h] - 1];
        if (e->src == src && e->dst == dst) {
            *created = false;
            return e;
        }
    }
    *created = true;
    return add_edge(g, src, dst);
}

static int build_adjacency(graph_t *g)
{
    free(g->in_refs);
    free(g->out_refs);
    g->in_refs = malloc((g->n_edges + 1) * sizeof(uint32_t));
    g->out_refs = malloc((g->n_edges + 1) * sizeof(uint32_t));
    if (!g->in_refs || !g->out_refs)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_nodes; i++)
        g->nodes[i].in_n = g->nodes[i].out_n = 0;
    for (size_t i = 0; i < g->n_edges; i++) {
        g->nodes[g->edges[i].dst].in_n++;
        g->nodes[g->edges[i].src].out_n++;
    }
    uint32_t in = 0, outp = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        g->nodes[i].in_start = in;
        g->nodes[i].out_start = outp;
        in += g->nodes[i].in_n;
        outp += g->nodes[i].out_n;
        g->nodes[i].in_n = g->nodes[i].out_n = 0;
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        gnode_t *d = &g->nodes[g->edges[i].dst], *s = &g->nodes[g->edges[i].src];
        g->in_refs[d->in_start + d->in_n++] = (uint32_t)i;
        g->out_refs[s->out_start + s->out_n++] = (uint32_t)i;
    }
    return 0;
}

/* --- tags ---------------------------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
    return hash_fnv1a(s, strlen(s));
}

static uint64_t tstr_hash_at(const graph_t *g, size_t i)
{
    return str_hash(g->tstr[i]);
}

/* Ids start at 1 (0 is ""), and a slot holds the id itself. */
static int tstr_rehash(graph_t *g, size_t nslots)
{
    return index_rebuild(g, &g->tstr_slots, &g->tstr_mask, nslots, 1, g->n_tstr, 0, tstr_hash_at);
}

/* Interns a tag string; its id (0 for ""), or -1 on OOM. */
static int64_t tstr_intern(graph_t *g, const char *s)
{
    if (!*s)
        return 0;
    if (g->n_tstr == 0) {
        if (err_grow((void **)&g->tstr, &g->cap_tstr, 1, sizeof(*g->tstr)) < 0 ||
            tstr_rehash(g, 128) < 0)
            return -1;
        g->tstr[0] = NULL;
        g->n_tstr = 1;
    }
    if ((g->n_tstr + 1) * 2 > g->tstr_mask + 1 && tstr_rehash(g, (g->tstr_mask + 1) * 2) < 0)
        return -1;
    size_t h = str_hash(s) & g->tstr_mask;
    for (; g->tstr_slots[h]; h = (h + 1) & g->tstr_mask)
        if (strcmp(g->tstr[g->tstr_slots[h]], s) == 0)
            return g->tstr_slots[h];
    if (err_grow((void **)&g->tstr, &g->cap_tstr, g->n_tstr + 1, sizeof(*g->tstr)) < 0)
        return -1;
    char *c = strdup(s);
    if (!c)
        return -1;
    g->tstr[g->n_tstr] = c;
    g->tstr_slots[h] = (uint32_t)g->n_tstr;
    return (int64_t)g->n_tstr++;
}

/* Samples repeat their labels: tags_prepare keeps the group of the last
 * string-label lists seen (up to MEMO_PAIRS pairs, in the samples'
 * order) and the name of the last "bytes" values, MEMO_SLOTS of each by
 * hash, instead of formatting, joining and interning them again (3% of
 * strings -svg's perf samples). The values' memo has two ways a slot, the
 * last used first: a few sizes make most samples, and two of them sharing
 * a slot took turns evicting each other (the samples shape's 16 sizes:
 * 125,123 names made for 1,000,000 samples, 3.8% of its -svg). */
#define MEMO_SLOTS 64
#define MEMO_PAIRS 4

typedef struct {
    uint32_t n;                    /* pairs; 0: empty slot */
    int64_t kv[2 * MEMO_PAIRS];    /* key, str of each */
    uint32_t gid;
} group_memo_t;

typedef struct {
    int64_t v;
    uint32_t nid; /* 0: empty slot */
} num_memo_t;

/* Per sample, once: the joined labels (pprof's joinLabels, without
 * pprof::base) and the names of its "bytes" numeric tags. */
static int tags_prepare(graph_t *g)
{
    work_t *w = g->w;
    int64_t key_bytes = work_label_key(w, "bytes"), key_base = work_label_key(w, "pprof::base");
    size_t nnum = 0;
    for (size_t i = 0; i < w->n_samples; i++)
        for (uint32_t j = 0; j < w->samples[i].n_labels; j++) {
            const profile_label_t *l = &w->samples[i].labels[j];
            if (l->key == key_bytes && l->str == 0 && (l->num != 0 || l->num_unit != 0))
                nnum++;
        }
    g->s_group = malloc((w->n_samples + 1) * sizeof(*g->s_group));
    g->s_num_first = malloc((w->n_samples + 1) * sizeof(*g->s_num_first));
    g->s_num = malloc((nnum + 1) * sizeof(*g->s_num));
    g->s_numv = malloc((nnum + 1) * sizeof(*g->s_numv));
    if (!g->s_group || !g->s_num_first || !g->s_num || !g->s_numv)
        return -ENOMEM;
    const char *unit = g->o.bytes_unit ? g->o.bytes_unit : "bytes";
    const char *tunit = g->o.tag_unit ? g->o.tag_unit : "minimum";
    sbuf_t b = {0};
    char **parts = NULL;
    size_t cap_parts = 0;
    size_t k = 0;
    int rc = 0;
    group_memo_t *gm = calloc(MEMO_SLOTS, sizeof(*gm));
    num_memo_t (*nm)[2] = calloc(MEMO_SLOTS, sizeof(*nm));
    if (!gm || !nm)
        goto oom;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        g->s_num_first[i] = (uint32_t)k;
        /* the sample's string labels as pairs, looked up in gm */
        group_memo_t key = {0};
        uint64_t hk = 0;
        for (uint32_t j = 0; j < s->n_labels && key.n <= MEMO_PAIRS; j++) {
            const profile_label_t *l = &s->labels[j];
            if (l->str == 0 || l->key == key_base)
                continue;
            if (key.n < MEMO_PAIRS) {
                key.kv[2 * key.n] = l->key;
                key.kv[2 * key.n + 1] = l->str;
                hk = (hk ^ (uint64_t)l->key * 0x9e3779b97f4a7c15ull ^ (uint64_t)l->str) *
                     0xbf58476d1ce4e5b9ull;
            }
            key.n++;
        }
        group_memo_t *slot = &gm[(hk ^ hk >> 31) % MEMO_SLOTS];
        bool memo = key.n > 0 && key.n <= MEMO_PAIRS;
        if (memo && slot->n == key.n &&
            memcmp(slot->kv, key.kv, 2 * key.n * sizeof(*key.kv)) == 0) {
            g->s_group[i] = slot->gid;
            goto numeric;
        }
        size_t np = 0;
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (l->str == 0 || l->key == key_base)
                continue;
            if (np == cap_parts) {
                size_t nc = cap_parts ? cap_parts * 2 : 8;
                char **n = realloc(parts, nc * sizeof(*n));
                if (!n)
                    goto oom;
                parts = n;
                cap_parts = nc;
            }
            sbuf_t t = {0};
            sb_printf(&t, "%s:%s", work_str(w, l->key), work_str(w, l->str));
            if (t.oom)
                goto oom;
            parts[np++] = sb_steal(&t);
        }
        strs_sort(parts, np);
        sb_reset(&b);
        for (size_t j = 0; j < np; j++) {
            if (j)
                sb_puts(&b, "\\n");
            sb_puts(&b, parts[j]);
            free(parts[j]);
        }
        if (b.oom)
            goto oom;
        int64_t gid = tstr_intern(g, sb_cstr(&b));
        if (gid < 0)
            goto oom;
        g->s_group[i] = (uint32_t)gid;
        if (memo) {
            key.gid = (uint32_t)gid;
            *slot = key;
        }
    numeric:
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (!(l->key == key_bytes && l->str == 0 && (l->num != 0 || l->num_unit != 0)))
                continue;
            num_memo_t *ns = nm[((uint64_t)l->num * 0x9e3779b97f4a7c15ull) >> 58];
            int64_t nid = -1;
            if (ns[0].nid && ns[0].v == l->num) {
                nid = ns[0].nid;
            } else if (ns[1].nid && ns[1].v == l->num) {
                nid = ns[1].nid;
                ns[1] = ns[0];
                ns[0] = (num_memo_t){l->num, (uint32_t)nid};
            } else {
                char name[64];
                /* ~2,750 instructions a call, snprintf's "%.2f" most of
                 * them: the units looked up once for every value (a
                 * resolved scaler) measured 375M -> 344M of samples -svg's
                 * 9.78G (callgrind, one run each). Not done. */
                measure_scaled_label(name, sizeof(name), l->num, unit, tunit);
                if ((nid = tstr_intern(g, name)) < 0)
                    goto oom;
                if (nid > 0) {
                    ns[1] = ns[0];
                    ns[0] = (num_memo_t){l->num, (uint32_t)nid};
                }
            }
            g->s_num[k] = (uint32_t)nid;
            g->s_numv[k] = l->num;
            k++;
        }
    }
    g->s_num_first[w->n_samples] = (uint32_t)k;
    goto out;
oom:
    rc = -ENOMEM;
out:
    free(gm);
    free(nm);
    free(parts);
    sb_free(&b);
    return rc;
}

static inline uint64_t tag_hash(uint32_t node, bool numeric, uint32_t group, uint32_t name)
{
    uint64_t h = ((uint64_t)node << 32 | group) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)name << 1 | numeric) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static uint64_t tag_hash_at(const graph_t *g, size_t i)
{
    const gtag_t *t = &g->tags[i];
    return tag_hash(t->node, t->numeric, t->group, t->name);
}

static int tag_rehash(graph_t *g, size_t nslots)
{
    return index_rebuild(g, &g->tag_slots, &g->tag_mask, nslots, 0, g->n_tags, 1, tag_hash_at);
}

/* find_or_add_tag's new tag, out of line. NULL on OOM. */
static __attribute__((noinline)) gtag_t *add_tag(graph_t *g, uint32_t node, bool numeric,
                                                 uint32_t group, uint32_t name, int64_t value)
{
    if ((g->n_tags + 1) * 2 > g->tag_mask + 1 && tag_rehash(g, (g->tag_mask + 1) * 2) < 0)
        return NULL;
    size_t h = tag_hash(node, numeric, group, name) & g->tag_mask;
    while (g->tag_slots[h])
        h = (h + 1) & g->tag_mask;
    if (err_grow((void **)&g->tags, &g->cap_tags, g->n_tags + 1, sizeof(*g->tags)) < 0)
        return NULL;
    gtag_t *t = &g->tags[g->n_tags];
    memset(t, 0, sizeof(*t));
    t->node = node;
    t->numeric = numeric;
    t->group = group;
    t->name = name;
    t->value = value;
    g->tag_slots[h] = (uint32_t)g->n_tags + 1;
    g->n_tags++;
    return t;
}

/* Inline in tags_add, as find_or_add_edge in graph_build. */
static inline __attribute__((always_inline)) gtag_t *
find_or_add_tag(graph_t *g, uint32_t node, bool numeric, uint32_t group, uint32_t name,
                int64_t value)
{
    for (size_t h = tag_hash(node, numeric, group, name) & g->tag_mask; g->tag_slots[h];
         h = (h + 1) & g->tag_mask) {
        gtag_t *t = &g->tags[g->tag_slots[h] - 1];
        if (t->node == node && t->numeric == numeric && t->group == group && t->name == name)
            return t;
    }
    return add_tag(g, node, numeric, group, name, value);
}

/* pprof's Node.addSample, the tag part. Measured and dropped: inline in
 * its callers, samples -svg 8,303.3M -> 8,317.8M instructions (callgrind,
 * one run each). */
static int tags_add(graph_t *g, uint32_t node, size_t si, int64_t v, int64_t dv, bool flat)
{
    uint32_t grp = g->s_group[si];
    if (grp) {
        gtag_t *t = find_or_add_tag(g, node, false, grp, grp, 0);
        if (!t)
            return -ENOMEM;
        if (flat) {
            t->flat_div += dv;
            t->flat += v;
        } else {
            t->cum_div += dv;
            t->cum += v;
        }
    }
    for (uint32_t k = g->s_num_first[si]; k < g->s_num_first[si + 1]; k++) {
        gtag_t *t = find_or_add_tag(g, node, true, grp, g->s_num[k], g->s_numv[k]);
        if (!t)
            return -ENOMEM;
        if (flat) {
            t->flat_div += dv;
            t->flat += v;
        } else {
            t->cum_div += dv;
            t->cum += v;
        }
    }
    return 0;
}

static int tags_reset(graph_t *g)
{
    if (!g->s_group) {
        int rc = tags_prepare(g);
        if (rc < 0)
            return rc;
    }
    g->n_tags = 0;
    if (g->tag_slots)
        memset(g->tag_slots, 0, (g->tag_mask + 1) * sizeof(*g->tag_slots));
    else if (tag_rehash(g, 1024) < 0)
        return -ENOMEM;
    return 0;
}

static int tags_adjacency(graph_t *g)
{
    free(g->tag_first);
    free(g->tag_refs);
    g->tag_first = calloc(g->n_nodes + 1, sizeof(*g->tag_first));
    g->tag_refs = malloc((g->n_tags + 1) * sizeof(*g->tag_refs));
    if (!g->tag_first || !g->tag_refs)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_tags; i++)
        g->tag_first[g->tags[i].node + 1]++;
    for (size_t i = 0; i < g->n_nodes; i++)
        g->tag_first[i + 1] += g->tag_first[i];
    uint32_t *fill = calloc(g->n_nodes + 1, sizeof(*fill));
    if (!fill)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_tags; i++) {
        uint32_t n = g->tags[i].node;
        g->tag_refs[g->tag_first[n] + fill[n]++] = (uint32_t)i;
    }
    free(fill);
    return 0;
}

void graph_trim_tags(graph_t *g, int64_t cutoff)
{
    for (size_t i = 0; i < g->n_tags; i++) {
        gtag_t *t = &g->tags[i];
        int64_t f = t->flat < 0 ? -t->flat : t->flat, c = t->cum < 0 ? -t->cum : t->cum;
        if (f < cutoff && c < cutoff)
            t->removed = true;
    }
}

/* pprof's countTags: tags with a flat value, label and numeric. */
static int count_tags(const graph_t *g, uint32_t node)
{
    if (!g->o.tags || !g->tag_first)
        return 0;
    int n = 0;
    for (uint32_t i = g->tag_first[node]; i < g->tag_first[node + 1]; i++) {
        const gtag_t *t = &g->tags[g->tag_refs[i]];
        if (!t->removed && t->flat != 0)
            n++;
    }
    return n;
}

/* --- building -------------------------------------------------------------------- */

/* One sample's walk from the root. */
typedef struct {
    size_t si;
    int64_t v, dv;
    uint32_t stamp;
    bool tags;
    bool edges;
    bool residual; /* frames were skipped since the parent */
    int64_t parent; /* -1 at the root */
    const uint64_t *bound; /* edge_bounds, or NULL */
    uint64_t floor;
} walk_t;

/* Buckets of edge_bounds: 2 MiB, few enough that a large profile's edges
 * share each one, with sums still far below any useful edge cutoff. */
#define BOUND_BITS 18

/* For each bucket of (caller, callee) pairs, the sum of |value| over every
 * visit of the pairs in it: a bound on the |weight| of each of those
 * edges. graph_build stores no edge whose bound is below edge_floor — a
 * large profile has millions of light edges that trimming would remove
 * anyway. NULL on OOM. */
static uint64_t *edge_bounds(const graph_t *g, const bool *kept)
{
    const work_t *w = g->w;
    const size_t mask = ((size_t)1 << BOUND_BITS) - 1;
    uint64_t *b = calloc(mask + 1, sizeof(*b));
    if (!b)
        return NULL;
    for (size_t si = 0; si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        int64_t v = s->values[g->o.value_index];
        /* |INT64_MIN| is INT64_MAX + 1: still a bound */
        uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
        if (a == 0)
            continue;
        int64_t parent = -1;
        for (uint32_t i = s->n_locs; i-- > 0;) {
            uint32_t loc = s->locs[i];
            for (uint32_t ni = g->loc_first[loc + 1]; ni-- > g->loc_first[loc];) {
                uint32_t n = g->loc_nodes[ni];
                if (kept && !kept[n])
                    continue;
                if (parent >= 0 && (uint32_t)parent != n) {
                    uint64_t *c = &b[pairtab_hash((uint32_t)parent, n) & mask];
                    *c = *c > UINT64_MAX - a ? UINT64_MAX : *c + a;
                }
                parent = n;
            }
        }
    }
    return b;
}

/* Adds the sample to node n, reached from the walk's parent (inl: by an
 * inline call): cum once per sample, and the edge from the parent. */
static inline __attribute__((always_inline)) int visit(graph_t *g, walk_t *k, uint32_t n, bool inl)
{
    gnode_t *nd = &g->nodes[n];
    if (nd->stamp != k->stamp) {
        nd->stamp = k->stamp;
        nd->cum += k->v;
        nd->cum_div += k->dv;
        if (k->tags && tags_add(g, n, k->si, k->v, k->dv, false) < 0)
            return -ENOMEM;
    }
    if (k->edges && k->parent >= 0 && (uint32_t)k->parent != n &&
        (!k->bound ||
         k->bound[pairtab_hash((uint32_t)k->parent, n) & (((size_t)1 << BOUND_BITS) - 1)] >=
             k->floor)) {
        bool created;
        gedge_t *e = find_or_add_edge(g, (uint32_t)k->parent, n, &created);
        if (!e)
            return -ENOMEM;
        if (created) {
            e->inl = inl;
            e->residual = k->residual;
        }
        if (e->stamp != k->stamp) {
            if (!created) {
                if (k->residual)
                    e->residual = true;
                if (!inl)
                    e->inl = false;
            }
            e->stamp = k->stamp;
            e->weight += k->v;
            e->weight_div += k->dv;
        }
    }
    k->parent = n;
    k->residual = false;
    return 0;
}

/* A large profile's samples name locations all over the graph's arrays, a
 * chain of cache misses each (loc_view's entry, then the node; loc_first,
 * loc_nodes and the nodes for a location of several lines): they are
 * loaded in stages while earlier samples are added, as merge.c's
 * prefetch_locations (the call tree's paths are its s_path). */
/* Whether location loc's bit is set in a map of a bit per location. */
#define LOC_BIT(map, loc) ((map)[(loc) / 64] >> ((loc) % 64) & 1)

/* A bit per location one of whose nodes is marked: a pass over the
 * samples that has nothing to do at a location without one learns it
 * from this small map instead of loc_first, loc_nodes and marked, read
 * at random. NULL on OOM. */
static uint64_t *locs_marked(const graph_t *g, const bool *marked)
{
    size_t nl = g->w->n_locs;
    uint64_t *map = calloc(nl / 64 + 1, sizeof(*map));
    for (size_t loc = 0; map && loc < nl; loc++)
        for (uint32_t ni = g->loc_first[loc]; ni < g->loc_first[loc + 1]; ni++)
            if (marked[g->loc_nodes[ni]]) {
                map[loc / 64] |= (uint64_t)1 << (loc % 64);
                break;
            }
    return map;
}

/* Per location: its one node + 1 when it has one line and that node is
 * kept (kept NULL: every node), 0 when it is not, LOC_MULTI when the
 * location has several lines (then read from loc_first and loc_nodes).
 * A build's frame is then one load, where loc_first, loc_nodes and kept
 * were three. NULL on OOM. */
#define LOC_MULTI UINT32_MAX

static uint32_t *loc_view(const graph_t *g, const bool *kept)
{
    size_t nl = g->w->n_locs;
    uint32_t *loc1 = malloc((nl + 1) * sizeof(*loc1));
    for (size_t loc = 0; loc1 && loc < nl; loc++) {
        uint32_t first = g->loc_first[loc], cnt = g->loc_first[loc + 1] - first;
        uint32_t n = cnt == 1 ? g->loc_nodes[first] : 0;
        loc1[loc] = cnt > 1 ? LOC_MULTI : cnt == 0 || (kept && !kept[n]) ? 0 : n + 1;
    }
    return loc1;
}

/* loc1: the build's loc_view. */
static void prefetch_sample(const graph_t *g, size_t si, const uint32_t *loc1)
{
    const work_t *w = g->w;
    if (g->o.call_tree) {
        if (si + 1 < w->n_samples)
            for (uint32_t i = g->s_path_first[si + 1]; i < g->s_path_first[si + 2]; i++)
                __builtin_prefetch(&g->nodes[g->s_path[i]].stamp);
        return;
    }
    if (si + 3 < w->n_samples) {
        const wsample_t *s = &w->samples[si + 3];
        for (uint32_t i = 0; i < s->n_locs; i++)
            __builtin_prefetch(&loc1[s->locs[i]]);
    }
    if (si + 2 < w->n_samples) {
        const wsample_t *s = &w->samples[si + 2];
        __builtin_prefetch(s->values);
        for (uint32_t i = 0; i < s->n_locs; i++) {
            uint32_t one = loc1[s->locs[i]];
            /* visit's fields: one line (gnode_t) */
            if (one == LOC_MULTI)
                __builtin_prefetch(&g->loc_first[s->locs[i]]);
            else if (one)
                __builtin_prefetch(&g->nodes[one - 1]);
        }
    }
    if (si + 1 < w->n_samples) {
        const wsample_t *s = &w->samples[si + 1];
        for (uint32_t i = 0; i < s->n_locs; i++)
            if (loc1[s->locs[i]] == LOC_MULTI)
                for (uint32_t ni = g->loc_first[s->locs[i]]; ni < g->loc_first[s->locs[i] + 1];
                     ni++)
                    __builtin_prefetch(&g->nodes[g->loc_nodes[ni]]);
    }
}

/* Bytes of the arrays a build reads at each frame: when they fit in the
 * core's cache, prefetch_sample's loops only cost their instructions. */
#define PREFETCH_MIN_BYTES ((size_t)1 << 20)

/* Whether a build's frames miss the cache enough for prefetch_sample. */
static bool worth_prefetching(const graph_t *g)
{
    size_t n_locs = g->w->n_locs;
    size_t bytes = g->n_nodes * sizeof(*g->nodes) +
                   (n_locs + 1 + g->loc_first[n_locs]) * sizeof(*g->loc_first);
    return bytes > PREFETCH_MIN_BYTES;
}

int graph_build(graph_t *g, const bool *kept)
{
    work_t *w = g->w;
    const bool prefetch = worth_prefetching(g);
    for (size_t i = 0; i < g->n_nodes; i++) {
        gnode_t *n = &g->nodes[i];
        n->flat = n->flat_div = n->cum = n->cum_div = 0;
    }
    g->n_edges = 0;
    if (g->edge_slots)
        memset(g->edge_slots, 0, (g->edge_mask + 1) * sizeof(*g->edge_slots));
    else if (edge_rehash(g, 1024) < 0)
        return -ENOMEM;
    bool tags = g->o.tags && !g->nodes_only;
    uint64_t *bound = NULL;
    if (g->edge_floor > 0 && !g->nodes_only && !g->o.call_tree &&
        !(bound = edge_bounds(g, kept)))
        return -ENOMEM;
    if (g->o.tags && tags_reset(g) < 0) {
        free(bound);
        return -ENOMEM;
    }
    uint32_t *loc1 = NULL;
    if (!g->o.call_tree && !(loc1 = loc_view(g, kept))) {
        free(bound);
        return -ENOMEM;
    }

    for (size_t si = 0; si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        if (prefetch)
            prefetch_sample(g, si, loc1);
        int64_t v = s->values[g->o.value_index];
        int64_t dv = g->o.mean_index >= 0 ? s->values[g->o.mean_index] : 0;
        if (v == 0 && dv == 0)
            continue;
        walk_t k = {si,    v,  dv, ++g->stamp, tags, !g->nodes_only, false, -1,
                    bound, (uint64_t)g->edge_floor};
        if (g->o.call_tree) {
            /* kept is for graphs only: a tree is trimmed by trim_tree */
            for (uint32_t i = g->s_path_first[si]; i < g->s_path_first[si + 1]; i++)
                if (visit(g, &k, g->s_path[i], g->s_path_inl[i]) < 0)
                    goto oom;
        } else {
            for (uint32_t i = s->n_locs; i-- > 0;) {
                uint32_t loc = s->locs[i], one = loc1[loc];
                if (one != LOC_MULTI) {
                    if (!one)
                        k.residual = true;
                    else if (visit(g, &k, one - 1, false) < 0)
                        goto oom;
                    continue;
                }
                uint32_t first = g->loc_first[loc], cnt = g->loc_first[loc + 1] - first;
                for (uint32_t ni = cnt; ni-- > 0;) {
                    uint32_t n = g->loc_nodes[first + ni];
                    if (kept && !kept[n])
                        k.residual = true;
                    else if (visit(g, &k, n, ni != cnt - 1) < 0)
                        goto oom;
                }
            }
        }
        if (k.parent >= 0 && !k.residual) {
            g->nodes[k.parent].flat += v;
            g->nodes[k.parent].flat_div += dv;
            if (tags && tags_add(g, (uint32_t)k.parent, si, v, dv, true) < 0)
                goto oom;
        }
    }

    free(bound);
    free(loc1);
    free(g->sel);
    g->sel = malloc((g->n_nodes + 1) * sizeof(*g->sel));
    if (!g->sel)
        return -ENOMEM;
    g->n_sel = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gnode_t *n = &g->nodes[i];
        if (n->cum == 0 && n->flat == 0)
            continue;
        if (g->o.drop_negative && (n->flat < 0 || (n->flat == 0 && n->cum < 0)))
            continue;
        g->sel[g->n_sel++] = (uint32_t)i;
    }
    if (g->o.tags && tags_adjacency(g) < 0)
        return -ENOMEM;
    return build_adjacency(g);
oom:
    free(bound);
    free(loc1);
    return -ENOMEM;
}

/* --- names and order --------------------------------------------------------------- */

const char *graph_node_name(graph_t *g, uint32_t idx)
{
    if (idx >= g->n_pnames) {
        size_t np = g->n_nodes > idx ? g->n_nodes : (size_t)idx + 1;
        char **p = realloc(g->pnames, np * sizeof(*p));
        if (!p)
            return "";
        memset(p + g->n_pnames, 0, (np - g->n_pnames) * sizeof(*p));
        g->pnames = p;
        g->n_pnames = np;
    }
    if (g->pnames[idx])
        return g->pnames[idx];
    gnode_t *n = &g->nodes[idx];
    const work_t *w = g->w;
    const ninfo_t *i = &n->info;
    sbuf_t b = {0};
    if (i->address)
        sb_printf(&b, "%016" PRIx64, i->address);
    const char *name = work_str(w, i->name), *file = work_str(w, i->file);
    if (*name) {
        if (b.len)
            sb_putc(&b, ' ');
        sb_puts(&b, name);
    }
    const char *tail = NULL;
    char tmp[64];
    sbuf_t t = {0};
    if (i->lineno != 0) {
        sb_printf(&t, "%s:%" PRId64, file, i->lineno);
        tail = sb_cstr(&t);
    } else if (*file) {
        tail = file;
    } else if (*name) {
        tail = NULL;
    } else if (*work_str(w, i->objfile)) {
        char ob[4096];
        sb_printf(&t, "[%s]", path_base(work_str(w, i->objfile), ob, sizeof(ob)));
        tail = sb_cstr(&t);
    } else {
        snprintf(tmp, sizeof(tmp), "<unknown>");
        tail = tmp;
    }
    if (tail) {
        if (b.len)
            sb_putc(&b, ' ');
        sb_puts(&b, tail);
    }
    sb_free(&t);
    if (b.oom) {
        sb_free(&b);
        return "";
    }
    g->pnames[idx] = sb_steal(&b);
    return g->pnames[idx];
}

/* fmt.Sprint of pprof's NodeInfo, the final tie-break of every order. */
static char *info_string(graph_t *g, uint32_t idx)
{
    const ninfo_t *i = &g->nodes[idx].info;
    const work_t *w = g->w;
    sbuf_t b = {0};
    sb_printf(&b, "{%s %s %" PRIu64 " %s %" PRId64 " %" PRId64 " %s}", work_str(w, i->name),
              work_str(w, i->orig_name), i->address, work_str(w, i->file), i->start_line,
              i->lineno, work_str(w, i->objfile));
    return sb_steal(&b);
}

static int compare_nodes(graph_t *g, uint32_t a, uint32_t b)
{
    char *x = info_string(g, a), *y = info_string(g, b);
    int c = strcmp(x, y);
    free(x);
    free(y);
    return c;
}

static inline int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

#define DESC(x, y)                                                                            \
    do {                                                                                      \
        int64_t _x = (x), _y = (y);                                                           \
        if (_x != _y)                                                                         \
            return _x > _y ? -1 : 1;                                                          \
    } while (0)

typedef struct {
    graph_t *g;
    int order;
} sort_ctx_t;

static int node_cmp(const void *pa, const void *pb, void *arg)
{
    const sort_ctx_t *c = arg;
    graph_t *g = c->g;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const gnode_t *x = &g->nodes[a], *y = &g->nodes[b];
    int r;
    switch (c->order) {
    case GORDER_FLAT:
        DESC(abs64(x->flat), abs64(y->flat));
        if ((r = strcmp(graph_node_name(g, a), graph_node_name(g, b))) != 0)
            return r;
        DESC(abs64(x->cum), abs64(y->cum));
        break;
    case GORDER_CUM:
        DESC(abs64(x->cum), abs64(y->cum));
        if ((r = strcmp(graph_node_name(g, a), graph_node_name(g, b))) != 0)
            return r;
        DESC(abs64(x->flat), abs64(y->flat));
        break;
    case GORDER_NAME:
        if ((r = strcmp(work_str(g->w, x->info.name), work_str(g->w, y->info.name))) != 0)
            return r;
        break;
    case GORDER_FILE:
        if ((r = strcmp(work_str(g->w, x->info.file), work_str(g->w, y->info.file))) != 0)
            return r;
        if (x->info.start_line != y->info.start_line)
            return x->info.start_line < y->info.start_line ? -1 : 1;
        break;
    case GORDER_ADDRESS:
        if (x->info.address != y->info.address)
            return x->info.address < y->info.address ? -1 : 1;
        break;
    case GORDER_ENTROPY: {
        /* abs64 as Go computes it: the most negative value stays so */
        uint64_t sx = (uint64_t)g->score[a], sy = (uint64_t)g->score[b];
        sx = g->score[a] < 0 ? -sx : sx;
        sy = g->score[b] < 0 ? -sy : sy;
        if (sx != sy)
            return (int64_t)sx > (int64_t)sy ? -1 : 1;
        if ((r = strcmp(graph_node_name(g, a), graph_node_name(g, b))) != 0)
            return r;
        DESC(abs64(x->flat), abs64(y->flat));
        break;
    }
    }
    if (a == b)
        return 0;
    return compare_nodes(g, a, b);
}

void graph_sort_nodes(graph_t *g, uint32_t *idx, size_t n, int order)
{
    sort_ctx_t c = {g, order};
    qsort_r(idx, n, sizeof(*idx), node_cmp, &c);
}

/* Go's int64(f) on amd64: out of range and NaN give the most negative
 * value. */
static int64_t go_f2i(double f)
{
    if (isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)f;
}

/* pprof's edgeEntropyScore over the live edges of refs. */
static double edge_entropy(const graph_t *g, const uint32_t *refs, uint32_t n, int64_t self)
{
    double score = 0;
    int64_t total = self;
    for (uint32_t i = 0; i < n; i++) {
        const gedge_t *e = &g->edges[refs[i]];
        if (!e->removed && e->weight > 0)
            total += abs64(e->weight);
    }
    if (total != 0) {
        for (uint32_t i = 0; i < n; i++) {
            const gedge_t *e = &g->edges[refs[i]];
            if (e->removed)
                continue;
            double frac = (double)abs64(e->weight) / (double)total;
            score += -frac * log2(frac);
        }
        if (self > 0) {
            double frac = (double)abs64(self) / (double)total;
            score += -frac * log2(frac);
        }
    }
    return score;
}

static uint32_t live_count(const graph_t *g, const uint32_t *refs, uint32_t n)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        c += !g->edges[refs[i]].removed;
    return c;
}

int graph_sort_entropy(graph_t *g)
{
    free(g->score);
    g->score = malloc((g->n_nodes + 1) * sizeof(*g->score));
    if (!g->score)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        const gnode_t *n = &g->nodes[ni];
        const uint32_t *in = &g->in_refs[n->in_start], *out = &g->out_refs[n->out_start];
        double score = 0;
        if (live_count(g, in, n->in_n) == 0)
            score++;
        else
            score += edge_entropy(g, in, n->in_n, 0);
        if (live_count(g, out, n->out_n) == 0)
            score++;
        else
            score += edge_entropy(g, out, n->out_n, n->flat);
        g->score[ni] = (int64_t)((uint64_t)go_f2i(score * (double)n->cum) + (uint64_t)n->flat);
    }
    graph_sort_nodes(g, g->sel, g->n_sel, GORDER_ENTROPY);
    return 0;
}

/* --- entropy of a large visual graph, in parts ------------------------------------ */

/* The entropy order of a visual graph reads every edge among the kept nodes,
 * and trimming to node_count then keeps few of them: deep stacks make
 * millions (16 million, 0.5 GB, on 40,000 stacks of 300-600 frames). Above
 * ENTROPY_PART_EDGES edges the scores are computed in passes over the
 * samples instead, each holding only the edges into (then out of) one part
 * of the nodes. A part's edges come in the order of the whole graph's (the
 * order of first visit), so every sum is the one graph_sort_entropy makes,
 * term for term: the same scores. */
#define ENTROPY_PART_EDGES ((size_t)2 << 20)
#define EST_BITS 25 /* 4 MiB of bits: linear counting to ~10x as many pairs */

enum { PASS_COUNT, PASS_IN, PASS_OUT };

/* The walks' view of the kept graph: per location loc_view's, and per
 * node its part. One lookup per frame: the walks are many. */
typedef struct {
    uint32_t *loc1;
    uint16_t *part;
} pview_t;

static int pview_init(pview_t *v, const graph_t *g, const bool *kept, uint32_t nparts)
{
    v->loc1 = loc_view(g, kept);
    v->part = malloc((g->n_nodes + 1) * sizeof(*v->part));
    if (!v->loc1 || !v->part)
        return -ENOMEM;
    for (size_t n = 0; n < g->n_nodes; n++)
        v->part[n] = (uint16_t)(n % nparts);
    return 0;
}

static void pview_free(pview_t *v)
{
    free(v->loc1);
    free(v->part);
}

/* A pass's buffer of one sample's pairs (PASS_IN / PASS_OUT): looked up
 * after the walk, each prefetched PAIR_AHEAD pairs ahead, so that the
 * table's cache misses overlap. */
#define PAIR_AHEAD 8

typedef struct {
    uint32_t (*p)[2]; /* (src, dst) */
    size_t n, cap;
} pairbuf_t;

/* Adds the pair (parent, n) to the walk: PASS_COUNT sets its bit in bits;
 * PASS_IN / PASS_OUT append it to buf when its callee / caller is in part
 * `part`. */
static inline __attribute__((always_inline)) int pair_add(const pview_t *v, int mode,
                                                         uint32_t part, uint64_t *bits,
                                                         pairbuf_t *buf, int64_t *parent,
                                                         uint32_t n)
{
    const size_t bmask = ((size_t)1 << EST_BITS) - 1;
    if (*parent >= 0 && (uint32_t)*parent != n) {
        uint32_t src = (uint32_t)*parent;
        if (mode == PASS_COUNT) {
            size_t h = pairtab_hash(src, n) & bmask;
            bits[h >> 6] |= (uint64_t)1 << (h & 63);
        } else if (v->part[mode == PASS_IN ? n : src] == part) {
            if (buf->n == buf->cap &&
                err_grow((void **)&buf->p, &buf->cap, buf->n + 1, sizeof(*buf->p)) < 0)
                return -ENOMEM;
            buf->p[buf->n][0] = src;
            buf->p[buf->n++][1] = n;
        }
    }
    *parent = n;
    return 0;
}

/* One walk over the kept graph's (caller, callee) pairs, as graph_build
 * visits them: PASS_COUNT into bits, PASS_IN / PASS_OUT into t. 0 or
 * -ENOMEM. */
static int pairs_pass(graph_t *g, const pview_t *v, const bool *kept, int mode, uint32_t part,
                      uint64_t *bits, pairtab_t *t)
{
    const work_t *w = g->w;
    pairbuf_t buf = {NULL, 0, 0};
    int rc = 0;
    for (size_t si = 0; rc == 0 && si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        int64_t val = s->values[g->o.value_index];
        int64_t dv = g->o.mean_index >= 0 ? s->values[g->o.mean_index] : 0;
        if (val == 0 && dv == 0)
            continue;
        uint32_t stamp = ++g->stamp;
        int64_t parent = -1;
        buf.n = 0;
        for (uint32_t i = s->n_locs; rc == 0 && i-- > 0;) {
            uint32_t loc = s->locs[i], one = v->loc1[loc];
            if (one != LOC_MULTI) {
                if (one)
                    rc = pair_add(v, mode, part, bits, &buf, &parent, one - 1);
                continue;
            }
            for (uint32_t ni = g->loc_first[loc + 1]; rc == 0 && ni-- > g->loc_first[loc];) {
                uint32_t n = g->loc_nodes[ni];
                if (!kept || kept[n])
                    rc = pair_add(v, mode, part, bits, &buf, &parent, n);
            }
        }
        for (size_t i = 0; i < buf.n && i < PAIR_AHEAD; i++)
            pairtab_prefetch(t, buf.p[i][0], buf.p[i][1]);
        for (size_t i = 0; rc == 0 && i < buf.n; i++) {
            if (i + PAIR_AHEAD < buf.n)
                pairtab_prefetch(t, buf.p[i + PAIR_AHEAD][0], buf.p[i + PAIR_AHEAD][1]);
            rc = pairtab_add(t, buf.p[i][0], buf.p[i][1], stamp, val);
        }
    }
    free(buf.p);
    return rc;
}

/* The parts the kept graph's edges need (1: few enough to build whole),
 * from an estimate of how many distinct pairs there are. 0 on OOM. */
static uint32_t entropy_parts(graph_t *g, const bool *kept)
{
    const work_t *w = g->w;
    size_t frames = 0;
    for (size_t si = 0; si < w->n_samples; si++)
        frames += w->samples[si].n_locs;
    const size_t cap = g->part_edges ? g->part_edges : ENTROPY_PART_EDGES;
    /* bounds on the pairs, for the cost of a sum: frames, nodes squared */
    if (frames <= cap || (uint64_t)g->n_sel * g->n_sel <= cap)
        return 1;
    size_t m = (size_t)1 << EST_BITS;
    uint64_t *bits = calloc(m / 64, sizeof(*bits));
    pview_t v = {NULL, NULL};
    int rc = bits ? pview_init(&v, g, kept, 1) : -ENOMEM;
    if (rc == 0)
        rc = pairs_pass(g, &v, kept, PASS_COUNT, 0, bits, NULL);
    pview_free(&v);
    if (rc < 0) {
        free(bits);
        return 0;
    }
    size_t zeros = 0;
    for (size_t i = 0; i < m / 64; i++)
        zeros += (size_t)(64 - __builtin_popcountll(bits[i]));
    free(bits);
    /* linear counting: n = -m ln(zero fraction); a full map says "many" */
    double est = zeros ? -(double)m * log((double)zeros / (double)m) : 16.0 * (double)m;
    /* a quarter more than estimated, for the estimate's error */
    double parts = ceil(est * 1.25 / (double)cap);
    return parts <= 1 ? 1 : parts > 4096 ? 4096 : (uint32_t)parts; /* a part fits 16 bits */
}

/* edge_entropy of a node's pair weights w[0..n) (in the order the pairs
 * came, as the graph's edges are): the same terms, summed in the same
 * order. */
static double pair_entropy(const int64_t *w, uint32_t n, int64_t self)
{
    double score = 0;
    int64_t total = self;
    for (uint32_t i = 0; i < n; i++)
        if (w[i] > 0)
            total += abs64(w[i]);
    if (total != 0) {
        for (uint32_t i = 0; i < n; i++) {
            double frac = (double)abs64(w[i]) / (double)total;
            score += -frac * log2(frac);
        }
        if (self > 0) {
            double frac = (double)abs64(self) / (double)total;
            score += -frac * log2(frac);
        }
    }
    return score;
}

/* Scratch of part_terms, as large as the table's pairs. */
typedef struct {
    uint32_t *node; /* per pair, in the order they came: its node in the part */
    int64_t *w;     /* its weight, then (sorted) the weights grouped by node */
    int64_t *ws;
    size_t cap;
} pscratch_t;

/* The entropy terms (s[node]) of one pass's nodes from its table: the
 * pairs grouped by their node in `part` (callee: PASS_IN, caller:
 * PASS_OUT), in the order they came, with first[] (n_nodes + 1) as scratch.
 * The table is read once, in the pairs' order, prefetched ahead; the rest
 * is sequential or in arrays much smaller than the table. 0 or -ENOMEM. */
static int part_terms(graph_t *g, const pview_t *v, const pairtab_t *t, int mode, uint32_t part,
                      uint32_t *first, pscratch_t *x, double *s)
{
    if (t->n > x->cap) {
        free(x->node);
        free(x->w);
        free(x->ws);
        x->node = malloc(t->n * sizeof(*x->node));
        x->w = malloc(t->n * sizeof(*x->w));
        x->ws = malloc(t->n * sizeof(*x->ws));
        x->cap = t->n;
        if (!x->node || !x->w || !x->ws) {
            x->cap = 0;
            return -ENOMEM;
        }
    }
    memset(first, 0, (g->n_nodes + 1) * sizeof(*first));
    for (size_t i = 0; i < t->n; i++) {
        if (i + PAIR_AHEAD < t->n)
            __builtin_prefetch(&t->slots[t->order[i + PAIR_AHEAD]]);
        const pairslot_t *p = &t->slots[t->order[i]];
        uint32_t n = mode == PASS_IN ? pairtab_dst(p) : pairtab_src(p);
        x->node[i] = n;
        x->w[i] = p->weight;
        first[n + 1]++;
    }
    for (size_t n = 0; n < g->n_nodes; n++)
        first[n + 1] += first[n];
    /* first[n] counts up to its node's end as the weights are placed */
    for (size_t i = 0; i < t->n; i++)
        x->ws[first[x->node[i]]++] = x->w[i];
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        if (v->part[ni] != part)
            continue;
        /* the pairs of ni end at first[ni] and begin at its predecessor's end */
        uint32_t end = first[ni], begin = ni ? first[ni - 1] : 0;
        /* the terms of graph_sort_entropy: 1 for no edges */
        s[ni] = end == begin ? 1
                             : pair_entropy(&x->ws[begin], end - begin,
                                            mode == PASS_IN ? 0 : g->nodes[ni].flat);
    }
    return 0;
}

/* graph_sort_entropy of the kept graph (whose node values are built, with
 * no edges) in 2 * nparts passes; leaves the graph without edges. */
static int sort_entropy_parts(graph_t *g, const bool *kept, uint32_t nparts)
{
    double *sin = malloc((g->n_nodes + 1) * sizeof(*sin));
    double *sout = malloc((g->n_nodes + 1) * sizeof(*sout));
    uint32_t *first = malloc((g->n_nodes + 1) * sizeof(*first));
    pscratch_t x = {NULL, NULL, NULL, 0};
    free(g->score);
    g->score = malloc((g->n_nodes + 1) * sizeof(*g->score));
    pview_t v = {NULL, NULL};
    pairtab_t t = {0};
    int rc = sin && sout && first && g->score ? pview_init(&v, g, kept, nparts) : -ENOMEM;
    if (rc == 0)
        rc = pairtab_init(&t, g->part_edges ? g->part_edges : ENTROPY_PART_EDGES);
    for (int mode = PASS_IN; rc == 0 && mode <= PASS_OUT; mode++) {
        for (uint32_t part = 0; rc == 0 && part < nparts; part++) {
            pairtab_clear(&t);
            if ((rc = pairs_pass(g, &v, kept, mode, part, NULL, &t)) == 0)
                rc = part_terms(g, &v, &t, mode, part, first, &x, mode == PASS_IN ? sin : sout);
        }
    }
    pairtab_free(&t);
    free(x.node);
    free(x.w);
    free(x.ws);
    free(first);
    if (rc == 0) {
        for (size_t i = 0; i < g->n_sel; i++) {
            uint32_t ni = g->sel[i];
            const gnode_t *n = &g->nodes[ni];
            double score = 0;
            score += sin[ni];
            score += sout[ni];
            g->score[ni] = (int64_t)((uint64_t)go_f2i(score * (double)n->cum) + (uint64_t)n->flat);
        }
        graph_sort_nodes(g, g->sel, g->n_sel, GORDER_ENTROPY);
        g->n_edges = 0;
        rc = build_adjacency(g);
    }
    pview_free(&v);
    free(sin);
    free(sout);
    return rc;
}

void graph_sort(graph_t *g, bool cum)
{
    graph_sort_nodes(g, g->sel, g->n_sel, cum ? GORDER_CUM : GORDER_FLAT);
}

int graph_trim_edges(graph_t *g, int64_t cutoff)
{
    int dropped = 0;
    for (size_t i = 0; i < g->n_sel; i++) {
        const gnode_t *n = &g->nodes[g->sel[i]];
        for (uint32_t j = 0; j < n->in_n; j++) {
            gedge_t *e = &g->edges[g->in_refs[n->in_start + j]];
            if (!e->removed && abs64(e->weight) < cutoff) {
                e->removed = true;
                dropped++;
            }
        }
    }
    return dropped;
}

/* The tags graph_build would give the nodes in only (of a graph built
 * with kept), and none for the others: a visual graph looks at the tags of
 * the few nodes it may keep, not at the thousands it has before. */
static int add_tags(graph_t *g, const bool *kept, const bool *only)
{
    const work_t *w = g->w;
    int rc = tags_reset(g);
    /* A bit per location one of whose nodes is in only: a sample none of
     * whose locations has one gets no tag, and each of its frames is then
     * one read of this small map, not of loc_first, loc_nodes, kept and
     * only (misses all: 2.5% of strings -svg). */
    uint64_t *any = rc == 0 ? locs_marked(g, only) : NULL;
    if (rc == 0 && !any)
        rc = -ENOMEM;
    for (size_t si = 0; rc == 0 && si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        int64_t v = s->values[g->o.value_index];
        int64_t dv = g->o.mean_index >= 0 ? s->values[g->o.mean_index] : 0;
        if (v == 0 && dv == 0)
            continue;
        uint32_t i = 0;
        while (i < s->n_locs && !LOC_BIT(any, s->locs[i]))
            i++;
        if (i == s->n_locs)
            continue;
        /* pprof's walk from the root: a kept node in only gets the
         * sample's tags once; the last node walked (the leaf-most
         * location's first), kept and in only, its flat ones. Locations
         * without a node in only change neither. */
        uint32_t stamp = ++g->stamp;
        for (uint32_t j = s->n_locs; rc == 0 && j-- > i;) {
            uint32_t loc = s->locs[j];
            if (!LOC_BIT(any, loc))
                continue;
            for (uint32_t ni = g->loc_first[loc + 1]; rc == 0 && ni-- > g->loc_first[loc];) {
                uint32_t n = g->loc_nodes[ni];
                if ((!kept || kept[n]) && only[n] && g->nodes[n].stamp != stamp) {
                    g->nodes[n].stamp = stamp;
                    rc = tags_add(g, n, si, v, dv, false);
                }
            }
        }
        uint32_t j = 0;
        while (j < s->n_locs && g->loc_first[s->locs[j]] == g->loc_first[s->locs[j] + 1])
            j++;
        if (rc == 0 && j < s->n_locs) {
            uint32_t n = g->loc_nodes[g->loc_first[s->locs[j]]];
            if ((!kept || kept[n]) && only[n])
                rc = tags_add(g, n, si, v, dv, true);
        }
    }
    free(any);
    return rc < 0 ? rc : tags_adjacency(g);
}

/* Keeps, in their order, the tags of the nodes in kept: those a build
 * with kept makes, when they were made for a set of nodes that holds kept
 * (add_tags walks the samples as graph_build does). */
static int tags_keep(graph_t *g, const bool *kept)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_tags; i++)
        if (kept[g->tags[i].node])
            g->tags[k++] = g->tags[i];
    g->n_tags = k;
    if (tag_rehash(g, g->tag_mask + 1) < 0)
        return -ENOMEM;
    return tags_adjacency(g);
}

static int sort_for(graph_t *g, const trim_opts_t *t)
{
    if (t->visual)
        return graph_sort_entropy(g);
    graph_sort(g, t->cum_sort);
    return 0;
}

/* The live in-edge of a tree node; UINT32_MAX for a root. */
static uint32_t tree_in_edge(const graph_t *g, uint32_t n)
{
    const gnode_t *nd = &g->nodes[n];
    for (uint32_t j = 0; j < nd->in_n; j++)
        if (!g->edges[g->in_refs[nd->in_start + j]].removed)
            return g->in_refs[nd->in_start + j];
    return UINT32_MAX;
}

/* pprof's TrimTree: of the selected nodes, drops those without kept set.
 * The in-edge of a node that stays but whose parent is dropped starts
 * instead at the nearest ancestor that stays (residual, inline if every
 * call on the way was), or goes too when a dropped root is on the way.
 * Unselected nodes (no value) stay, as pprof only walks g.Nodes, and their
 * edges count in their parents' entropy. Its final RemoveRedundantEdges
 * finds nothing in a tree. */
static int trim_tree(graph_t *g, const bool *kept)
{
    bool *drop = calloc(g->n_nodes + 1, sizeof(*drop));
    if (!drop)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_sel; i++)
        drop[g->sel[i]] = !kept[g->sel[i]];
    /* The walks up read only edges into dropped nodes and change only
     * edges into the others, so one pass in place gives pprof's result. */
    for (size_t i = 0; i < g->n_edges; i++) {
        gedge_t *e = &g->edges[i];
        if (e->removed || drop[e->dst])
            continue;
        while (drop[e->src]) {
            uint32_t up = tree_in_edge(g, e->src);
            if (up == UINT32_MAX) {
                e->removed = true;
                break;
            }
            e->src = g->edges[up].src;
            e->inl = e->inl && g->edges[up].inl;
            e->residual = true;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        if (!drop[ni]) {
            g->sel[n++] = ni;
            continue;
        }
        uint32_t ei = tree_in_edge(g, ni);
        if (ei != UINT32_MAX)
            g->edges[ei].removed = true;
    }
    g->n_sel = n;
    free(drop);
    return build_adjacency(g);
}

int graph_trimmed(graph_t *g, const trim_opts_t *t, trim_result_t *r)
{
    *r = (trim_result_t){0};
    /* The first build of a graph only measures nodes: edges and tags (the
     * costly parts: millions of edges on a large profile) wait for the
     * graph that is kept. A node keeps its values in a graph of fewer
     * nodes. A tree is built once. */
    const bool tree = g->o.call_tree;
    g->nodes_only = !tree;
    int rc = graph_build(g, NULL);
    g->nodes_only = false;
    if (rc < 0)
        return rc;
    bool full = tree;
    int64_t total = 0;
    for (size_t i = 0; i < g->n_sel; i++)
        total += g->nodes[g->sel[i]].flat;
    int64_t node_cutoff = abs64(profile_value_of((double)total * t->node_fraction));
    int64_t edge_cutoff = abs64(profile_value_of((double)total * t->edge_fraction));
    /* Edges below the cutoff are removed from the builds below, and only a
     * visual graph (entropy order) or a tree looks at them before. */
    if (!t->visual && !tree)
        g->edge_floor = edge_cutoff;
    /* Tags wait for the order of the nodes when only the first node_count
     * of them can be kept (add_tags). */
    const bool defer_tags = g->o.tags && !tree && t->node_count > 0;
    g->o.tags = g->o.tags && !defer_tags;
    bool *kept = NULL, *only = NULL;
    /* A visual graph trimmed to node_count may score its nodes in parts
     * (sort_entropy_parts); nparts > 1 when it does. */
    const bool may_part = t->visual && !tree && t->node_count > 0;
    uint32_t nparts = 1;
    if (node_cutoff > 0) {
        kept = calloc(g->n_nodes + 1, sizeof(*kept));
        if (!kept)
            return -ENOMEM;
        size_t nk = 0;
        for (size_t i = 0; i < g->n_sel; i++)
            if (abs64(g->nodes[g->sel[i]].cum) >= node_cutoff) {
                kept[g->sel[i]] = true;
                nk++;
            }
        if (nk != g->n_sel) {
            r->dropped_nodes = (int)(g->n_sel - nk);
            /* Only an entropy order reads this graph's edges, when fewer
             * than its nodes are kept in the end: in parts, if many. */
            if (may_part && nk > (size_t)t->node_count && !(nparts = entropy_parts(g, kept))) {
                rc = -ENOMEM;
                goto out;
            }
            g->nodes_only = nparts > 1;
            rc = tree ? trim_tree(g, kept) : graph_build(g, kept);
            g->nodes_only = false;
            if (rc < 0)
                goto out;
            full = true;
        }
    }
    if (!full && may_part && g->n_sel > (size_t)t->node_count &&
        !(nparts = entropy_parts(g, NULL))) {
        rc = -ENOMEM;
        goto out;
    }
    /* In parts, the values of the first build stand (it kept every node). */
    if (!full && nparts == 1 && (rc = graph_build(g, NULL)) < 0)
        goto out;
    r->orig_count = (int)g->n_sel;
    if ((rc = nparts > 1 ? sort_entropy_parts(g, full ? kept : NULL, nparts) : sort_for(g, t)) < 0)
        goto out;
    if (t->node_count > 0) {
        if (defer_tags) {
            g->o.tags = true;
            only = calloc(g->n_nodes + 1, sizeof(*only));
            if (!only) {
                rc = -ENOMEM;
                goto out;
            }
            for (size_t i = 0; i < g->n_sel && i < (size_t)t->node_count; i++)
                only[g->sel[i]] = true;
            if ((rc = add_tags(g, full ? kept : NULL, only)) < 0)
                goto out;
        }
        if (t->visual)
            graph_trim_tags(g, node_cutoff);
        graph_trim_edges(g, edge_cutoff);
        size_t max = (size_t)t->node_count;
        if (t->visual) {
            /* pprof's selectTopNodes: tags count as nodes */
            size_t count = 0;
            for (size_t i = 0; i < g->n_sel; i++) {
                int tags = count_tags(g, g->sel[i]);
                if (tags > 4)
                    tags = 4;
                count += (size_t)tags + 1;
                if (count >= max) {
                    max = i + 1;
                    break;
                }
            }
        }
        if (max < g->n_sel) {
            if (!kept && !(kept = calloc(g->n_nodes + 1, sizeof(*kept)))) {
                rc = -ENOMEM;
                goto out;
            }
            memset(kept, 0, (g->n_nodes + 1) * sizeof(*kept));
            for (size_t i = 0; i < max; i++)
                kept[g->sel[i]] = true;
            /* add_tags made the tags of only, which holds kept: the build
             * keeps those of kept instead of making them again (on the
             * samples shape, 280M of -svg's 10.06G instructions) */
            const bool tags = g->o.tags;
            g->o.tags = tags && !defer_tags;
            rc = tree ? trim_tree(g, kept) : graph_build(g, kept);
            g->o.tags = tags;
            if (rc == 0 && defer_tags)
                rc = tags_keep(g, kept);
            if (rc < 0)
                goto out;
            if ((rc = sort_for(g, t)) < 0)
                goto out;
        }
    }
    if (t->visual)
        graph_trim_tags(g, node_cutoff);
    r->dropped_edges = graph_trim_edges(g, edge_cutoff);
    if (t->visual)
        graph_remove_redundant_edges(g);
out:
    g->edge_floor = 0;
    g->o.tags = g->o.tags || defer_tags;
    free(kept);
    free(only);
    return rc;
}

/* pprof's isRedundantEdge: can e's source reach its destination through
 * other (live) edges? Breadth-first over in-edges from the destination. */
static bool redundant_edge(graph_t *g, uint32_t ei, uint32_t *queue)
{
    const gedge_t *e = &g->edges[ei];
    uint32_t stamp = ++g->stamp;
    size_t head = 0, tail = 0;
    g->nodes[e->dst].stamp = stamp;
    queue[tail++] = e->dst;
    while (head < tail) {
        const gnode_t *n = &g->nodes[queue[head++]];
        for (uint32_t j = 0; j < n->in_n; j++) {
            uint32_t ii = g->in_refs[n->in_start + j];
            const gedge_t *ie = &g->edges[ii];
            if (ie->removed || ii == ei || g->nodes[ie->src].stamp == stamp)
                continue;
            if (ie->src == e->src)
                return true;
            g->nodes[ie->src].stamp = stamp;
            queue[tail++] = ie->src;
        }
    }
    return false;
}

void graph_remove_redundant_edges(graph_t *g)
{
    uint32_t *queue = malloc((g->n_nodes + 1) * sizeof(*queue));
    if (!queue)
        return; /* only a simplification */
    for (size_t i = g->n_sel; i > 0; i--) {
        size_t n;
        uint32_t *in = graph_edges_sorted(g, g->sel[i - 1], true, &n);
        if (!in)
            break;
        for (size_t j = n; j > 0; j--) {
            gedge_t *e = &g->edges[in[j - 1]];
            if (!e->residual)
                break;
            if (redundant_edge(g, in[j - 1], queue))
                e->removed = true;
        }
        free(in);
    }
    free(queue);
}

typedef struct {
    graph_t *g;
} edge_ctx_t;

static int edge_cmp(const void *pa, const void *pb, void *arg)
{
    graph_t *g = arg;
    const gedge_t *a = &g->edges[*(const uint32_t *)pa], *b = &g->edges[*(const uint32_t *)pb];
    if (a->weight != b->weight) {
        int64_t x = abs64(a->weight), y = abs64(b->weight);
        if (x != y)
            return x > y ? -1 : 1;
        /* Equal magnitudes, opposite signs: Go's Less is false both ways. */
        return 0;
    }
    int r = strcmp(graph_node_name(g, a->src), graph_node_name(g, b->src));
    if (r)
        return r;
    return strcmp(graph_node_name(g, a->dst), graph_node_name(g, b->dst));
}

void graph_sort_edges(graph_t *g, uint32_t *idx, size_t n)
{
    qsort_r(idx, n, sizeof(*idx), edge_cmp, g);
}

uint32_t *graph_edges_sorted(graph_t *g, uint32_t node, bool in, size_t *n)
{
    const gnode_t *nd = &g->nodes[node];
    uint32_t cnt = in ? nd->in_n : nd->out_n;
    const uint32_t *refs = in ? &g->in_refs[nd->in_start] : &g->out_refs[nd->out_start];
    uint32_t *out = malloc((cnt + 1) * sizeof(*out));
    *n = 0;
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < cnt; i++)
        if (!g->edges[refs[i]].removed)
            out[(*n)++] = refs[i];
    qsort_r(out, *n, sizeof(*out), edge_cmp, g);
    return out;
}

int64_t graph_flat_value(const gnode_t *n)
{
    return n->flat_div == 0 ? n->flat : n->flat / n->flat_div;
}

int64_t graph_cum_value(const gnode_t *n)
{
    return n->cum_div == 0 ? n->cum : n->cum / n->cum_div;
}
