/* webviews.c — the views of the web UI: graph, top, flame graph, peek,
 * source, disassembly, memory over time, breakdown by class, download. */
#include "tool/ui/webviews.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"
#include "tool/report/dot.h"
#include "tool/driver/driver.h"
#include "tool/report/flame.h"
#include "tool/graph/measure.h"
#include "tool/ui/memtime.h"
#include "tool/ui/weblife.h"
#include "tool/report/report.h"
#include "tool/report/weblist.h"

#define HTML "text/html; charset=utf-8"

/* --- running a report --------------------------------------------------------- */

typedef webrun_t run_t;

void webviews_run(profile_t *p, const config_t *cfg, const char *cmd, const char *param,
                       driver_gen_fn gen, void *arg, run_t *run)
{
    memset(run, 0, sizeof(*run));
    FILE *out = open_memstream(&run->out, &run->out_len);
    FILE *msgs = open_memstream(&run->msgs, &run->msgs_len);
    if (!out || !msgs) {
        if (out)
            fclose(out);
        if (msgs)
            fclose(msgs);
        run->rc = -1;
        return;
    }
    run->rc = driver_report_with(p, cmd, param, cfg, out, msgs, gen, arg);
    if (fclose(out) != 0 || fclose(msgs) != 0)
        run->rc = -1;
}

void webviews_run_free(run_t *run)
{
    free(run->out);
    free(run->msgs);
}

bool webviews_config(const web_req_t *q, web_resp_t *r, config_t *cfg)
{
    char err[1024];
    if (web_config(q, cfg, err, sizeof(err)) < 0) {
        web_page_message(r, q, 400, NULL, err);
        return false;
    }
    return true;
}

void webviews_failed(const web_req_t *q, web_resp_t *r, const run_t *run, const char *legend)
{
    const char *m = run->msgs && *run->msgs ? run->msgs : "the report could not be made";
    web_page_message(r, q, 400, legend, m);
}

/* --- values ---------------------------------------------------------------------- */

static void pct(sbuf_t *b, int64_t v, int64_t total)
{
    if (total == 0)
        sb_puts(b, "0.00%");
    else
        sb_printf(b, "%.2f%%", (double)v * 100.0 / (double)(total < 0 ? -total : total));
}

/* A value cell: the number in the report's unit, coloured by sign in a
 * diff view. */
static void value_cell(sbuf_t *b, const web_req_t *q, const report_t *r, int64_t v)
{
    char buf[64];
    sb_puts(b, "<td class=\"num");
    if (q->diff && v != 0)
        sb_puts(b, v > 0 ? " pos" : " neg");
    sb_puts(b, "\">");
    web_html(b, report_format_value(r, v, buf, sizeof(buf)));
    sb_puts(b, "</td>");
}

/* --- top ---------------------------------------------------------------------------- */

typedef struct {
    const web_req_t *q;
    sbuf_t legend, rows;
    int64_t total;
    size_t n;
    char **funcs; /* each row's function name (for the source picker) */
} top_t;

static void top_free(top_t *t)
{
    for (size_t i = 0; t->funcs && i < t->n; i++)
        free(t->funcs[i]);
    free(t->funcs);
    sb_free(&t->legend);
    sb_free(&t->rows);
}

/* pprof's TextItems as table rows; the graph is the -top report's. */
static int gen_top(report_t *r, void *arg, char *err, size_t errlen)
{
    top_t *t = arg;
    graph_t *g;
    trim_result_t tr;
    int rc = report_trimmed_graph(r, false, &g, &tr, err, errlen);
    if (rc < 0)
        return rc;
    report_graph_labels(r, g, &tr, false, &t->legend);
    t->total = r->total;
    sbuf_t *b = &t->rows;
    int64_t sum = 0;
    t->funcs = calloc(g->n_sel + 1, sizeof(*t->funcs));
    if (!t->funcs) {
        graph_free(g);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < g->n_sel; i++) {
        uint32_t ni = g->sel[i];
        const gnode_t *n = &g->nodes[ni];
        int64_t flat = graph_flat_value(n), cum = graph_cum_value(n);
        sum += flat;
        const char *name = graph_node_name(g, ni);
        sb_puts(b, "<tr data-name=\"");
        web_html(b, work_str(r->w, n->info.name));
        sb_printf(b, "\" data-flat=\"%" PRId64 "\" data-cum=\"%" PRId64 "\">", flat, cum);
        value_cell(b, t->q, r, flat);
        sb_puts(b, "<td class=\"num\">");
        pct(b, flat, r->total);
        sb_puts(b, "</td><td class=\"num\">");
        pct(b, sum, r->total);
        sb_puts(b, "</td>");
        value_cell(b, t->q, r, cum);
        sb_puts(b, "<td class=\"num\">");
        pct(b, cum, r->total);
        sb_puts(b, "</td><td class=\"name\">");
        web_html(b, name ? name : "?");
        sb_printf(b, "</td><td>%s</td></tr>\n", report_inline_label(g, ni));
        t->funcs[t->n++] = strdup(work_str(r->w, n->info.name));
    }
    graph_free(g);
    return 0;
}

/* The top table of the request's profile, nodecount rows, into t; false
 * (the error page written, nothing left to free) when it failed. */
static bool top_run(const web_req_t *q, web_resp_t *r, int nodecount, top_t *t, run_t *run)
{
    *t = (top_t){.q = q};
    memset(run, 0, sizeof(*run));
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return false;
    cfg.nodecount = nodecount;
    webviews_run(q->p, &cfg, "top", NULL, gen_top, t, run);
    config_free(&cfg);
    if (run->rc >= 0)
        return true;
    webviews_failed(q, r, run, NULL);
    top_free(t);
    webviews_run_free(run);
    return false;
}

