/* report.c — report headers and the -top/-text, -tree/-peek and -traces
 * printers. */
#include "tool/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/path.h"
#include "base/strs.h"
#include "tool/graph/measure.h"

static inline int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

int64_t report_compute_total(const work_t *w, int vi, int mi)
{
    int64_t div = 0, total = 0, diff_div = 0, diff_total = 0;
    int64_t key = work_label_key(w, "pprof::base"), val = -1;
    for (size_t i = 1; key > 0 && i < w->p->n_strings && val < 0; i++)
        if (strcmp(w->p->strings[i], "true") == 0)
            val = (int64_t)i;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        int64_t v = s->values[vi], d = mi >= 0 ? s->values[mi] : 0;
        if (v < 0)
            v = -v;
        total += v;
        div += d;
        if (key > 0 && val > 0)
            for (uint32_t j = 0; j < s->n_labels; j++)
                if (s->labels[j].key == key && s->labels[j].str == val) {
                    diff_total += v;
                    diff_div += d;
                    break;
                }
    }
    if (diff_total > 0) {
        total = diff_total;
        div = diff_div;
    }
    return div != 0 ? total / div : total;
}

const char *report_format_value(const report_t *r, int64_t v, char *buf, size_t n)
{
    if (r->ratio > 0 && r->ratio != 1)
        v = profile_value_of((double)v * r->ratio);
    return measure_scaled_label(buf, n, v, r->sample_unit, r->output_unit);
}

const char *report_time_header(int64_t nanos, char *buf, size_t n)
{
    static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(nanos / 1000000000);
    if (nanos < 0 && nanos % 1000000000)
        t--;
    struct tm tm;
    localtime_r(&t, &tm);
    int h = tm.tm_hour % 12;
    snprintf(buf, n, "%s %d, %d at %d:%02d%s (%s)", mon[tm.tm_mon], tm.tm_mday, tm.tm_year + 1900,
             h ? h : 12, tm.tm_min, tm.tm_hour < 12 ? "am" : "pm", tm.tm_zone);
    return buf;
}

