/* flame.c — flame graphs (HTML page, JSON data) and folded stacks.
 *
 * Both start from the same table: each sample with a value becomes its
 * frame sequence, root first (graph nodes, inline frames expanded), and
 * the samples are sorted by those sequences, frames compared by name. A
 * node of the flame tree is then a run of samples sharing a prefix, and a
 * folded line a run of identical sequences.
 *
 * The page's tree is grown best first: a max-heap of candidate nodes by
 * |value| (the new and the base parts of a diff added), each expansion
 * splitting a node's run into its children's runs. Popping FLAME_MAX_NODES
 * nodes gives exactly the heaviest nodes of the tree — a connected top,
 * since a child never outweighs its parent — without building the rest,
 * which for a big profile is millions of nodes. */
#include "tool/report/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "base/err.h"
#include "base/path.h"
#include "tool/graph/measure.h"

/* --- the sample table --------------------------------------------------------------- */

typedef struct {
    graph_t *g;
    size_t n;        /* samples with a value */
    uint32_t *off;   /* per sample: first frame in seq; n+1 entries */
    uint32_t *seq;   /* graph node per frame, root first */
    int64_t *val;    /* per sample: its value */
    uint32_t *order; /* samples sorted by frame names */
    uint32_t *rank;  /* per graph node: rank of its name */
} stacks_t;

static void stacks_free(stacks_t *s)
{
    graph_free(s->g);
    free(s->off);
    free(s->seq);
    free(s->val);
    free(s->order);
    free(s->rank);
    memset(s, 0, sizeof(*s));
}

static int name_cmp(const void *pa, const void *pb, void *arg)
{
    graph_t *g = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int c = strcmp(graph_node_name(g, a), graph_node_name(g, b));
    return c ? c : (a < b ? -1 : a > b);
}

static int seq_cmp(const void *pa, const void *pb, void *arg)
{
    const stacks_t *s = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const uint32_t *x = s->seq + s->off[a], *y = s->seq + s->off[b];
    uint32_t nx = s->off[a + 1] - s->off[a], ny = s->off[b + 1] - s->off[b];
    uint32_t n = nx < ny ? nx : ny;
    for (uint32_t i = 0; i < n; i++)
        if (x[i] != y[i]) {
            uint32_t rx = s->rank[x[i]], ry = s->rank[y[i]];
            return rx < ry ? -1 : 1;
        }
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The sample value shown: the selected column, scaled by -divide_by. */
static int64_t sample_value(const report_t *r, const wsample_t *s)
{
    int64_t v = s->values[r->value_index];
    if (r->ratio > 0 && r->ratio != 1)
        v = profile_value_of((double)v * r->ratio);
    return v;
}

static int stacks_build(report_t *r, stacks_t *s)
{
    memset(s, 0, sizeof(*s));
    graph_opts_t go = {.value_index = r->value_index, .mean_index = -1};
    int rc = graph_new(r->w, &go, &s->g);
    if (rc < 0)
        return rc;
    graph_t *g = s->g;
    const work_t *w = r->w;
    size_t n = 0, frames = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *x = &w->samples[i];
        if (sample_value(r, x) == 0)
            continue;
        n++;
        for (uint32_t j = 0; j < x->n_locs; j++) {
            uint32_t l = x->locs[j];
            frames += g->loc_first[l + 1] - g->loc_first[l];
        }
    }
    if (frames > UINT32_MAX)
        return -ENOMEM;
    s->off = malloc((n + 1) * sizeof(*s->off));
    s->seq = malloc((frames + 1) * sizeof(*s->seq));
    s->val = malloc((n + 1) * sizeof(*s->val));
    s->order = malloc((n + 1) * sizeof(*s->order));
    s->rank = malloc((g->n_nodes + 1) * sizeof(*s->rank));
    uint32_t *byname = malloc((g->n_nodes + 1) * sizeof(*byname));
    if (!s->off || !s->seq || !s->val || !s->order || !s->rank || !byname) {
        free(byname);
        return -ENOMEM;
    }
    size_t k = 0, f = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *x = &w->samples[i];
        int64_t v = sample_value(r, x);
        if (v == 0)
            continue;
        s->off[k] = (uint32_t)f;
        s->val[k] = v;
        s->order[k] = (uint32_t)k;
        for (uint32_t j = x->n_locs; j-- > 0;) {
            uint32_t l = x->locs[j];
            for (uint32_t li = g->loc_first[l + 1]; li-- > g->loc_first[l];)
                s->seq[f++] = g->loc_nodes[li];
        }
        k++;
    }
    s->off[n] = (uint32_t)f;
    s->n = n;
    for (size_t i = 0; i < g->n_nodes; i++) {
        byname[i] = (uint32_t)i;
        if (!graph_node_name(g, (uint32_t)i)) {
            free(byname);
            return -ENOMEM;
        }
    }
    qsort_r(byname, g->n_nodes, sizeof(*byname), name_cmp, g);
    for (size_t i = 0; i < g->n_nodes; i++)
        s->rank[byname[i]] = (uint32_t)i;
    free(byname);
    qsort_r(s->order, n, sizeof(*s->order), seq_cmp, s);
    return 0;
}