static void view_top(const web_req_t *q, web_resp_t *r)
{
    top_t t;
    run_t run;
    if (!top_run(q, r, 500 /* rows, as pprof's top view */, &t, &run))
        return;
    web_frame_t f = {sb_cstr(&t.legend), run.msgs, false};
    sbuf_t *b = &r->body;
    web_page_begin(b, q, &f);
    sb_printf(b, "<table id=\"toptable\" data-total=\"%" PRId64 "\">\n<thead><tr>"
                 "<th id=\"flathdr1\" class=\"num sort\" data-sort=\"flat\">Flat</th>"
                 "<th id=\"flathdr2\" class=\"num sort\" data-sort=\"flat\">Flat%%</th>"
                 "<th class=\"num\">Sum%%</th>"
                 "<th id=\"cumhdr1\" class=\"num sort\" data-sort=\"cum\">Cum</th>"
                 "<th id=\"cumhdr2\" class=\"num sort\" data-sort=\"cum\">Cum%%</th>"
                 "<th id=\"namehdr\" class=\"sort\" data-sort=\"name\">Name</th>"
                 "<th>Inlined?</th></tr></thead>\n<tbody id=\"rows\">\n",
              t.total);
    sb_putn(b, t.rows.s ? t.rows.s : "", t.rows.len);
    sb_puts(b, "</tbody></table>\n");
    if (t.n == 0)
        sb_puts(b, "<p class=\"empty\">No samples to show.</p>\n");
    web_page_end(b, q, NULL);
    if (t.rows.oom || t.legend.oom)
        r->body.oom = true;
    top_free(&t);
    webviews_run_free(&run);
}

/* --- graph ---------------------------------------------------------------------------- */

typedef struct {
    sbuf_t legend;
    char *svg;
    size_t svg_len;
} graph_ctx_t;

