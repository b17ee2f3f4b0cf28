/* callgrind.c — -callgrind/-kcachegrind and -topproto (see callgrind.h). */
#include "tool/report/callgrind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/measure.h"

/* Strings numbered on first use, as callgrind's name compression wants:
 * "(N) name" the first time, "(N)" after (pprof's callgrindName). Names are
 * profile strings, so the table is indexed by string id; the few
 * disambiguated names (" [i/n]") are kept apart by their text. */
typedef struct {
    uint32_t *ids; /* per string id: its number, 0 = not yet */
    char **extra;  /* disambiguated names, numbered after being added */
    uint32_t *extra_ids;
    size_t n_extra;
    uint32_t next;
} names_t;

static void cg_name(sbuf_t *b, names_t *t, const work_t *w, int64_t str, const char *text)
{
    const char *name = text ? text : work_str(w, str);
    if (!*name)
        return;
    uint32_t *slot = NULL;
    if (!text) {
        slot = &t->ids[str];
    } else {
        for (size_t i = 0; i < t->n_extra && !slot; i++)
            if (strcmp(t->extra[i], text) == 0)
                slot = &t->extra_ids[i];
        char **ne = slot ? NULL : realloc(t->extra, (t->n_extra + 1) * sizeof(*ne));
        uint32_t *ni = ne ? realloc(t->extra_ids, (t->n_extra + 1) * sizeof(*ni)) : NULL;
        if (ne)
            t->extra = ne;
        if (ni)
            t->extra_ids = ni;
        if (!slot && (!ne || !ni || !(ne[t->n_extra] = strdup(text)))) {
            b->oom = true;
            return;
        }
        if (!slot) {
            slot = &t->extra_ids[t->n_extra++];
            *slot = 0;
        }
    }
    if (*slot) {
        sb_printf(b, "(%u)", *slot);
        return;
    }
    *slot = ++t->next;
    sb_printf(b, "(%u) %s", *slot, name);
}

static void names_free(names_t *t)
{
    for (size_t i = 0; i < t->n_extra; i++)
        free(t->extra[i]);
    free(t->extra);
    free(t->extra_ids);
    free(t->ids);
}

/* pprof's callgrindAddress: "*" for the same address, a signed offset when
 * shorter than the absolute one. */
static void cg_address(sbuf_t *b, const ninfo_t *prev, uint64_t cur)
{
    char abs[32], rel[32];
    snprintf(abs, sizeof(abs), "%#llx", (unsigned long long)cur);
    if (cur == 0)
        snprintf(abs, sizeof(abs), "0x0");
    if (!prev) {
        sb_puts(b, abs);
        return;
    }
    if (prev->address == cur) {
        sb_putc(b, '*');
        return;
    }
    snprintf(rel, sizeof(rel), "%+lld", (long long)(cur - prev->address));
    sb_puts(b, strlen(rel) < strlen(abs) ? rel : abs);
}

static int64_t scaled(const report_t *r, int64_t v)
{
    const char *unit;
    return (int64_t)measure_scale(v, r->sample_unit, r->output_unit, &unit);
}

static int by_file_name(const void *x, const void *y, void *arg)
{
    const graph_t *g = arg;
    const uint32_t *a = x, *b = y; /* positions in g->sel */
    const ninfo_t *p = &g->nodes[g->sel[*a]].info, *q = &g->nodes[g->sel[*b]].info;
    if (p->file != q->file)
        return p->file < q->file ? -1 : 1;
    if (p->name != q->name)
        return p->name < q->name ? -1 : 1;
    return *a < *b ? -1 : *a > *b;
}

static bool same_function(const ninfo_t *a, const ninfo_t *b)
{
    return a->orig_name == b->orig_name && a->start_line == b->start_line && a->objfile == b->objfile;
}

/* pprof's getDisambiguatedNames: a node whose (file, name) several
 * functions share (they differ in linker name, start line or object) is
 * called "name [i/n]", i in order of first appearance. Fills nth and count
 * (the number of functions of its name) per node. */