static inline uint32_t slen(const stacks_t *s, uint32_t i)
{
    return s->off[i + 1] - s->off[i];
}

static inline uint32_t sframe(const stacks_t *s, uint32_t i, uint32_t d)
{
    return s->seq[s->off[i] + d];
}

static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

/* --- folded stacks ---------------------------------------------------------------------- */

/* A frame name in a folded line: ';' separates frames and the value
 * follows the last space of the line, so ';' becomes ':' and line breaks
 * become spaces. */
static void folded_name(sbuf_t *b, const char *n)
{
    for (; *n; n++)
        sb_putc(b, *n == ';' ? ':' : (*n == '\n' || *n == '\r') ? ' ' : *n);
}

static int flush(report_t *r, sbuf_t *b, char *err, size_t errlen)
{
    if (b->oom)
        return oom(err, errlen);
    if (b->len && fwrite(b->s, 1, b->len, r->out) != b->len) {
        snprintf(err, errlen, "write error: %s", strerror(errno));
        return -EIO;
    }
    sb_reset(b);
    return 0;
}

int flame_folded(report_t *r, char *err, size_t errlen)
{
    stacks_t s;
    if (stacks_build(r, &s) < 0) {
        stacks_free(&s);
        return oom(err, errlen);
    }
    sbuf_t b = {0};
    int rc = 0;
    for (size_t i = 0; i < s.n;) {
        uint32_t a = s.order[i];
        int64_t sum = 0;
        size_t j = i;
        for (; j < s.n; j++) {
            uint32_t x = s.order[j];
            if (slen(&s, x) != slen(&s, a) ||
                memcmp(s.seq + s.off[x], s.seq + s.off[a], slen(&s, a) * sizeof(*s.seq)) != 0)
                break;
            sum += s.val[x];
        }
        i = j;
        if (sum == 0)
            continue;
        uint32_t n = slen(&s, a);
        if (n == 0)
            sb_puts(&b, "[no stack]");
        for (uint32_t d = 0; d < n; d++) {
            if (d)
                sb_putc(&b, ';');
            folded_name(&b, graph_node_name(s.g, sframe(&s, a, d)));
        }
        sb_printf(&b, " %" PRId64 "\n", sum);
        if (b.len > (1 << 16) && (rc = flush(r, &b, err, errlen)) < 0)
            break;
    }
    if (rc == 0)
        rc = flush(r, &b, err, errlen);
    sb_free(&b);
    stacks_free(&s);
    return rc;
}

/* --- the flame tree ---------------------------------------------------------------------- */

typedef struct {
    uint32_t lo, hi;  /* run of s.order */
    uint32_t depth;   /* frames shared by the run; the node is frame depth-1 */
    uint32_t node;    /* graph node (not for the root) */
    int32_t parent;   /* kept index of the parent, -1 for the root */
    int64_t pos, neg; /* sums of positive values and of negated negative ones */
    int64_t spos, sneg; /* the same for samples ending here */
} cand_t;

typedef struct {
    cand_t *c;
    size_t n, cap;
    uint32_t *heap; /* candidate indexes, max-heap by pos+neg */
    size_t nh, caph;
} cands_t;

static inline int64_t mag(const cand_t *c)
{
    return c->pos + c->neg;
}

static int heap_push(cands_t *cs, uint32_t ci)
{
    if (cs->nh == cs->caph) {
        size_t nc = cs->caph ? cs->caph * 2 : 1024;
        uint32_t *h = realloc(cs->heap, nc * sizeof(*h));
        if (!h)
            return -ENOMEM;
        cs->heap = h;
        cs->caph = nc;
    }
    size_t i = cs->nh++;
    cs->heap[i] = ci;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (mag(&cs->c[cs->heap[p]]) >= mag(&cs->c[cs->heap[i]]))
            break;
        uint32_t t = cs->heap[p];
        cs->heap[p] = cs->heap[i];
        cs->heap[i] = t;
        i = p;
    }
    return 0;
}

