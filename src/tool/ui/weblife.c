/* weblife.c — the lifetime histogram view. */
#include "tool/ui/weblife.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tool/graph/measure.h"
#include "tool/ui/webviews.h"

#define OCTAVES 64
#define LIFE_SITES 50
#define HIST_W 960
#define HIST_H 240
#define HIST_L 80 /* left margin: the axis labels */
#define HIST_B 40 /* bottom margin */

typedef struct {
    char *name;
    int64_t v;
} life_site_t;

typedef struct {
    sbuf_t legend;
    char stype[128], unit[64];
    int64_t all[OCTAVES];  /* per octave: the sample value */
    int64_t live[OCTAVES]; /* of which freed=live */
    int64_t total, unlabelled;
    life_site_t *sites; /* allocating (leaf) functions */
    size_t n_sites, cap_sites;
} life_t;

static void life_free(life_t *c)
{
    for (size_t i = 0; i < c->n_sites; i++)
        free(c->sites[i].name);
    free(c->sites);
    sb_free(&c->legend);
}

static int site_add(life_t *c, const char *name, int64_t v)
{
    for (size_t i = 0; i < c->n_sites; i++)
        if (strcmp(c->sites[i].name, name) == 0) {
            c->sites[i].v += v;
            return 0;
        }
    if (err_grow((void **)&c->sites, &c->cap_sites, c->n_sites + 1, sizeof(*c->sites)) < 0)
        return -ENOMEM;
    if (!(c->sites[c->n_sites].name = strdup(name)))
        return -ENOMEM;
    c->sites[c->n_sites++].v = v;
    return 0;
}

/* The octave of a bin's lower edge: its bins never straddle a power of
 * two (lifetimes.c), so the edge's octave is the bin's. */
static int octave(int64_t ns)
{
    return ns < 1 ? 0 : 63 - __builtin_clzll((unsigned long long)ns);
}

static int gen_life(report_t *r, void *arg, char *err, size_t errlen)
{
    life_t *c = arg;
    const profile_t *p = r->w->p;
    report_profile_labels(r, &c->legend);
    snprintf(c->stype, sizeof(c->stype), "%s", r->sample_type);
    snprintf(c->unit, sizeof(c->unit), "%s", p->strings[p->sample_types[r->value_index].unit]);
    for (size_t i = 0; i < r->w->n_samples; i++) {
        const wsample_t *s = &r->w->samples[i];
        int64_t v = s->values[r->value_index];
        if (v == 0)
            continue;
        int64_t ns = -1;
        bool live = false;
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const char *k = p->strings[s->labels[j].key];
            if (!s->labels[j].str && strcmp(k, WEB_LIFETIME_LABEL) == 0)
                ns = s->labels[j].num;
            else if (s->labels[j].str && strcmp(k, "freed") == 0)
                live = strcmp(p->strings[s->labels[j].str], "live") == 0;
        }
        c->total += v;
        if (ns < 0) {
            c->unlabelled += v;
            continue;
        }
        int o = octave(ns);
        c->all[o] += v;
        if (live)
            c->live[o] += v;
        /* the allocating function: the leaf's innermost line */
        const char *fn = "?";
        if (s->n_locs) {
            const wloc_t *l = &r->w->locs[s->locs[0]];
            if (l->n_lines && l->lines[0].fn)
                fn = p->strings[r->w->funcs[l->lines[0].fn - 1].name];
        }
        if (site_add(c, fn, v) < 0) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    return 0;
}