static int gen_graph(report_t *r, void *arg, char *err, size_t errlen)
{
    graph_ctx_t *c = arg;
    report_profile_labels(r, &c->legend);
    char *dot = NULL;
    size_t dlen = 0;
    int rc = dot_generate(r, &dot, &dlen, err, errlen);
    if (rc < 0)
        return rc;
    FILE *f = open_memstream(&c->svg, &c->svg_len);
    if (!f) {
        free(dot);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    rc = dot_render(dot, dlen, "svg", false, f, err, errlen);
    free(dot);
    if (fclose(f) != 0 && rc == 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    if (rc == -ENOENT)
        snprintf(err, errlen, "Could not execute dot; may need to install graphviz.");
    return rc;
}

static void view_graph(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    graph_ctx_t c = {{0}, NULL, 0};
    run_t run;
    webviews_run(q->p, &cfg, "svg", NULL, gen_graph, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        webviews_failed(q, r, &run, sb_cstr(&c.legend));
    } else {
        web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
        sbuf_t *b = &r->body;
        web_page_begin(b, q, &f);
        sb_puts(b, "<div id=\"graph\">");
        /* Graphviz's SVG from its <svg> element on (no XML prolog). */
        const char *svg = c.svg ? c.svg : "";
        const char *s = strstr(svg, "<svg");
        if (s)
            sb_putn(b, s, c.svg_len - (size_t)(s - svg));
        sb_puts(b, "</div>\n");
        web_page_end(b, q, NULL);
    }
    free(c.svg);
    sb_free(&c.legend);
    webviews_run_free(&run);
}

/* --- flame graph ------------------------------------------------------------------------ */

/* A view whose report writes into a buffer (flame_json, weblist_body):
 * the profile's labels for the legend, then the body. */
typedef struct {
    int (*make)(report_t *r, sbuf_t *out, char *err, size_t errlen);
    sbuf_t legend, body;
} body_ctx_t;

static int gen_body(report_t *r, void *arg, char *err, size_t errlen)
{
    body_ctx_t *c = arg;
    report_profile_labels(r, &c->legend);
    return c->make(r, &c->body, err, errlen);
}

static void view_flame(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    /* A tree of every sample, as pprof's flame graph: no trimming. */
    cfg.call_tree = true;
    cfg.trim = false;
    body_ctx_t c = {flame_json, {0}, {0}};
    run_t run;
    webviews_run(q->p, &cfg, "top", NULL, gen_body, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        webviews_failed(q, r, &run, sb_cstr(&c.legend));
    } else {
        web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
        sbuf_t *b = &r->body;
        web_page_begin(b, q, &f);
        size_t n;
        const char *style = flame_style(&n);
        sb_puts(b, "<style>");
        sb_putn(b, style, n);
        sb_puts(b, "</style>\n<div id=\"flame\"></div>\n<script>");
        const char *script = flame_script(&n);
        sb_putn(b, script, n);
        sb_puts(b, "</script>\n");
        web_page_end(b, q, sb_cstr(&c.body));
        if (c.body.oom)
            r->body.oom = true;
    }
    sb_free(&c.legend);
    sb_free(&c.body);
    webviews_run_free(&run);
}

/* --- text views: peek, source, disassembly -------------------------------------------- */

typedef struct {
    sbuf_t legend;
} text_ctx_t;

static int gen_text(report_t *r, void *arg, char *err, size_t errlen)
{
    text_ctx_t *c = arg;
    report_profile_labels(r, &c->legend);
    return report_generate(r, err, errlen);
}

/* -list output with its parts marked: routine headers, lines with samples. */
static void source_html(sbuf_t *b, const char *text, size_t len)
{
    const char *end = text + len;
    for (const char *l = text; l < end;) {
        const char *e = memchr(l, '\n', (size_t)(end - l));
        size_t n = e ? (size_t)(e - l) : (size_t)(end - l);
        const char *cls = NULL;
        if (n >= 8 && strncmp(l, "ROUTINE ", 8) == 0) {
            cls = "routine";
        } else {
            /* "%10s %10s %6d:" — flat and cum, "." when none */
            char a[32], c[32];
            int ln, used = 0;
            char tmp[128];
            snprintf(tmp, sizeof(tmp), "%.*s", (int)(n < 127 ? n : 127), l);
            if (sscanf(tmp, "%31s %31s %d:%n", a, c, &ln, &used) == 3 && used > 0 &&
                (strcmp(a, ".") != 0 || strcmp(c, ".") != 0))
                cls = "hot";
        }
        if (cls)
            sb_printf(b, "<span class=\"%s\">", cls);
        web_html_n(b, l, n);
        if (cls)
            sb_puts(b, "</span>");
        sb_putc(b, '\n');
        l += n + 1;
    }
}

/* Source with no function asked for: the heaviest ones, to pick from. */
static void source_picker(const web_req_t *q, web_resp_t *r)
{
    top_t t;
    run_t run;
    if (!top_run(q, r, 50, &t, &run))
        return;
    web_frame_t f = {sb_cstr(&t.legend), run.msgs, false};
    sbuf_t *b = &r->body;
    web_page_begin(b, q, &f);
    sb_puts(b, "<p class=\"hint\">Pick a function (or select nodes in another view, or "
               "type a regexp in the search box, then View \xe2\x86\x92 Source). "
               "The heaviest functions:</p>\n<ul id=\"picker\">\n");
    for (size_t i = 0; i < t.n; i++) {
        const char *fn = t.funcs[i];
        bool dup = !fn || !*fn;
        for (size_t j = 0; j < i && !dup; j++)
            dup = t.funcs[j] && strcmp(t.funcs[j], fn) == 0;
        if (dup)
            continue;
        sbuf_t rx = {0};
        web_quotemeta(&rx, fn, true);
        sb_puts(b, "<li><a href=\"./source");
        web_query(b, q, "f", sb_cstr(&rx));
        sb_puts(b, "\">");
        web_html(b, fn);
        sb_puts(b, "</a></li>\n");
        sb_free(&rx);
    }
    sb_puts(b, "</ul>\n");
    web_page_end(b, q, NULL);
    top_free(&t);
    webviews_run_free(&run);
}

static void view_text(const web_req_t *q, web_resp_t *r, const char *cmd)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    if (strcmp(cmd, "peek") == 0)
        config_set_str(&cfg.granularity, "lines"); /* as pprof's peek view */
    text_ctx_t c = {{0}};
    run_t run;
    webviews_run(q->p, &cfg, cmd, web_arg(q, "f"), gen_text, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        webviews_failed(q, r, &run, sb_cstr(&c.legend));
    } else {
        web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
        sbuf_t *b = &r->body;
        web_page_begin(b, q, &f);
        sb_printf(b, "<pre id=\"text\" class=\"%s\">", cmd);
        if (strcmp(cmd, "list") == 0)
            source_html(b, run.out ? run.out : "", run.out_len);
        else
            web_html_n(b, run.out ? run.out : "", run.out_len);
        sb_puts(b, "</pre>\n");
        web_page_end(b, q, NULL);
    }
    sb_free(&c.legend);
    webviews_run_free(&run);
}

/* --- source: the weblist page ---------------------------------------------------------- */

/* pprof's source view: each function's lines with their instructions under
 * them (weblist.h). Without object code to show (no binary or objdump, a
 * Go profile), the annotated source alone, as -list prints it. */
static void view_source(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    body_ctx_t c = {weblist_body, {0}, {0}};
    run_t run;
    webviews_run(q->p, &cfg, "weblist", web_arg(q, "f"), gen_body, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        view_text(q, r, "list");
    } else {
        web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
        sbuf_t *b = &r->body;
        web_page_begin(b, q, &f);
        sb_printf(b, "<style>%s</style>\n<div id=\"weblist\">\n", weblist_css());
        sb_putn(b, c.body.s ? c.body.s : "", c.body.len);
        sb_printf(b, "</div>\n<script>%s</script>\n", weblist_js());
        web_page_end(b, q, NULL);
        if (c.body.oom)
            r->body.oom = true;
    }
    sb_free(&c.legend);
    sb_free(&c.body);
    webviews_run_free(&run);
}

/* --- memory over time ------------------------------------------------------------------ */

/* A duration for axis labels: "850ms", "12.5s", "3m20s", "2h5m". */
static const char *short_duration(char *buf, size_t n, int64_t ns)
{
    double s = (double)ns / 1e9;
    if (s < 1)
        snprintf(buf, n, "%.0fms", s * 1000);
    else if (s < 60)
        snprintf(buf, n, "%.*fs", s < 10 ? 2 : 1, s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    return buf;
}

#define CHART_W 960
#define CHART_H 280
#define CHART_L 80 /* left margin: the axis labels */
#define CHART_B 28 /* bottom margin */
#define CHART_SERIES 6
#define MEM_TOP_SITES 25
#define MEM_TOP_STACKS 50

static const char *const colors[CHART_SERIES] = {"#d62728", "#1f77b4", "#2ca02c",
                                                 "#9467bd", "#ff7f0e", "#8c564b"};

typedef struct {
    const memtable_t *t;
    int64_t t0, t1; /* time range (ns) */
    int64_t vmin, vmax;
} chart_t;

static double cx(const chart_t *c, size_t i)
{
    double span = (double)(c->t1 - c->t0);
    double f = span > 0 ? (double)(c->t->snaps[i].time_nanos - c->t0) / span
                        : (c->t->n_snaps > 1 ? (double)i / (double)(c->t->n_snaps - 1) : 0.5);
    return CHART_L + f * (CHART_W - CHART_L - 20);
}

static double cy(const chart_t *c, int64_t v)
{
    double span = (double)(c->vmax - c->vmin);
    double f = span > 0 ? (double)(v - c->vmin) / span : 0;
    return 10 + (1 - f) * (CHART_H - CHART_B - 10);
}

static void chart_line(sbuf_t *b, const chart_t *c, const int64_t *v, const char *color,
                       double width, const char *label)
{
    sb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" points=\"", color,
              width);
    for (size_t i = 0; i < c->t->n_snaps; i++)
        sb_printf(b, "%s%.1f,%.1f", i ? " " : "", cx(c, i), cy(c, v[i]));
    sb_puts(b, "\"/>\n");
    char buf[64];
    for (size_t i = 0; i < c->t->n_snaps; i++) {
        sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", cx(c, i),
                  cy(c, v[i]), color);
        web_html(b, label);
        sb_puts(b, "\n");
        web_html(b, c->t->snaps[i].name);
        sb_puts(b, ": ");
        web_html(b, measure_label(buf, sizeof(buf), v[i], c->t->unit));
        sb_puts(b, "</title></circle>\n");
    }
}

