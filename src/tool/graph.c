/* graph.c — building, trimming and sorting the call graph. */
#include "tool/graph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/sbuf.h"

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

static int node_rehash(graph_t *g, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_nodes; i++) {
        size_t h = ninfo_hash(&g->nodes[i].info) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(g->node_slots);
    g->node_slots = slots;
    g->node_mask = nslots - 1;
    return 0;
}

/* Index of the node with info i, adding it; -1 on OOM. */
static int64_t find_or_add_node(graph_t *g, const ninfo_t *i)
{
    if ((g->n_nodes + 1) * 2 > g->node_mask + 1 && node_rehash(g, (g->node_mask + 1) * 2) < 0)
        return -1;
    size_t h = ninfo_hash(i) & g->node_mask;
    for (; g->node_slots[h]; h = (h + 1) & g->node_mask)
        if (ninfo_eq(&g->nodes[g->node_slots[h] - 1].info, i))
            return g->node_slots[h] - 1;
    if (g->n_nodes == g->cap_nodes) {
        size_t nc = g->cap_nodes ? g->cap_nodes * 2 : 1024;
        gnode_t *nn = realloc(g->nodes, nc * sizeof(*nn));
        if (!nn)
            return -1;
        g->nodes = nn;
        g->cap_nodes = nc;
    }
    gnode_t *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof(*n));
    n->info = *i;
    g->node_slots[h] = (uint32_t)g->n_nodes + 1;
    return (int64_t)g->n_nodes++;
}

char *graph_clean_path(const char *path)
{
    size_t n = strlen(path);
    if (n == 0)
        return strdup(".");
    bool rooted = path[0] == '/';
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    size_t w = 0, r = 0, dotdot = 0;
    if (rooted) {
        out[w++] = '/';
        r = dotdot = 1;
    }
    while (r < n) {
        if (path[r] == '/') {
            r++;
        } else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
            r++;
        } else if (path[r] == '.' && path[r + 1] == '.' && (r + 2 == n || path[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            for (; r < n && path[r] != '/'; r++)
                out[w++] = path[r];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
    return out;
}

static const char *base_name(const char *path)
{
    /* filepath.Base: strip trailing slashes, take the last element. */
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && path[s - 1] != '/')
        s--;
    static __thread char buf[4096];
    if (n == 0)
        return ".";
    snprintf(buf, sizeof(buf), "%.*s", (int)(n - s), path + s);
    return buf;
}

void graph_free(graph_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_nodes; i++)
        free(g->nodes[i].pname);
    free(g->nodes);
    free(g->node_slots);
    free(g->loc_first);
    free(g->loc_nodes);
    free(g->sel);
    free(g->edges);
    free(g->edge_slots);
    free(g->in_refs);
    free(g->out_refs);
    free(g);
}

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
    if (!g->loc_first || !g->loc_nodes || !clean || node_rehash(g, 1024) < 0)
        goto oom;
    for (size_t i = 0; i < w->n_funcs; i++)
        clean[i] = -1;

    uint32_t k = 0;
    for (size_t i = 0; i < w->n_locs; i++) {
        const wloc_t *l = &w->locs[i];
        g->loc_first[i] = k;
        int64_t objfile = l->mapping ? w->p->mappings[l->mapping - 1].filename : 0;
        uint32_t nl = l->n_lines ? l->n_lines : 1;
        for (uint32_t j = 0; j < nl; j++) {
            ninfo_t ni = {0};
            ni.address = l->address;
            uint32_t fn = l->n_lines ? l->lines[j].fn : 0;
            if (!fn) {
                ni.objfile = objfile;
            } else {
                const wfunc_t *f = &w->funcs[fn - 1];
                ni.lineno = l->lines[j].line;
                ni.name = f->name;
                if (f->filename) {
                    if (clean[fn - 1] < 0) {
                        char *c = graph_clean_path(work_str(w, f->filename));
                        if (!c)
                            goto oom;
                        clean[fn - 1] = profile_intern(w->p, c);
                        free(c);
                        if (clean[fn - 1] < 0)
                            goto oom;
                    }
                    ni.file = clean[fn - 1];
                }
                if (o->obj_names || ni.name == 0) {
                    ni.objfile = objfile;
                    ni.start_line = f->start_line;
                }
            }
            int64_t n = find_or_add_node(g, &ni);
            if (n < 0)
                goto oom;
            g->loc_nodes[k++] = (uint32_t)n;
        }
    }
    g->loc_first[w->n_locs] = k;
    free(clean);
    *out = g;
    return 0;
oom:
    free(clean);
    graph_free(g);
    return -ENOMEM;
}

/* --- edges -------------------------------------------------------------------- */