static int site_cmp(const void *a, const void *b)
{
    const life_site_t *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* An octave's edge for the axis: "512ns", "1.0µs", "16ms", "2.1s". */
static const char *edge(char *buf, size_t n, int o)
{
    double ns = (double)(1ull << o);
    if (ns < 1e3)
        snprintf(buf, n, "%.0fns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.3gµs", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, n, "%.3gms", ns / 1e6);
    else
        snprintf(buf, n, "%.3gs", ns / 1e9);
    return buf;
}

static void histogram(sbuf_t *b, const life_t *c)
{
    int lo = OCTAVES, hi = -1;
    int64_t vmax = 0;
    for (int o = 0; o < OCTAVES; o++)
        if (c->all[o]) {
            lo = o < lo ? o : lo;
            hi = o;
            vmax = c->all[o] > vmax ? c->all[o] : vmax;
        }
    if (hi < 0) {
        sb_puts(b, "<p class=\"empty\">No sample with a lifetime here: a lifetime profile "
                   "(<code>CPROF_LIFETIME_PROFILE</code>, <code>/debug/pprof/lifetimes</code>) "
                   "with the filters of this page.</p>\n");
        return;
    }
    /* one octave of margin each side, so one bar is not the whole width */
    lo = lo > 0 ? lo - 1 : lo;
    hi = hi < OCTAVES - 1 ? hi + 1 : hi;
    int nb = hi - lo + 1;
    double bw = (double)(HIST_W - HIST_L - 20) / nb;
    double ph = HIST_H - HIST_B - 10;
    char buf[64], buf2[64];
    sb_printf(b, "<svg id=\"lifehist\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "role=\"img\" aria-label=\"lifetime histogram\">\n",
              HIST_W, HIST_H, HIST_W, HIST_H);
    for (int k = 0; k <= 4; k++) {
        int64_t v = (int64_t)((double)vmax * k / 4);
        double y = 10 + ph - ph * k / 4;
        sb_printf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
                     "<text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                  HIST_L, HIST_W - 20, y, y, HIST_L - 6, y + 4);
        web_html(b, measure_label(buf, sizeof(buf), v, c->unit));
        sb_puts(b, "</text>\n");
    }
    for (int o = lo; o <= hi; o++) {
        double x = HIST_L + (o - lo) * bw;
        double h = vmax ? ph * (double)c->all[o] / (double)vmax : 0;
        double hl = vmax ? ph * (double)c->live[o] / (double)vmax : 0;
        sb_printf(b, "<g class=\"bin\" data-lo=\"%" PRIu64 "\" data-hi=\"%" PRIu64 "\" "
                     "data-value=\"%" PRId64 "\" data-live=\"%" PRId64 "\"><title>",
                  (uint64_t)1 << o, (uint64_t)1 << (o + 1), c->all[o], c->live[o]);
        sb_printf(b, "%s to %s: ", edge(buf, sizeof(buf), o), edge(buf2, sizeof(buf2), o + 1));
        web_html(b, measure_label(buf, sizeof(buf), c->all[o], c->unit));
        if (c->live[o]) {
            sb_puts(b, " (still live: ");
            web_html(b, measure_label(buf, sizeof(buf), c->live[o], c->unit));
            sb_puts(b, ")");
        }
        sb_printf(b, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                     "fill=\"#1f77b4\"/>",
                  x + 1, 10 + ph - h, bw - 2, h);
        if (hl > 0)
            sb_printf(b, "<rect class=\"live\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"#ff7f0e\"/>",
                      x + 1, 10 + ph - hl, bw - 2, hl);
        sb_puts(b, "</g>\n");
        if ((o - lo) % (nb > 24 ? 2 : 1) == 0)
            sb_printf(b, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s"
                         "</text>\n",
                      x, HIST_H - HIST_B + 16, edge(buf, sizeof(buf), o));
    }
    sb_puts(b, "</svg>\n<div id=\"chart-legend\"><span><i style=\"background:#1f77b4\"></i>"
               "freed</span><span><i style=\"background:#ff7f0e\"></i>still live (its lifetime "
               "so far)</span></div>\n");
}

static void sites_table(sbuf_t *b, const web_req_t *q, life_t *c)
{
    if (!c->n_sites)
        return;
    qsort(c->sites, c->n_sites, sizeof(*c->sites), site_cmp);
    char buf[64];
    sb_puts(b, "<h2>Allocating functions</h2>\n<table id=\"lifesites\">\n<thead><tr>"
               "<th>Function</th><th class=\"num\">");
    web_html(b, c->stype);
    sb_puts(b, "</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < c->n_sites && i < LIFE_SITES; i++) {
        sbuf_t rx = {0};
        web_quotemeta(&rx, c->sites[i].name, true);
        sb_puts(b, "<tr data-name=\"");
        web_html(b, c->sites[i].name);
        sb_puts(b, "\"><td class=\"name\"><a class=\"lifesite\" href=\"./lifetimes");
        web_query(b, q, "f", sb_cstr(&rx));
        sb_puts(b, "\" title=\"The histogram of its objects\">");
        web_html(b, c->sites[i].name);
        sb_puts(b, "</a></td><td class=\"num\">");
        web_html(b, measure_label(buf, sizeof(buf), c->sites[i].v, c->unit));
        sb_puts(b, "</td></tr>\n");
        sb_free(&rx);
    }
    sb_puts(b, "</tbody></table>\n");
}

void weblife_view(const web_req_t *q, web_resp_t *r)
{
    config_t cfg;
    if (!webviews_config(q, r, &cfg))
        return;
    life_t c = {0};
    webrun_t run;
    webviews_run(q->p, &cfg, "top", NULL, gen_life, &c, &run);
    config_free(&cfg);
    if (run.rc < 0) {
        webviews_failed(q, r, &run, sb_cstr(&c.legend));
        life_free(&c);
        webviews_run_free(&run);
        return;
    }
    web_frame_t f = {sb_cstr(&c.legend), run.msgs, false};
    sbuf_t *b = &r->body;
    char buf[64];
    web_page_begin(b, q, &f);
    sb_puts(b, "<div id=\"memory\">\n<h2>Lifetimes of ");
    const char *focus = web_arg(q, "f");
    if (*focus) {
        sb_puts(b, "<code>");
        web_html(b, focus);
        sb_puts(b, "</code>");
    } else {
        sb_puts(b, "all objects");
    }
    sb_puts(b, "</h2>\n<p class=\"summary\">");
    web_html(b, c.stype);
    sb_puts(b, ": ");
    web_html(b, measure_label(buf, sizeof(buf), c.total, c.unit));
    sb_puts(b, " by lifetime, one bar per octave (an object still live counts its lifetime "
               "so far).");
    if (c.unlabelled) {
        sb_puts(b, " Without a lifetime label: ");
        web_html(b, measure_label(buf, sizeof(buf), c.unlabelled, c.unit));
        sb_puts(b, ".");
    }
    sb_puts(b, " Select functions in another view, or below, for theirs.</p>\n");
    histogram(b, &c);
    sites_table(b, q, &c);
    sb_puts(b, "</div>\n");
    web_page_end(b, q, NULL);
    life_free(&c);
    webviews_run_free(&run);
}