static uint32_t heap_pop(cands_t *cs)
{
    uint32_t top = cs->heap[0];
    cs->heap[0] = cs->heap[--cs->nh];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < cs->nh && mag(&cs->c[cs->heap[l]]) > mag(&cs->c[cs->heap[m]]))
            m = l;
        if (l + 1 < cs->nh && mag(&cs->c[cs->heap[l + 1]]) > mag(&cs->c[cs->heap[m]]))
            m = l + 1;
        if (m == i)
            break;
        uint32_t t = cs->heap[m];
        cs->heap[m] = cs->heap[i];
        cs->heap[i] = t;
        i = m;
    }
    return top;
}

static cand_t *cand_new(cands_t *cs)
{
    if (err_grow((void **)&cs->c, &cs->cap, cs->n + 1, sizeof(*cs->c)) < 0)
        return NULL;
    cand_t *c = &cs->c[cs->n++];
    memset(c, 0, sizeof(*c));
    return c;
}

static void add_value(int64_t v, int64_t *pos, int64_t *neg)
{
    if (v > 0)
        *pos += v;
    else
        *neg -= v;
}

/* Splits candidate ci (kept as kept index ki) into its children. */
static int expand(const stacks_t *s, cands_t *cs, uint32_t ci, int32_t ki)
{
    cand_t c = cs->c[ci];
    uint32_t i = c.lo;
    while (i < c.hi && slen(s, s->order[i]) == c.depth)
        i++; /* samples ending at this node sort first */
    while (i < c.hi) {
        uint32_t fr = sframe(s, s->order[i], c.depth);
        cand_t *k = cand_new(cs);
        if (!k)
            return -ENOMEM;
        k->lo = i;
        k->depth = c.depth + 1;
        k->node = fr;
        k->parent = ki;
        for (; i < c.hi && sframe(s, s->order[i], c.depth) == fr; i++) {
            uint32_t x = s->order[i];
            add_value(s->val[x], &k->pos, &k->neg);
            if (slen(s, x) == k->depth)
                add_value(s->val[x], &k->spos, &k->sneg);
        }
        k->hi = i;
        if (mag(k) == 0) {
            cs->n--;
            continue;
        }
        if (heap_push(cs, (uint32_t)(k - cs->c)) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* JSON string literal, safe inside <script>: <, >, & and the line
 * separators escaped. */
static void json_str(sbuf_t *b, const char *s)
{
    sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
            sb_printf(b, "\\u%04x", c);
        else if (c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            sb_printf(b, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
            p += 2;
        } else
            sb_putc(b, (char)c);
    }
    sb_putc(b, '"');
}

typedef struct {
    const stacks_t *s;
    const cand_t *k; /* kept nodes */
} kctx_t;

static int child_cmp(const void *pa, const void *pb, void *arg)
{
    const kctx_t *c = arg;
    const cand_t *a = &c->k[*(const uint32_t *)pa], *b = &c->k[*(const uint32_t *)pb];
    if (mag(a) != mag(b))
        return mag(a) > mag(b) ? -1 : 1;
    uint32_t ra = c->s->rank[a->node], rb = c->s->rank[b->node];
    return ra < rb ? -1 : ra > rb;
}

/* The length json_str gives s, quotes included. */
static size_t json_len(const char *s)
{
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f) ? 6
             : (*p == '"' || *p == '\\')                                     ? 2
                                                                            : 1;
    return n;
}

/* Decimal digits of v (with its sign). */
static size_t digits(int64_t v)
{
    char b[24];
    return (size_t)snprintf(b, sizeof(b), "%" PRId64, v);
}

int flame_json(report_t *r, sbuf_t *out, char *err, size_t errlen)
{
    stacks_t s;
    cands_t cs = {0};
    cand_t *kept = NULL;
    uint32_t *first = NULL, *kids = NULL, *fill = NULL, *stack = NULL, *name_of = NULL;
    int64_t *name_ix = NULL;
    bool *named = NULL;
    int rc = -ENOMEM;
    if (stacks_build(r, &s) < 0)
        goto out;

    /* grow the tree, heaviest first */
    cand_t *root = cand_new(&cs);
    if (!root)
        goto out;
    root->lo = 0;
    root->hi = (uint32_t)s.n;
    root->parent = -1;
    for (size_t i = 0; i < s.n; i++) {
        add_value(s.val[i], &root->pos, &root->neg);
        if (slen(&s, (uint32_t)i) == 0)
            add_value(s.val[i], &root->spos, &root->sneg);
    }
    bool diff = root->neg != 0;
    size_t nk = 0, capk = 1024;
    kept = malloc(capk * sizeof(*kept));
    if (!kept || heap_push(&cs, 0) < 0)
        goto out;
    /* the JSON's size, roughly: numbers per node, and each name once (in
     * names, fflat and fcum) */
    size_t est = 0;
    named = calloc(s.g->n_nodes + 1, sizeof(*named));
    if (!named)
        goto out;
    while (cs.nh > 0 && nk < FLAME_MAX_NODES) {
        const cand_t *top = &cs.c[cs.heap[0]];
        size_t vd = digits(top->pos) + (diff ? digits(top->neg) + 1 : 0);
        size_t cost = 5 + 2 * vd + 6; /* name index, values, selves, children */
        if (nk && !named[top->node])
            cost += json_len(graph_node_name(s.g, top->node)) + 5 + 2 * vd;
        if (nk && est + cost > FLAME_MAX_BYTES)
            break;
        est += cost;
        if (nk)
            named[top->node] = true;
        uint32_t ci = heap_pop(&cs);
        if (nk == capk) {
            cand_t *nkp = realloc(kept, capk * 2 * sizeof(*kept));
            if (!nkp)
                goto out;
            kept = nkp;
            capk *= 2;
        }
        kept[nk] = cs.c[ci];
        if (expand(&s, &cs, ci, (int32_t)nk) < 0)
            goto out;
        nk++;
    }
    int64_t pruned_max = cs.nh > 0 ? mag(&cs.c[cs.heap[0]]) : 0;

    /* children lists, heaviest first, then depth-first order */
    first = calloc(nk + 1, sizeof(*first));
    kids = malloc((nk + 1) * sizeof(*kids));
    fill = calloc(nk + 1, sizeof(*fill));
    stack = malloc((nk + 1) * sizeof(*stack));
    name_ix = malloc((s.g->n_nodes + 1) * sizeof(*name_ix));
    name_of = malloc((nk + 1) * sizeof(*name_of));
    if (!first || !kids || !fill || !stack || !name_ix || !name_of)
        goto out;
    for (size_t i = 1; i < nk; i++)
        first[kept[i].parent + 1]++;
    for (size_t i = 0; i < nk; i++)
        first[i + 1] += first[i];
    for (size_t i = 1; i < nk; i++) {
        uint32_t p = (uint32_t)kept[i].parent;
        kids[first[p] + fill[p]++] = (uint32_t)i;
    }
    kctx_t kc = {&s, kept};
    for (size_t i = 0; i < nk; i++)
        qsort_r(kids + first[i], first[i + 1] - first[i], sizeof(*kids), child_cmp, &kc);

    /* function totals over the whole profile, for tooltips */
    if (graph_build(s.g, NULL) < 0)
        goto out;
    for (size_t i = 0; i < s.g->n_nodes; i++)
        name_ix[i] = -1;

    const profile_t *p = r->w->p;
    const char *file = p->n_mappings ? work_str(r->w, p->mappings[0].filename) : "";
    sb_puts(out, "{\"title\":");
    char fb[4096];
    json_str(out, *file ? path_base(file, fb, sizeof(fb)) : "");
    sb_puts(out, ",\"type\":");
    json_str(out, r->sample_type ? r->sample_type : "");
    sb_puts(out, ",\"unit\":");
    json_str(out, r->sample_unit ? r->sample_unit : "");
    sb_printf(out, ",\"total\":%" PRId64 ",\"diff\":%s,\"pruned\":%" PRId64, r->total,
              diff ? "true" : "false", pruned_max);
    sb_puts(out, ",\"legend\":[");
    sbuf_t lg = {0};
    report_profile_labels(r, &lg);
    const char *l = sb_cstr(&lg);
    bool firstl = true;
    while (*l) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char *line = strndup(l, n);
        if (!line) {
            sb_free(&lg);
            goto out;
        }
        if (!firstl)
            sb_putc(out, ',');
        firstl = false;
        json_str(out, line);
        free(line);
        l += n + (e ? 1 : 0);
    }
    sb_free(&lg);
    sb_puts(out, "],\"nodes\":[");
    size_t nnames = 0, sp = 0;
    stack[sp++] = 0;
    bool firstn = true;
    while (sp > 0) {
        uint32_t i = stack[--sp];
        const cand_t *k = &kept[i];
        int64_t nm = 0;
        if (i != 0) {
            if (name_ix[k->node] < 0) {
                name_of[nnames] = k->node;
                name_ix[k->node] = (int64_t)++nnames; /* 0 is the root */
            }
            nm = name_ix[k->node];
        }
        uint32_t nc = first[i + 1] - first[i];
        if (!firstn)
            sb_putc(out, ',');
        firstn = false;
        if (diff)
            sb_printf(out, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%u", nm,
                      k->pos, k->neg, k->spos, k->sneg, nc);
        else
            sb_printf(out, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%u", nm, k->pos, k->spos, nc);
        for (uint32_t j = nc; j-- > 0;)
            stack[sp++] = kids[first[i] + j];
    }
    sb_puts(out, "],\"names\":[\"root\"");
    for (size_t i = 0; i < nnames; i++) {
        sb_putc(out, ',');
        json_str(out, graph_node_name(s.g, name_of[i]));
    }
    sb_printf(out, "],\"fflat\":[0");
    for (size_t i = 0; i < nnames; i++)
        sb_printf(out, ",%" PRId64, s.g->nodes[name_of[i]].flat);
    sb_printf(out, "],\"fcum\":[%" PRId64, kept[0].pos - kept[0].neg);
    for (size_t i = 0; i < nnames; i++)
        sb_printf(out, ",%" PRId64, s.g->nodes[name_of[i]].cum);
    sb_puts(out, "]}");
    rc = out->oom ? -ENOMEM : 0;
out:
    if (rc == -ENOMEM)
        oom(err, errlen);
    free(cs.c);
    free(cs.heap);
    free(kept);
    free(first);
    free(kids);
    free(fill);
    free(stack);
    free(name_ix);
    free(name_of);
    free(named);
    stacks_free(&s);
    return rc;
}

/* --- the page ----------------------------------------------------------------------------- */

const char *flame_script(size_t *len)
{
    if (len)
        *len = asset_flame_js_len;
    return (const char *)asset_flame_js;
}

const char *flame_style(size_t *len)
{
    if (len)
        *len = asset_flame_css_len;
    return (const char *)asset_flame_css;
}

/* Text into HTML. */
static void html(sbuf_t *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '&': sb_puts(b, "&amp;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        default: sb_putc(b, *s);
        }
    }
}

int flame_html(report_t *r, char *err, size_t errlen)
{
    sbuf_t data = {0}, b = {0};
    int rc = flame_json(r, &data, err, errlen);
    if (rc < 0) {
        sb_free(&data);
        return rc;
    }
    const profile_t *p = r->w->p;
    const char *file = p->n_mappings ? work_str(r->w, p->mappings[0].filename) : "";
    sb_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<title>");
    if (*file) {
        char fb[4096];
        html(&b, path_base(file, fb, sizeof(fb)));
        sb_puts(&b, " ");
    }
    html(&b, r->sample_type ? r->sample_type : "");
    sb_puts(&b, " flame graph (cprof)</title>\n<style>\n");
    sb_putn(&b, (const char *)asset_flame_css, asset_flame_css_len);
    sb_puts(&b, "</style>\n</head>\n<body>\n<div id=\"cprof-flame\"></div>\n"
                "<script type=\"application/json\" id=\"cprof-flame-data\">");
    sb_putn(&b, data.s, data.len);
    sb_puts(&b, "</script>\n<script>\n");
    sb_putn(&b, (const char *)asset_flame_js, asset_flame_js_len);
    sb_puts(&b, "\ncprofFlame(document.getElementById(\"cprof-flame\"),\n"
                "  JSON.parse(document.getElementById(\"cprof-flame-data\").textContent));\n"
                "</script>\n</body>\n</html>\n");
    sb_free(&data);
    if (b.oom) {
        sb_free(&b);
        return oom(err, errlen);
    }
    rc = 0;
    if (fwrite(b.s, 1, b.len, r->out) != b.len) {
        snprintf(err, errlen, "write error: %s", strerror(errno));
        rc = -EIO;
    }
    sb_free(&b);
    return rc;
}