static inline uint64_t pair_hash(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static int edge_rehash(graph_t *g, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_edges; i++) {
        size_t h = pair_hash(g->edges[i].src, g->edges[i].dst) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(g->edge_slots);
    g->edge_slots = slots;
    g->edge_mask = nslots - 1;
    return 0;
}

static gedge_t *find_or_add_edge(graph_t *g, uint32_t src, uint32_t dst, bool *created)
{
    if ((g->n_edges + 1) * 2 > g->edge_mask + 1 && edge_rehash(g, (g->edge_mask + 1) * 2) < 0)
        return NULL;
    size_t h = pair_hash(src, dst) & g->edge_mask;
    for (; g->edge_slots[h]; h = (h + 1) & g->edge_mask) {
        gedge_t *e = &g->edges[g->edge_slots[h] - 1];
        if (e->src == src && e->dst == dst) {
            *created = false;
            return e;
        }
    }
    if (g->n_edges == g->cap_edges) {
        size_t nc = g->cap_edges ? g->cap_edges * 2 : 1024;
        gedge_t *ne = realloc(g->edges, nc * sizeof(*ne));
        if (!ne)
            return NULL;
        g->edges = ne;
        g->cap_edges = nc;
    }
    gedge_t *e = &g->edges[g->n_edges];
    memset(e, 0, sizeof(*e));
    e->src = src;
    e->dst = dst;
    g->edge_slots[h] = (uint32_t)g->n_edges + 1;
    g->n_edges++;
    *created = true;
    return e;
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

/* --- building -------------------------------------------------------------------- */

int graph_build(graph_t *g, const bool *kept)
{
    work_t *w = g->w;
    for (size_t i = 0; i < g->n_nodes; i++) {
        gnode_t *n = &g->nodes[i];
        n->flat = n->flat_div = n->cum = n->cum_div = 0;
    }
    g->n_edges = 0;
    if (g->edge_slots)
        memset(g->edge_slots, 0, (g->edge_mask + 1) * sizeof(*g->edge_slots));
    else if (edge_rehash(g, 1024) < 0)
        return -ENOMEM;

    for (size_t si = 0; si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        int64_t v = s->values[g->o.value_index];
        int64_t dv = g->o.mean_index >= 0 ? s->values[g->o.mean_index] : 0;
        if (v == 0 && dv == 0)
            continue;
        uint32_t stamp = ++g->stamp;
        int64_t parent = -1;
        bool residual = false;
        for (uint32_t i = s->n_locs; i-- > 0;) {
            uint32_t loc = s->locs[i];
            uint32_t first = g->loc_first[loc], cnt = g->loc_first[loc + 1] - first;
            for (uint32_t ni = cnt; ni-- > 0;) {
                uint32_t n = g->loc_nodes[first + ni];
                if (kept && !kept[n]) {
                    residual = true;
                    continue;
                }
                gnode_t *nd = &g->nodes[n];
                if (nd->stamp != stamp) {
                    nd->stamp = stamp;
                    nd->cum += v;
                    nd->cum_div += dv;
                }
                if (parent >= 0 && (uint32_t)parent != n) {
                    bool created;
                    gedge_t *e = find_or_add_edge(g, (uint32_t)parent, n, &created);
                    if (!e)
                        return -ENOMEM;
                    bool inl = ni != cnt - 1;
                    if (created) {
                        e->inl = inl;
                        e->residual = residual;
                    }
                    if (e->stamp != stamp) {
                        if (!created) {
                            if (residual)
                                e->residual = true;
                            if (!inl)
                                e->inl = false;
                        }
                        e->stamp = stamp;
                        e->weight += v;
                        e->weight_div += dv;
                    }
                }
                parent = n;
                residual = false;
            }
        }
        if (parent >= 0 && !residual) {
            g->nodes[parent].flat += v;
            g->nodes[parent].flat_div += dv;
        }
    }

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
    return build_adjacency(g);
}

/* --- names and order --------------------------------------------------------------- */

const char *graph_node_name(graph_t *g, uint32_t idx)
{
    gnode_t *n = &g->nodes[idx];
    if (n->pname)
        return n->pname;
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
        sb_printf(&t, "[%s]", base_name(work_str(w, i->objfile)));
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
    n->pname = sb_steal(&b);
    return n->pname;
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

int graph_trimmed(graph_t *g, const trim_opts_t *t, trim_result_t *r)
{
    *r = (trim_result_t){0};
    int rc = graph_build(g, NULL);
    if (rc < 0)
        return rc;
    int64_t total = 0;
    for (size_t i = 0; i < g->n_sel; i++)
        total += g->nodes[g->sel[i]].flat;
    int64_t node_cutoff = abs64((int64_t)((double)total * t->node_fraction));
    int64_t edge_cutoff = abs64((int64_t)((double)total * t->edge_fraction));
    bool *kept = NULL;
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
            if ((rc = graph_build(g, kept)) < 0)
                goto out;
        }
    }
    r->orig_count = (int)g->n_sel;
    graph_sort(g, t->cum_sort);
    if (t->node_count > 0) {
        graph_trim_edges(g, edge_cutoff);
        if ((size_t)t->node_count < g->n_sel) {
            if (!kept && !(kept = calloc(g->n_nodes + 1, sizeof(*kept)))) {
                rc = -ENOMEM;
                goto out;
            }
            memset(kept, 0, (g->n_nodes + 1) * sizeof(*kept));
            for (int i = 0; i < t->node_count; i++)
                kept[g->sel[i]] = true;
            if ((rc = graph_build(g, kept)) < 0)
                goto out;
            graph_sort(g, t->cum_sort);
        }
    }
    r->dropped_edges = graph_trim_edges(g, edge_cutoff);
out:
    free(kept);
    return rc;
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