/* The chart: the total and the series given (sites or stacks). */
static void chart(sbuf_t *b, const memtable_t *t, const int64_t *const *series,
                  const char *const *labels, size_t n, bool with_total)
{
    chart_t c = {t, t->snaps[0].time_nanos, t->snaps[t->n_snaps - 1].time_nanos, 0, 0};
    for (size_t i = 0; i < t->n_snaps; i++) {
        if (with_total) {
            c.vmax = t->total[i] > c.vmax ? t->total[i] : c.vmax;
            c.vmin = t->total[i] < c.vmin ? t->total[i] : c.vmin;
        }
        for (size_t k = 0; k < n; k++) {
            c.vmax = series[k][i] > c.vmax ? series[k][i] : c.vmax;
            c.vmin = series[k][i] < c.vmin ? series[k][i] : c.vmin;
        }
    }
    if (c.vmax == c.vmin)
        c.vmax = c.vmin + 1;
    /* data-t0/t1 (unix ns) at x0/x1: what a drag over it selects (webui.js) */
    sb_printf(b, "<svg id=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "role=\"img\" aria-label=\"memory over time\" data-t0=\"%" PRId64 "\" "
                 "data-t1=\"%" PRId64 "\" data-x0=\"%d\" data-x1=\"%d\">\n",
              CHART_W, CHART_H, CHART_W, CHART_H, c.t0, c.t1, CHART_L, CHART_W - 20);
    /* horizontal grid with value labels */
    char buf[64];
    for (int k = 0; k <= 4; k++) {
        int64_t v = c.vmin + (int64_t)((double)(c.vmax - c.vmin) * k / 4);
        double y = cy(&c, v);
        sb_printf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
                     "<text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                  CHART_L, CHART_W - 20, y, y, CHART_L - 6, y + 4);
        web_html(b, measure_label(buf, sizeof(buf), v, t->unit));
        sb_puts(b, "</text>\n");
    }
    /* time labels: at the first and last snapshot, and between */
    int64_t span = c.t1 - c.t0;
    bool times = span > 1000000; /* real times, not arrival numbers */
    for (int k = 0; k <= 4; k++) {
        double x = CHART_L + (double)k / 4 * (CHART_W - CHART_L - 20);
        sb_printf(b, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">", x,
                  CHART_H - 8, k == 0 ? "start" : k == 4 ? "end" : "middle");
        if (times)
            sb_printf(b, "+%s", short_duration(buf, sizeof(buf), (int64_t)((double)span * k / 4)));
        else if (k == 0 || k == 4)
            sb_printf(b, "#%zu", k == 0 ? (size_t)1 : t->n_snaps);
        sb_puts(b, "</text>\n");
    }
    if (with_total) {
        /* The peak: the first snapshot with the highest total (for the
         * peak between snapshots, CPROF_PEAK_PROFILE). */
        size_t pk = 0;
        for (size_t i = 1; i < t->n_snaps; i++)
            pk = t->total[i] > t->total[pk] ? i : pk;
        double x = cx(&c, pk);
        sb_printf(b, "<g id=\"peak\"><title>peak: ");
        web_html(b, t->snaps[pk].name);
        sb_puts(b, ": ");
        web_html(b, measure_label(buf, sizeof(buf), t->total[pk], t->unit));
        sb_printf(b, "</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"10\" y2=\"%d\" stroke=\"#555\" "
                     "stroke-dasharray=\"4 3\"/><text class=\"axis\" x=\"%.1f\" y=\"%.1f\" "
                     "text-anchor=\"middle\">peak</text></g>\n",
                  x, x, CHART_H - CHART_B, x, cy(&c, t->total[pk]) - 8);
        chart_line(b, &c, t->total, "#555", 2.5, "total");
    }
    for (size_t k = 0; k < n; k++)
        chart_line(b, &c, series[k], colors[k % CHART_SERIES], 1.8, labels[k]);
    sb_puts(b, "</svg>\n<div id=\"chart-legend\">");
    if (with_total)
        sb_puts(b, "<span><i style=\"background:#555\"></i>total</span>");
    for (size_t k = 0; k < n; k++) {
        /* a stack's label is its frames: show the leaf */
        const char *l = strrchr(labels[k], '\n');
        sb_printf(b, "<span><i style=\"background:%s\"></i>", colors[k % CHART_SERIES]);
        web_html(b, l ? l + 1 : labels[k]);
        if (l)
            sb_printf(b, " (stack %zu)", k);
        sb_puts(b, "</span>");
    }
    sb_puts(b, "</div>\n");
}