const char *report_time_string(int64_t nanos, char *buf, size_t n)
{
    int64_t sec = nanos / 1000000000, ns = nanos % 1000000000;
    if (ns < 0) {
        ns += 1000000000;
        sec--;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    localtime_r(&t, &tm);
    char frac[16] = "";
    if (ns) {
        snprintf(frac, sizeof(frac), ".%09" PRId64, ns);
        size_t l = strlen(frac);
        while (frac[l - 1] == '0')
            frac[--l] = '\0';
    }
    long off = tm.tm_gmtoff;
    char sign = off < 0 ? '-' : '+';
    if (off < 0)
        off = -off;
    snprintf(buf, n, "%04d-%02d-%02d %02d:%02d:%02d%s %c%02ld%02ld %s", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac, sign, off / 3600,
             (off % 3600) / 60, tm.tm_zone);
    return buf;
}

void report_profile_labels(const report_t *r, sbuf_t *out)
{
    const profile_t *p = r->w->p;
    const work_t *w = r->w;
    char buf[4096];
    if (p->n_mappings > 0) {
        const char *file = work_str(w, p->mappings[0].filename);
        if (*file)
            sb_printf(out, "File: %s\n", path_base(file, buf, sizeof(buf)));
        const char *bid = work_str(w, p->mappings[0].build_id);
        if (*bid)
            sb_printf(out, "Build ID: %s\n", bid);
    }
    for (size_t i = 0; i < p->n_comments; i++) {
        const char *c = work_str(w, p->comments[i]);
        if (c[0] != '#')
            sb_printf(out, "%s\n", c);
    }
    if (r->sample_type && *r->sample_type)
        sb_printf(out, "Type: %s\n", r->sample_type);
    if (p->time_nanos != 0)
        sb_printf(out, "Time: %s\n", report_time_header(p->time_nanos, buf, sizeof(buf)));
    if (p->duration_nanos != 0) {
        char dur[64], tot[64], pct[32], ratio[48] = "";
        const char *u;
        double tn = measure_scale(r->total, r->sample_unit, "nanoseconds", &u);
        if (strcmp(u, "ns") == 0 && tn != 0)
            snprintf(ratio, sizeof(ratio), "(%s)",
                     measure_percentage(pct, sizeof(pct), (int64_t)tn, p->duration_nanos));
        sb_printf(out, "Duration: %s, Total samples = %s %s\n",
                  measure_label(dur, sizeof(dur), p->duration_nanos, "nanoseconds"),
                  report_format_value(r, r->total, tot, sizeof(tot)), ratio);
    }
}

/* pprof's reportLabels; full: graphs' fullHeaders. */
void report_graph_labels(const report_t *r, graph_t *g, const trim_result_t *t, bool full,
                         sbuf_t *out)
{
    if (full || !r->cfg->compact_labels)
        report_profile_labels(r, out);
    int64_t flat_sum = 0;
    for (size_t i = 0; i < g->n_sel; i++)
        flat_sum += graph_flat_value(&g->nodes[g->sel[i]]);
    if (r->n_filters) {
        sb_puts(out, "Active filters:\n");
        for (size_t i = 0; i < r->n_filters; i++) {
            const char *f = r->filters[i];
            if (strlen(f) > 80)
                sb_printf(out, "   %.80s\xe2\x80\xa6\n", f);
            else
                sb_printf(out, "   %s\n", f);
        }
    }
    char a[64], b[64], pct[32];
    measure_percentage(pct, sizeof(pct), flat_sum, r->total);
    const char *pp = pct;
    while (*pp == ' ')
        pp++;
    sb_printf(out, "Showing nodes accounting for %s, %s of %s total\n",
              report_format_value(r, flat_sum, a, sizeof(a)), pp,
              report_format_value(r, r->total, b, sizeof(b)));
    if (r->total != 0) {
        if (t->dropped_nodes > 0)
            sb_printf(out, "Dropped %d node%s (cum <= %s)\n", t->dropped_nodes,
                      t->dropped_nodes > 1 ? "s" : "",
                      report_format_value(
                          r, abs64(profile_value_of((double)r->total * r->cfg->nodefraction)), a,
                          sizeof(a)));
        if (t->dropped_edges > 0 && r->cmd->format == FMT_DOT)
            sb_printf(out, "Dropped %d edge%s (freq <= %s)\n", t->dropped_edges,
                      t->dropped_edges > 1 ? "s" : "",
                      report_format_value(
                          r, abs64(profile_value_of((double)r->total * r->cfg->edgefraction)), a,
                          sizeof(a)));
        if (g->n_sel > 0 && (int)g->n_sel < t->orig_count)
            sb_printf(out, "Showing top %zu nodes out of %d\n", g->n_sel, t->orig_count);
    }
    if (full)
        sb_puts(out, "\nSee https://git.io/JfYMW for how to read the graph\n");
}

static void report_labels(const report_t *r, graph_t *g, const trim_result_t *t, sbuf_t *out)
{
    report_graph_labels(r, g, t, false, out);
}

/* pprof's selectOutputUnit. */
static void select_output_unit(report_t *r, graph_t *g)
{
    if (strcmp(r->output_unit, "minimum") != 0 || g->n_sel == 0)
        return;
    int64_t minv = 0;
    for (size_t i = 0; i < g->n_sel; i++) {
        const gnode_t *n = &g->nodes[g->sel[i]];
        int64_t m = abs64(graph_flat_value(n));
        if (m == 0)
            m = abs64(graph_cum_value(n));
        if (m > 0 && (minv == 0 || m < minv))
            minv = m;
    }
    int64_t maxv = r->total;
    if (minv == 0)
        minv = maxv;
    if (r->ratio > 0 && r->ratio != 1) {
        minv = profile_value_of((double)minv * r->ratio);
        maxv = profile_value_of((double)maxv * r->ratio);
    }
    const char *minu, *maxu, *unit;
    measure_scale(minv, r->sample_unit, "minimum", &minu);
    measure_scale(maxv, r->sample_unit, "minimum", &maxu);
    unit = minu;
    if (strcmp(minu, maxu) != 0 && profile_value_mul(minv, 100) < maxv && r->cmd->format != FMT_CALLGRIND)
        measure_scale(profile_value_mul(minv, 100), r->sample_unit, "minimum", &unit);
    snprintf(r->output_unit, sizeof(r->output_unit), "%s", *unit ? unit : r->sample_unit);
}

int report_trimmed_graph(report_t *r, bool visual, graph_t **gout, trim_result_t *t, char *err,
                         size_t errlen)
{
    int64_t kb = -1;
    for (size_t i = 1; i < r->w->p->n_strings && kb < 0; i++)
        if (strcmp(r->w->p->strings[i], "bytes") == 0)
            kb = (int64_t)i;
    const char *bu = kb > 0 && r->units ? numunits_get(r->units, kb) : "";
    graph_opts_t go = {.value_index = r->value_index,
                       .mean_index = r->mean_index,
                       .drop_negative = r->cfg->drop_negative,
                       /* pprof honours call_tree for graph images and callgrind */
                       .call_tree = r->cfg->call_tree &&
                                    (r->cmd->format == FMT_DOT || r->cmd->format == FMT_CALLGRIND),
                       /* and keeps object names where they are shown */
                       .obj_names = r->cmd->format == FMT_CALLGRIND,
                       .tags = visual,
                       .bytes_unit = *bu ? bu : "bytes",
                       .tag_unit = r->cfg->unit};
    graph_t *g;
    int rc = graph_new(r->w, &go, &g);
    if (rc < 0)
        return err_fmt(err, errlen, rc, "out of memory");
    trim_opts_t to = {.node_fraction = r->cfg->nodefraction,
                      .edge_fraction = r->cfg->edgefraction,
                      .node_count = r->cfg->nodecount,
                      .cum_sort = strcmp(r->cfg->sort, "cum") == 0,
                      .visual = visual};
    if ((rc = graph_trimmed(g, &to, t)) < 0) {
        graph_free(g);
        return err_fmt(err, errlen, rc, "out of memory");
    }
    select_output_unit(r, g);
    *gout = g;
    return 0;
}

static int flush(report_t *r, sbuf_t *b, char *err, size_t errlen)
{
    if (b->oom) {
        sb_free(b);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (b->len && fwrite(b->s, 1, b->len, r->out) != b->len) {
        sb_free(b);
        snprintf(err, errlen, "write error: %s", strerror(errno));
        return -EIO;
    }
    sb_reset(b);
    return 0;
}

const char *report_inline_label(const graph_t *g, uint32_t ni)
{
    const gnode_t *n = &g->nodes[ni];
    bool inl = false, noinl = false;
    for (uint32_t j = 0; j < n->in_n; j++) {
        const gedge_t *e = &g->edges[g->in_refs[n->in_start + j]];
        if (e->removed)
            continue;
        if (e->inl)
            inl = true;
        else
            noinl = true;
    }
    return inl ? (noinl ? "(partial-inline)" : "(inline)") : "";
}

int report_text(report_t *r, char *err, size_t errlen)
{
    graph_t *g;
    trim_result_t t;
    int rc = report_trimmed_graph(r, false, &g, &t, err, errlen);
    if (rc < 0)
        return rc;
    sbuf_t b = {0};
    report_labels(r, g, &t, &b);
    sb_printf(&b, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum");
    int64_t flat_sum = 0;
    char fv[64], cv[64], p1[32], p2[32], p3[32];
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        const gnode_t *n = &g->nodes[ni];
        const char *inl = report_inline_label(g, ni);
        int64_t flat = graph_flat_value(n), cum = graph_cum_value(n);
        flat_sum += flat;
        sb_printf(&b, "%10s %s %s %10s %s  %s%s%s\n", report_format_value(r, flat, fv, sizeof(fv)),
                  measure_percentage(p1, sizeof(p1), flat, r->total),
                  measure_percentage(p2, sizeof(p2), flat_sum, r->total),
                  report_format_value(r, cum, cv, sizeof(cv)),
                  measure_percentage(p3, sizeof(p3), cum, r->total), graph_node_name(g, ni),
                  *inl ? " " : "", inl);
        if (b.len > (1 << 16) && flush(r, &b, err, errlen) < 0) {
            graph_free(g);
            return -EIO;
        }
    }
    graph_free(g);
    rc = flush(r, &b, err, errlen);
    sb_free(&b);
    return rc;
}

static void tree_edges(report_t *r, graph_t *g, uint32_t ni, bool in, int64_t cum, sbuf_t *b)
{
    size_t n;
    uint32_t *es = graph_edges_sorted(g, ni, in, &n);
    char v[64], p[32];
    for (size_t i = 0; es && i < n; i++) {
        const gedge_t *e = &g->edges[es[i]];
        sb_printf(b, "%50s %s |   %s%s\n", report_format_value(r, e->weight, v, sizeof(v)),
                  measure_percentage(p, sizeof(p), e->weight, cum),
                  graph_node_name(g, in ? e->src : e->dst), e->inl ? " (inline)" : "");
    }
    free(es);
}

int report_tree(report_t *r, char *err, size_t errlen)
{
    static const char sep[] = "----------------------------------------------------------+-------------\n";
    graph_t *g;
    trim_result_t t;
    int rc = report_trimmed_graph(r, false, &g, &t, err, errlen);
    if (rc < 0)
        return rc;
    sbuf_t b = {0};
    report_labels(r, g, &t, &b);
    sb_puts(&b, sep);
    sb_puts(&b, "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t \n");
    int64_t flat_sum = 0;
    size_t matched = 0;
    char fv[64], cv[64], p1[32], p2[32], p3[32];
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        const gnode_t *n = &g->nodes[ni];
        const char *name = graph_node_name(g, ni);
        if (r->symbol && !rx_match(r->symbol, name))
            continue;
        matched++;
        int64_t flat = graph_flat_value(n), cum = graph_cum_value(n);
        sb_puts(&b, sep);
        tree_edges(r, g, ni, true, cum, &b);
        flat_sum += flat;
        sb_printf(&b, "%10s %s %s %10s %s                | %s\n",
                  report_format_value(r, flat, fv, sizeof(fv)),
                  measure_percentage(p1, sizeof(p1), flat, r->total),
                  measure_percentage(p2, sizeof(p2), flat_sum, r->total),
                  report_format_value(r, cum, cv, sizeof(cv)),
                  measure_percentage(p3, sizeof(p3), cum, r->total), name);
        tree_edges(r, g, ni, false, cum, &b);
        if (b.len > (1 << 16) && flush(r, &b, err, errlen) < 0) {
            graph_free(g);
            return -EIO;
        }
    }
    if (g->n_sel > 0)
        sb_puts(&b, sep);
    graph_free(g);
    rc = flush(r, &b, err, errlen);
    sb_free(&b);
    if (rc == 0 && r->symbol && matched == 0) {
        snprintf(err, errlen, "no matches found for regexp: %s", rx_pattern(r->symbol));
        return -ENOENT;
    }
    return rc;
}

/* Appends "%10s:  v1 v2\n" lines for the sample's string (num false) or
 * numeric labels, grouped by key in first-seen order, sorted as strings. */
static void trace_labels(report_t *r, const wsample_t *s, bool num, sbuf_t *out)
{
    const work_t *w = r->w;
    char *lines[64];
    size_t nl = 0;
    int64_t keys[64];
    size_t nk = label_keys(s, num, keys, 64);
    sbuf_t b = {0};
    for (size_t k = 0; k < nk; k++) {
        sb_reset(&b);
        bool first = true;
        for (uint32_t i = 0; i < s->n_labels; i++) {
            const profile_label_t *l = &s->labels[i];
            if (l->key != keys[k] || (num ? !label_is_num(l) : !label_is_str(l)))
                continue;
            if (!first)
                sb_putc(&b, ' ');
            first = false;
            if (num) {
                char v[64];
                sb_puts(&b, measure_label(v, sizeof(v), l->num, numunits_get(r->units, l->key)));
            } else {
                sb_puts(&b, work_str(w, l->str));
            }
        }
        sbuf_t line = {0};
        sb_printf(&line, "%10s:  %s\n", work_str(w, keys[k]), sb_cstr(&b));
        lines[nl++] = sb_steal(&line);
    }
    sb_free(&b);
    strs_sort(lines, nl);
    for (size_t i = 0; i < nl; i++) {
        sb_puts(out, lines[i]);
        free(lines[i]);
    }
}

int report_traces(report_t *r, char *err, size_t errlen)
{
    static const char sep[] = "-----------+-------------------------------------------------------\n";
    sbuf_t b = {0};
    report_profile_labels(r, &b);
    graph_opts_t go = {.value_index = r->value_index, .mean_index = r->mean_index};
    graph_t *g;
    if (graph_new(r->w, &go, &g) < 0) {
        snprintf(err, errlen, "out of memory");
        sb_free(&b);
        return -ENOMEM;
    }
    const work_t *w = r->w;
    char v[64];
    for (size_t si = 0; si < w->n_samples; si++) {
        const wsample_t *s = &w->samples[si];
        if (s->n_locs == 0)
            continue;
        sb_puts(&b, sep);
        trace_labels(r, s, false, &b);
        trace_labels(r, s, true, &b);
        int64_t val = s->values[r->value_index];
        int64_t d = r->mean_index >= 0 ? s->values[r->mean_index] : 0;
        if (d != 0)
            val /= d;
        bool first = true;
        for (uint32_t i = 0; i < s->n_locs; i++) {
            uint32_t loc = s->locs[i];
            uint32_t f = g->loc_first[loc], cnt = g->loc_first[loc + 1] - f;
            for (uint32_t j = 0; j < cnt; j++) {
                sb_printf(&b, "%10s   %s%s\n", first ? report_format_value(r, val, v, sizeof(v)) : "",
                          graph_node_name(g, g->loc_nodes[f + j]), j != cnt - 1 ? " (inline)" : "");
                first = false;
            }
        }
        if (b.len > (1 << 16) && flush(r, &b, err, errlen) < 0) {
            graph_free(g);
            return -EIO;
        }
    }
    sb_puts(&b, sep);
    graph_free(g);
    int rc = flush(r, &b, err, errlen);
    sb_free(&b);
    return rc;
}

int report_generate(report_t *r, char *err, size_t errlen)
{
    if (r->cmd->render)
        return r->cmd->render(r, err, errlen);
    snprintf(err, errlen, "%s: not available in this version of cprof", r->cmd->name);
    return -ENOTSUP;
}