static int disambiguate(graph_t *g, uint32_t *nth, uint32_t *count)
{
    uint32_t *pos = malloc((g->n_sel + 1) * sizeof(*pos));
    if (!pos)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_sel; i++)
        pos[i] = (uint32_t)i;
    qsort_r(pos, g->n_sel, sizeof(*pos), by_file_name, g);
    for (size_t i = 0, j; i < g->n_sel; i = j) {
        const ninfo_t *a = &g->nodes[g->sel[pos[i]]].info;
        uint32_t funcs = 0;
        for (j = i; j < g->n_sel; j++) {
            const ninfo_t *b = &g->nodes[g->sel[pos[j]]].info;
            if (b->file != a->file || b->name != a->name)
                break;
            size_t k = i;
            while (k < j && !same_function(&g->nodes[g->sel[pos[k]]].info, b))
                k++;
            nth[g->sel[pos[j]]] = k < j ? nth[g->sel[pos[k]]] : funcs++;
        }
        for (size_t k = i; k < j; k++)
            count[g->sel[pos[k]]] = funcs;
    }
    free(pos);
    return 0;
}

int report_callgrind(report_t *r, char *err, size_t errlen)
{
    graph_t *g;
    trim_result_t t;
    int rc = report_trimmed_graph(r, false, &g, &t, err, errlen);
    if (rc < 0)
        return rc;
    work_t *w = r->w;
    sbuf_t b = {0};
    names_t objs = {0}, files = {0}, fns = {0};
    uint32_t *nth = calloc(g->n_nodes + 1, sizeof(*nth)), *count = calloc(g->n_nodes + 1, sizeof(*count));
    objs.ids = calloc(w->p->n_strings + 1, sizeof(uint32_t));
    files.ids = calloc(w->p->n_strings + 1, sizeof(uint32_t));
    fns.ids = calloc(w->p->n_strings + 1, sizeof(uint32_t));
    b.oom = !nth || !count || !objs.ids || !files.ids || !fns.ids || disambiguate(g, nth, count) < 0;
    sb_printf(&b, "positions: instr line\nevents: %s(%s)\n", r->sample_type, r->output_unit);
    const ninfo_t *prev = NULL;
    for (size_t i = 0; i < g->n_sel && !b.oom; i++) {
        uint32_t id = g->sel[i];
        const ninfo_t *n = &g->nodes[id].info;
        if (!prev || n->objfile != prev->objfile || n->file != prev->file || n->name != prev->name) {
            sb_puts(&b, "\nob=");
            cg_name(&b, &objs, w, n->objfile, NULL);
            sb_puts(&b, "\nfl=");
            cg_name(&b, &files, w, n->file, NULL);
            sb_puts(&b, "\nfn=");
            cg_name(&b, &fns, w, n->name, NULL);
            sb_putc(&b, '\n');
        }
        cg_address(&b, prev, n->address);
        sb_printf(&b, " %lld %lld\n", (long long)n->lineno,
                  (long long)scaled(r, graph_flat_value(&g->nodes[id])));
        size_t ne;
        uint32_t *out = graph_edges_sorted(g, id, false, &ne);
        for (size_t k = 0; k < ne; k++) {
            const gedge_t *e = &g->edges[out[k]];
            const ninfo_t *callee = &g->nodes[e->dst].info;
            sb_puts(&b, "cfl=");
            cg_name(&b, &files, w, callee->file, NULL);
            sb_puts(&b, "\ncfn=");
            if (count[e->dst] > 1) {
                char s[4096];
                snprintf(s, sizeof(s), "%s [%u/%u]", work_str(w, callee->name), nth[e->dst] + 1,
                         count[e->dst]);
                cg_name(&b, &fns, w, 0, s);
            } else {
                cg_name(&b, &fns, w, callee->name, NULL);
            }
            /* pprof has no flat weight for a call: calls=0 */
            sb_puts(&b, "\ncalls=0 ");
            cg_address(&b, prev, callee->address);
            sb_printf(&b, " %lld\n* * %lld\n", (long long)callee->lineno,
                      (long long)scaled(r, e->weight));
        }
        free(out);
        prev = n;
    }
    if (b.oom) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    } else if (fwrite(b.s, 1, b.len, r->out) != b.len) {
        snprintf(err, errlen, "writing report: %s", strerror(errno));
        rc = -EIO;
    }
    sb_free(&b);
    names_free(&objs);
    names_free(&files);
    names_free(&fns);
    free(nth);
    free(count);
    graph_free(g);
    return rc;
}

/* --- -topproto ------------------------------------------------------------------- */

static bool same_key(const ninfo_t *a, const ninfo_t *b)
{
    return a->name == b->name && a->orig_name == b->orig_name && a->file == b->file &&
           a->start_line == b->start_line;
}

static int by_key(const void *x, const void *y, void *arg)
{
    const graph_t *g = arg;
    const uint32_t *a = x, *b = y;
    const ninfo_t *p = &g->nodes[g->sel[*a]].info, *q = &g->nodes[g->sel[*b]].info;
    int64_t d[] = {p->name - q->name, p->orig_name - q->orig_name, p->file - q->file,
                   p->start_line - q->start_line, (int64_t)*a - (int64_t)*b};
    for (size_t i = 0; i < 5; i++)
        if (d[i])
            return d[i] < 0 ? -1 : 1;
    return 0;
}