/* A small chart of one row. */
static void sparkline(sbuf_t *b, const memtable_t *t, const int64_t *v, const char *color)
{
    int64_t lo = v[0], hi = v[0];
    for (size_t i = 1; i < t->n_snaps; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    if (lo > 0)
        lo = 0;
    double span = hi > lo ? (double)(hi - lo) : 1;
    sb_printf(b, "<svg class=\"spark\" width=\"120\" height=\"22\" viewBox=\"0 0 120 22\">"
                 "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
              color);
    for (size_t i = 0; i < t->n_snaps; i++) {
        double x = t->n_snaps > 1 ? 2 + 116.0 * (double)i / (double)(t->n_snaps - 1) : 60;
        double y = 20 - 18 * (double)(v[i] - lo) / span;
        sb_printf(b, "%s%.1f,%.1f", i ? " " : "", x, y);
    }
    sb_puts(b, "\"/></svg>");
}

static void growth_cells(sbuf_t *b, const memtable_t *t, const int64_t *v, int64_t growth)
{
    char buf[64];
    sb_puts(b, "<td class=\"num\">");
    web_html(b, measure_label(buf, sizeof(buf), v[0], t->unit));
    sb_puts(b, "</td><td class=\"num\">");
    web_html(b, measure_label(buf, sizeof(buf), v[t->n_snaps - 1], t->unit));
    sb_printf(b, "</td><td class=\"num%s\">%s", growth > 0 ? " pos" : growth < 0 ? " neg" : "",
              growth > 0 ? "+" : "");
    web_html(b, measure_label(buf, sizeof(buf), growth, t->unit));
    sb_puts(b, "</td>");
}

/* The flame graph of one class: the request with tagfocus KEY=^NAME( |$)
 * (an unanchored value would also match heap-free for heap). */
static void class_link(sbuf_t *b, const web_req_t *q, const char *key, const char *name)
{
    sbuf_t tf = {0};
    sb_printf(&tf, "%s=", key);
    web_quotemeta(&tf, name, true);
    sb_puts(b, "./flamegraph");
    web_query(b, q, "tf", sb_cstr(&tf));
    sb_free(&tf);
}

/* The rows of a table grouped by label by: every value, the first n in
 * the chart's colours. */
static void memory_classes(sbuf_t *b, const web_req_t *q, const memtable_t *t, const char *by,
                           size_t n)
{
    sb_puts(b, "<h2>By ");
    web_html(b, by);
    sb_puts(b, "</h2>\n<table id=\"classes\">\n<thead><tr><th>");
    web_html(b, by);
    sb_puts(b, "</th><th class=\"num\">First</th><th class=\"num\">Last</th>"
               "<th class=\"num\">Growth</th><th>Trend</th><th></th></tr></thead>\n<tbody>\n");
    size_t k = 0;
    for (size_t i = 0; i < t->n_sites; i++) {
        const memsite_t *s = &t->sites[i];
        bool charted = *s->name && k < n;
        sb_puts(b, "<tr data-class=\"");
        web_html(b, s->name);
        sb_printf(b, "\" data-first=\"%" PRId64 "\" data-last=\"%" PRId64 "\"><td class=\"name\">",
                  s->v[0], s->v[t->n_snaps - 1]);
        web_html(b, *s->name ? s->name : "(no label)");
        sb_puts(b, "</td>");
        growth_cells(b, t, s->v, s->growth);
        sb_puts(b, "<td>");
        sparkline(b, t, s->v, charted ? colors[k % CHART_SERIES] : "#777");
        k += charted;
        sb_puts(b, "</td><td class=\"links\">");
        if (*s->name) {
            sb_puts(b, "<a class=\"flame\" href=\"");
            class_link(b, q, by, s->name);
            sb_puts(b, "\">flame</a>");
        }
        sb_puts(b, "</td></tr>\n");
    }
    sb_puts(b, "</tbody></table>\n");
}

/* One line under the chart: whether dragging over it shows a window's
 * flame graph (a polled heap URL: webwindow.h), or why not. */
static void window_hint(sbuf_t *b, const web_req_t *q, const memtable_t *t)
{
    bool times = t->snaps[t->n_snaps - 1].time_nanos - t->snaps[0].time_nanos > 1000000;
    if (q->window_possible && times) {
        sb_puts(b, "<p id=\"window-hint\" data-window=\"on\">Drag over the chart: the flame "
                   "graph of that time window, from the process's flight recorder "
                   "(<code>CPROF_RECORD</code>).</p>\n");
        return;
    }
    sb_puts(b, "<p id=\"window-hint\" data-window=\"off\">No time windows here: they come from "
               "a live process's flight recorder (<code>CPROF_RECORD</code>), polled as "
               "<code>cprof -http=:8080 -poll 1 http://HOST:PORT/debug/pprof/heap</code>.</p>\n");
}

/* The call sites that grew most; with by (a label key), every value of
 * the label (the memory profile's classes), each charted, shrinking or
 * not, and linked to its flame graph. */
static void memory_sites(sbuf_t *b, const web_req_t *q, const memtable_t *t, const char *by)
{
    const int64_t *series[CHART_SERIES];
    const char *labels[CHART_SERIES];
    size_t n = 0;
    for (size_t i = 0; i < t->n_sites && n < CHART_SERIES; i++)
        if (t->sites[i].growth > 0 || (by && *t->sites[i].name)) {
            series[n] = t->sites[i].v;
            labels[n++] = t->sites[i].name;
        }
    char buf[64], buf2[64];
    const memsnap_t *first = &t->snaps[0], *last = &t->snaps[t->n_snaps - 1];
    sb_printf(b, "<h2>");
    web_html(b, t->sample_type);
    sb_printf(b, " over %zu profiles</h2>\n<p class=\"summary\">Total ", t->n_snaps);
    web_html(b, measure_label(buf, sizeof(buf), t->total[0], t->unit));
    sb_puts(b, " \xe2\x86\x92 ");
    web_html(b, measure_label(buf2, sizeof(buf2), t->total[t->n_snaps - 1], t->unit));
    if (last->time_nanos - first->time_nanos > 1000000)
        sb_printf(b, " in %s", short_duration(buf, sizeof(buf),
                                              last->time_nanos - first->time_nanos));
    sb_puts(b, " (from <code>");
    web_html(b, first->name);
    sb_puts(b, "</code> to <code>");
    web_html(b, last->name);
    sb_puts(b, "</code>).</p>\n");
    chart(b, t, series, labels, n, true);
    window_hint(b, q, t);
    if (by) {
        memory_classes(b, q, t, by, n);
        return;
    }
    sb_puts(b, "<h2>Call sites that grew most</h2>\n<table id=\"growers\">\n<thead><tr>"
               "<th>#</th><th>Call site</th><th class=\"num\">First</th>"
               "<th class=\"num\">Last</th><th class=\"num\">Growth</th><th>Trend</th>"
               "<th></th></tr></thead>\n<tbody>\n");
    size_t shown = 0, k = 0;
    for (size_t i = 0; i < t->n_sites && shown < MEM_TOP_SITES; i++) {
        const memsite_t *s = &t->sites[i];
        if (s->growth <= 0)
            break;
        shown++;
        sb_puts(b, "<tr data-name=\"");
        web_html(b, s->func);
        sb_printf(b, "\" data-first=\"%" PRId64 "\" data-last=\"%" PRId64 "\"><td class=\"num\">%zu"
                     "</td><td class=\"name\"><a class=\"site\" href=\"./memory",
                  s->v[0], s->v[t->n_snaps - 1], shown);
        web_query(b, q, "site", s->name);
        sb_puts(b, "\" title=\"The stacks that allocated it\">");
        web_html(b, s->name);
        sb_puts(b, "</a></td>");
        growth_cells(b, t, s->v, s->growth);
        sb_puts(b, "<td>");
        sparkline(b, t, s->v, k < n ? colors[k % CHART_SERIES] : "#777");
        k++;
        sbuf_t rx = {0};
        web_quotemeta(&rx, *s->func ? s->func : s->name, true);
        sb_puts(b, "</td><td class=\"links\"><a href=\"./memory");
        web_query(b, q, "site", s->name);
        sb_puts(b, "\">stacks</a> <a href=\"./flamegraph");
        web_query(b, q, "f", sb_cstr(&rx));
        sb_puts(b, "\">flame</a> <a href=\"./peek");
        web_query(b, q, "f", sb_cstr(&rx));
        sb_puts(b, "\">peek</a></td></tr>\n");
        sb_free(&rx);
    }
    sb_puts(b, "</tbody></table>\n");
    if (shown == 0)
        sb_puts(b, "<p class=\"empty\">No call site grew between the first and the last "
                   "profile.</p>\n");
}

static void memory_site(sbuf_t *b, const web_req_t *q, const memtable_t *t, const char *site)
{
    const memsite_t *s = NULL;
    for (size_t i = 0; i < t->n_sites && !s; i++)
        if (strcmp(t->sites[i].name, site) == 0)
            s = &t->sites[i];
    sb_puts(b, "<p class=\"back\"><a href=\"./memory");
    web_query(b, q, "site", NULL);
    sb_puts(b, "\">\xe2\x86\x90 all call sites</a></p>\n<h2>");
    web_html(b, site);
    sb_puts(b, "</h2>\n");
    if (!s) {
        sb_puts(b, "<p class=\"empty\">No sample ends at this call site (with the filters of "
                   "this page).</p>\n");
        return;
    }
    const int64_t *series[CHART_SERIES];
    const char *labels[CHART_SERIES];
    size_t n = 0;
    series[n] = s->v;
    labels[n++] = s->name;
    for (size_t i = 0; i < t->n_stacks && n < CHART_SERIES && t->n_stacks > 1; i++) {
        series[n] = t->stacks[i].v;
        labels[n++] = t->stacks[i].frames;
    }
    chart(b, t, series, labels, n, false);
    sb_puts(b, "<h2>Its stacks, by growth</h2>\n<table id=\"stacks\">\n<thead><tr><th>Stack "
               "(root first)</th><th class=\"num\">First</th><th class=\"num\">Last</th>"
               "<th class=\"num\">Growth</th><th>Trend</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < t->n_stacks && i < MEM_TOP_STACKS; i++) {
        const memstack_t *st = &t->stacks[i];
        sb_printf(b, "<tr data-first=\"%" PRId64 "\" data-last=\"%" PRId64 "\"><td class=\"stack\">",
                  st->v[0], st->v[t->n_snaps - 1]);
        for (const char *l = st->frames; *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);
            sb_puts(b, "<div>");
            web_html_n(b, l, len);
            sb_puts(b, "</div>");
            l += len + (e ? 1 : 0);
        }
        sb_puts(b, "</td>");
        growth_cells(b, t, st->v, st->growth);
        sb_puts(b, "<td>");
        sparkline(b, t, st->v, i + 1 < n ? colors[(i + 1) % CHART_SERIES] : "#777");
        sb_puts(b, "</td></tr>\n");
    }
    sb_puts(b, "</tbody></table>\n");
}