static int by_value(const void *x, const void *y)
{
    const uint32_t *a = x, *b = y;
    return *a < *b ? -1 : *a > *b;
}

/* Function ids as pprof's functionMap gives them: 1, 2, ... in the order
 * the nodes first use each (name, linker name, file, start line). */
static int function_ids(const graph_t *g, uint64_t *fid, uint32_t *first, size_t *nfirst)
{
    uint32_t *pos = malloc((g->n_sel + 1) * sizeof(*pos));
    if (!pos)
        return -ENOMEM;
    for (size_t i = 0; i < g->n_sel; i++)
        pos[i] = (uint32_t)i;
    qsort_r(pos, g->n_sel, sizeof(*pos), by_key, (void *)g);
    size_t nf = 0;
    for (size_t i = 0; i < g->n_sel; i++)
        if (i == 0 || !same_key(&g->nodes[g->sel[pos[i]]].info, &g->nodes[g->sel[pos[i - 1]]].info))
            first[nf++] = pos[i];
    qsort(first, nf, sizeof(*first), by_value);
    /* first[] is sorted: a node's group leader is found by binary search on
     * the leader of its run in pos[]. */
    for (size_t i = 0, lead = 0; i < g->n_sel; i++) {
        if (i == 0 || !same_key(&g->nodes[g->sel[pos[i]]].info, &g->nodes[g->sel[pos[i - 1]]].info))
            lead = pos[i];
        uint32_t *f = bsearch(&(uint32_t){(uint32_t)lead}, first, nf, sizeof(*first), by_value);
        fid[pos[i]] = (uint64_t)(f - first) + 1;
    }
    free(pos);
    *nfirst = nf;
    return 0;
}

int report_topproto(report_t *r, char *err, size_t errlen)
{
    graph_t *g;
    trim_result_t t;
    int rc = report_trimmed_graph(r, false, &g, &t, err, errlen);
    if (rc < 0)
        return rc;
    const profile_t *p = r->w->p;
    profile_t *q = profile_new();
    uint64_t *fid = calloc(g->n_sel + 1, sizeof(*fid));
    uint32_t *first = calloc(g->n_sel + 1, sizeof(*first));
    size_t nf = 0;
    rc = q && fid && first && function_ids(g, fid, first, &nf) == 0 &&
                 profile_add_sample_type(q, "cum", r->output_unit) >= 0 &&
                 profile_add_sample_type(q, "flat", r->output_unit) >= 0
             ? 0
             : -ENOMEM;
    if (rc == 0) {
        q->time_nanos = p->time_nanos;
        q->duration_nanos = p->duration_nanos;
        q->period_type.type = profile_intern(q, p->strings[p->period_type.type]);
        q->period_type.unit = profile_intern(q, p->strings[p->period_type.unit]);
        q->period = p->period;
    }
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        const ninfo_t *n = &g->nodes[g->sel[first[i]]].info;
        profile_function_t *f = profile_add_function(q);
        if (!f) {
            rc = -ENOMEM;
            break;
        }
        *f = (profile_function_t){i + 1, profile_intern(q, work_str(r->w, n->name)),
                                  profile_intern(q, work_str(r->w, n->orig_name)),
                                  profile_intern(q, work_str(r->w, n->file)), n->start_line};
    }
    for (size_t i = 0; rc == 0 && i < g->n_sel; i++) {
        const gnode_t *n = &g->nodes[g->sel[i]];
        profile_line_t line = {fid[i], n->info.lineno};
        profile_location_t *l = profile_add_location(q, &line, 1);
        uint64_t id = i + 1;
        int64_t v[2] = {scaled(r, graph_cum_value(n)), scaled(r, graph_flat_value(n))};
        if (!l || !profile_add_sample(q, &id, 1, v)) {
            rc = -ENOMEM;
            break;
        }
        l->id = id;
        l->address = n->info.address;
    }
    if (rc == 0 && profile_index(q) < 0)
        rc = -ENOMEM;
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
    } else {
        fflush(r->out);
        if ((rc = profile_write_fd(q, fileno(r->out))) < 0)
            snprintf(err, errlen, "writing profile: %s", strerror(-rc));
    }
    profile_free(q);
    free(fid);
    free(first);
    graph_free(g);
    return rc;
}