static void view_memory(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    const memseries_t *s = q->series;
    if (!s || s->n < 2) {
        config_free(&cfg);
        web_page_message(r, q, 200, NULL,
                         q->series_possible
                             ? "Memory over time needs at least two profiles: waiting for the "
                               "next poll (or the sources could not be fetched one by one)."
                             : "Memory over time needs several heap profiles of one process: "
                               "cprof -http=:8080 heap.1.pb.gz heap.2.pb.gz ... (numbered "
                               "snapshots: CPROF_HEAP_PROFILE_EVERY), or a URL polled with "
                               "-poll SECONDS.");
        return;
    }
    /* inuse_space unless the URL picks another sample type */
    if (!*web_arg(q, "si")) {
        const profile_t *p = s->snaps[s->n - 1].p;
        for (size_t i = 0; i < p->n_sample_types; i++)
            if (strcmp(p->strings[p->sample_types[i].type], "inuse_space") == 0)
                config_set_str(&cfg.sample_index, "inuse_space");
    }
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&msgs, &mlen);
    memtable_t t;
    const char *by = *web_arg(q, "by") ? web_arg(q, "by") : NULL;
    int rc = mf ? memtime_compute(s, &cfg, *web_arg(q, "site") ? web_arg(q, "site") : NULL, by,
                                  mf, &t)
                : -1;
    if (mf)
        fclose(mf);
    config_free(&cfg);
    if (rc < 0) {
        web_page_message(r, q, 400, NULL, msgs && *msgs ? msgs : "out of memory");
    } else {
        sbuf_t legend = {0};
        const profile_t *lp = t.snaps[t.n_snaps - 1].p;
        if (lp->n_mappings && lp->mappings[0].filename > 0) {
            char fb[4096];
            sb_printf(&legend, "File: %s\n",
                      path_base(lp->strings[lp->mappings[0].filename], fb, sizeof(fb)));
        }
        sb_printf(&legend, "Type: %s\n", t.sample_type);
        for (size_t i = 0; i < t.n_snaps; i++) {
            char tb[128];
            sb_printf(&legend, "Profile %zu: %s (%s)\n", i + 1, t.snaps[i].name,
                      t.snaps[i].p->time_nanos
                          ? report_time_string(t.snaps[i].p->time_nanos, tb, sizeof(tb))
                          : "no time");
        }
        web_frame_t f = {sb_cstr(&legend), msgs, false};
        sbuf_t *b = &r->body;
        web_page_begin(b, q, &f);
        sb_puts(b, "<div id=\"memory\">\n");
        if (*web_arg(q, "site"))
            memory_site(b, q, &t, web_arg(q, "site"));
        else
            memory_sites(b, q, &t, by);
        sb_puts(b, "</div>\n");
        web_page_end(b, q, NULL);
        sb_free(&legend);
        memtable_free(&t);
    }
    free(msgs);
}

/* --- breakdown: the profile by class ------------------------------------------------------ */

/* Each value of one label key (the memory profile's class) and the sum of
 * the samples carrying it, after the request's filters. */
typedef struct {
    const char *key;
    sbuf_t legend;
    char **names; /* "" for samples without the label */
    int64_t *vals;
    size_t n, cap;
    int64_t total;
    char unit[64], stype[128];
} brk_t;

static void brk_free(brk_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
    free(c->vals);
    sb_free(&c->legend);
}

static int brk_add(brk_t *c, const char *name, int64_t v)
{
    size_t i = 0;
    while (i < c->n && strcmp(c->names[i], name) != 0) /* a few classes: a scan */
        i++;
    if (i == c->n) {
        if (c->n == c->cap) {
            size_t nc = c->cap ? c->cap * 2 : 16;
            char **nn = realloc(c->names, nc * sizeof(*nn));
            if (!nn)
                return -ENOMEM;
            c->names = nn;
            int64_t *nv = realloc(c->vals, nc * sizeof(*nv));
            if (!nv)
                return -ENOMEM;
            c->vals = nv;
            c->cap = nc;
        }
        if (!(c->names[i] = strdup(name)))
            return -ENOMEM;
        c->vals[i] = 0;
        c->n++;
    }
    c->vals[i] += v;
    return 0;
}

static int gen_breakdown(report_t *r, void *arg, char *err, size_t errlen)
{
    brk_t *c = arg;
    const profile_t *p = r->w->p;
    report_profile_labels(r, &c->legend);
    snprintf(c->stype, sizeof(c->stype), "%s", r->sample_type);
    snprintf(c->unit, sizeof(c->unit), "%s", p->strings[p->sample_types[r->value_index].unit]);
    for (size_t i = 0; i < r->w->n_samples; i++) {
        const wsample_t *ws = &r->w->samples[i];
        int64_t v = ws->values[r->value_index];
        if (v == 0)
            continue;
        const char *name = "";
        for (uint32_t j = 0; j < ws->n_labels; j++)
            if (ws->labels[j].str && strcmp(p->strings[ws->labels[j].key], c->key) == 0)
                name = p->strings[ws->labels[j].str];
        if (brk_add(c, name, v) < 0) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        c->total += v;
    }
    return 0;
}

#define BRK_COLORS 10
static const char *const brk_colors[BRK_COLORS] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e",
                                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                   "#bcbd22", "#17becf"};

static void view_breakdown(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    brk_t c = {.key = web_group_key(q)};
    run_t run;
    webviews_run(q->p, &cfg, "top", NULL, gen_breakdown, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        webviews_failed(q, r, &run, sb_cstr(&c.legend));
        brk_free(&c);
        webviews_run_free(&run);
        return;
    }
    /* largest first, the unlabelled samples last */
    for (size_t i = 1; i < c.n; i++)
        for (size_t j = i; j > 0; j--) {
            bool after = !*c.names[j - 1] || (*c.names[j] && c.vals[j] > c.vals[j - 1]);
            if (!after)
                break;
            char *tn = c.names[j];
            c.names[j] = c.names[j - 1];
            c.names[j - 1] = tn;
            int64_t tv = c.vals[j];
            c.vals[j] = c.vals[j - 1];
            c.vals[j - 1] = tv;
        }
    web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
    sbuf_t *b = &r->body;
    web_page_begin(b, q, &f);
    sb_puts(b, "<style>#breakdown-bar{display:flex;height:44px;margin:12px 0;border:1px solid #999}"
               "#breakdown-bar a{display:block;height:100%;min-width:2px}"
               "#breakdown-bar a:hover{opacity:.75}"
               "#breakdown td i{display:inline-block;width:12px;height:12px;margin-right:6px}"
               "</style>\n<div id=\"breakdown\">\n<h2>");
    web_html(b, c.stype);
    sb_puts(b, " by ");
    web_html(b, c.key);
    sb_puts(b, "</h2>\n");
    bool any = false;
    for (size_t i = 0; i < c.n; i++)
        any = any || *c.names[i];
    char buf[64];
    if (!any) {
        sb_puts(b, "<p class=\"empty\">No sample has the label <code>");
        web_html(b, c.key);
        sb_puts(b, "</code>. The breakdown shows the classes of a memory profile "
                   "(<code>/debug/pprof/memory</code>, <code>CPROF_MEMORY_PROFILE</code>), or "
                   "any label named by the URL parameter <code>by</code>.</p>\n");
    } else {
        /* the bar: each class's share of the positive values */
        int64_t pos = 0;
        for (size_t i = 0; i < c.n; i++)
            pos += c.vals[i] > 0 ? c.vals[i] : 0;
        sb_puts(b, "<div id=\"breakdown-bar\">");
        for (size_t i = 0; i < c.n; i++) {
            if (c.vals[i] <= 0 || !*c.names[i])
                continue;
            sb_puts(b, "<a class=\"seg\" data-class=\"");
            web_html(b, c.names[i]);
            sb_puts(b, "\" href=\"");
            class_link(b, q, c.key, c.names[i]);
            sb_printf(b, "\" style=\"flex:0 0 %.3f%%;background:%s\" title=\"",
                      (double)c.vals[i] * 100.0 / (double)pos, brk_colors[i % BRK_COLORS]);
            web_html(b, c.names[i]);
            sb_puts(b, ": ");
            web_html(b, measure_label(buf, sizeof(buf), c.vals[i], c.unit));
            sb_puts(b, "\"></a>");
        }
        sb_puts(b, "</div>\n<table id=\"classes\">\n<thead><tr><th>");
        web_html(b, c.key);
        sb_puts(b, "</th><th class=\"num\">Value</th><th class=\"num\">Share</th></tr></thead>"
                   "\n<tbody>\n");
        for (size_t i = 0; i < c.n; i++) {
            sb_puts(b, "<tr data-class=\"");
            web_html(b, c.names[i]);
            sb_printf(b, "\" data-value=\"%" PRId64 "\"><td class=\"name\">", c.vals[i]);
            if (*c.names[i]) {
                sb_printf(b, "<i style=\"background:%s\"></i><a class=\"class\" href=\"",
                          brk_colors[i % BRK_COLORS]);
                class_link(b, q, c.key, c.names[i]);
                sb_puts(b, "\" title=\"Its flame graph\">");
                web_html(b, c.names[i]);
                sb_puts(b, "</a>");
            } else {
                sb_puts(b, "<i></i>(no label)");
            }
            sb_puts(b, "</td><td class=\"num\">");
            web_html(b, measure_label(buf, sizeof(buf), c.vals[i], c.unit));
            sb_puts(b, "</td><td class=\"num\">");
            pct(b, c.vals[i], c.total);
            sb_puts(b, "</td></tr>\n");
        }
        sb_puts(b, "</tbody></table>\n<p class=\"summary\">Total ");
        web_html(b, measure_label(buf, sizeof(buf), c.total, c.unit));
        sb_puts(b, ". <a href=\"./memory");
        web_query(b, q, "by", c.key);
        sb_puts(b, "\">Over time</a> (several profiles, or -poll).</p>\n");
    }
    sb_puts(b, "</div>\n");
    web_page_end(b, q, NULL);
    brk_free(&c);
    webviews_run_free(&run);
}

/* --- download ---------------------------------------------------------------------------- */

static void view_download(const web_req_t *q, web_resp_t *r)
{
    pbuf_t raw = {0}, gz = {0};
    if (profile_encode(q->p, &raw) < 0 || profile_gzip(raw.data, raw.len, &gz) < 0) {
        pbuf_free(&raw);
        pbuf_free(&gz);
        web_page_message(r, q, 500, NULL, "out of memory");
        return;
    }
    sb_putn(&r->body, (const char *)gz.data, gz.len);
    r->status = 200;
    r->ctype = "application/vnd.google.protobuf+gzip";
    r->disposition = "attachment;filename=profile.pb.gz";
    pbuf_free(&raw);
    pbuf_free(&gz);
}

void webviews_render(const web_req_t *q, web_resp_t *r)
{
    r->status = 200;
    r->ctype = HTML;
    switch (q->view) {
    case VIEW_GRAPH: view_graph(q, r); break;
    case VIEW_TOP: view_top(q, r); break;
    case VIEW_FLAME: view_flame(q, r); break;
    case VIEW_PEEK: view_text(q, r, "peek"); break;
    case VIEW_SOURCE:
        if (*web_arg(q, "f"))
            view_source(q, r);
        else
            source_picker(q, r);
        break;
    case VIEW_DISASM: view_text(q, r, "disasm"); break;
    case VIEW_MEMORY: view_memory(q, r); break;
    case VIEW_BREAKDOWN: view_breakdown(q, r); break;
    case VIEW_LIFETIMES: weblife_view(q, r); break;
    case VIEW_DOWNLOAD: view_download(q, r); break;
    case VIEW_NONE: web_page_message(r, q, 404, NULL, "404 page not found"); break;
    }
}
