/* dot.c — the DOT call graph (pprof's graph.ComposeDot over
 * report.GetDOT) and its rendering by Graphviz. */
#include "tool/report/dot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "assets.h"
#include "base/path.h"
#include "tool/graph/measure.h"

extern char **environ;

static inline int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* --- names ------------------------------------------------------------------------ */

static bool is_word(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_';
}

static bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

/* goVerRegExp `^(.*?)/v(?:[2-9]|[1-9][0-9]+)([./].*)$` -> ${1}${2}: drops
 * the first major-version element of a module path, in place. */
static void strip_go_version(char *s)
{
    for (char *p = s; (p = strstr(p, "/v")); p++) {
        char *d = p + 2, *e = d;
        while (*e >= '0' && *e <= '9')
            e++;
        size_t l = (size_t)(e - d);
        if (l == 0 || (*e != '.' && *e != '/'))
            continue;
        if (l == 1 ? (*d < '2') : (*d == '0'))
            continue;
        if (strchr(e, '\n'))
            return; /* `.*$` does not cross a newline */
        memmove(p, e, strlen(e) + 1);
        return;
    }
}

/* goRegExp `^(?:[\w\-\.]+\/)+(.+)`: the part after the package path. */
static const char *go_short(const char *s)
{
    const char *last = NULL, *seg = s;
    for (const char *p = s; *p; p++) {
        if (*p == '/') {
            if (p == seg)
                break;
            if (p[1] && p[1] != '\n')
                last = p + 1;
            seg = p + 1;
        } else if (!is_word(*p) && *p != '-' && *p != '.') {
            break;
        }
    }
    return last;
}

/* javaRegExp `^(?:[a-z]\w*\.)*([A-Z][\w\$]*\.(?:<init>|[a-z][\w\$]*(?:\$\d+)?))(?:(?:\()|$)`:
 * "Class.method" into out. */
static bool java_short(const char *s, char *out, size_t n)
{
    const char *p = s;
    while (is_lower(*p)) {
        const char *q = p + 1;
        while (is_word(*q))
            q++;
        if (*q != '.')
            return false;
        p = q + 1;
    }
    if (!is_upper(*p))
        return false;
    const char *start = p;
    while (is_word(*p) || *p == '$')
        p++;
    if (*p != '.')
        return false;
    p++;
    if (strncmp(p, "<init>", 6) == 0) {
        p += 6;
    } else if (is_lower(*p)) {
        while (is_word(*p) || *p == '$')
            p++;
    } else {
        return false;
    }
    if (*p != '(' && *p != '\0')
        return false;
    snprintf(out, n, "%.*s", (int)(p - start), start);
    return true;
}

/* cppRegExp `^(?:[_a-zA-Z]\w*::)+(_*[A-Z]\w*::~?[_a-zA-Z]\w*(?:<.*>)?)`:
 * "Class::method<...>" into out. */
static bool cpp_short(const char *s, char *out, size_t n)
{
    const char *ends[256];
    size_t k = 0;
    const char *p = s;
    while (k < 256 && (is_word(*p) && !(*p >= '0' && *p <= '9'))) {
        const char *q = p + 1;
        while (is_word(*q))
            q++;
        if (q[0] != ':' || q[1] != ':')
            break;
        ends[k++] = p = q + 2;
    }
    while (k > 0) {
        const char *c = ends[--k], *q = c;
        while (*q == '_')
            q++;
        if (!is_upper(*q))
            continue;
        while (is_word(*q))
            q++;
        if (q[0] != ':' || q[1] != ':')
            continue;
        q += 2;
        if (*q == '~')
            q++;
        if (!(is_word(*q) && !(*q >= '0' && *q <= '9')))
            continue;
        while (is_word(*q))
            q++;
        if (*q == '<') {
            const char *nl = strchr(q, '\n'), *gt = NULL;
            for (const char *x = q + 1; *x && (!nl || x < nl); x++)
                if (*x == '>')
                    gt = x;
            if (gt)
                q = gt + 1;
        }
        snprintf(out, n, "%.*s", (int)(q - c), c);
        return true;
    }
    return false;
}

/* pprof's ShortenFunctionName, into a malloc'd string. */
static char *shorten_function_name(const char *name)
{
    const char *anon = "(anonymous namespace)::";
    if (strncmp(name, anon, strlen(anon)) == 0)
        name += strlen(anon);
    char *f = strdup(name);
    if (!f)
        return NULL;
    strip_go_version(f);
    size_t n = strlen(f) + 1;
    const char *g = go_short(f);
    if (g) {
        char *r = strdup(g);
        free(f);
        return r;
    }
    char *r = malloc(n);
    if (!r) {
        free(f);
        return NULL;
    }
    if (java_short(f, r, n) || cpp_short(f, r, n)) {
        free(f);
        return r;
    }
    free(r);
    return f;
}

/* pprof's escapeForDot: \ and " escaped, newlines left-justified. */
static void escape_dot(sbuf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            sb_puts(b, "\\\\");
        else if (*s == '"')
            sb_puts(b, "\\\"");
        else if (*s == '\n')
            sb_puts(b, "\\l");
        else
            sb_putc(b, *s);
    }
}

/* Tag names are written as pprof writes them (unescaped: the joined labels
 * hold literal \n line breaks), except that a quote cannot end the string. */
static void tag_name(sbuf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"')
            sb_puts(b, "\\\"");
        else if (*s == '\\' && s[1] != 'n')
            sb_puts(b, "\\\\");
        else
            sb_putc(b, *s);
    }
}

/* pprof's multilinePrintableName. */
static void multiline_name(graph_t *g, uint32_t ni, sbuf_t *b)
{
    const ninfo_t *i = &g->nodes[ni].info;
    const work_t *w = g->w;
    bool any = false;
    if (i->address) {
        sb_printf(b, "%016" PRIx64, i->address);
        any = true;
    }
    const char *name = work_str(w, i->name);
    if (*name) {
        char *s = shorten_function_name(name);
        if (!s) {
            b->oom = true;
            return;
        }
        sbuf_t e = {0};
        escape_dot(&e, s);
        free(s);
        if (any)
            sb_puts(b, "\\n");
        any = true;
        const char *p = sb_cstr(&e);
        while (*p) {
            if (p[0] == ':' && p[1] == ':') {
                sb_puts(b, "\\n");
                p += 2;
            } else if (strncmp(p, "[...]", 5) == 0) {
                sb_puts(b, "[\xe2\x80\xa6]");
                p += 5;
            } else if (*p == '.') {
                sb_puts(b, "\\n");
                p++;
            } else {
                sb_putc(b, *p++);
            }
        }
        sb_free(&e);
    }
    char buf[4096];
    const char *file = work_str(w, i->file);
    if (*file)
        file = path_base(file, buf, sizeof(buf));
    sbuf_t t = {0};
    if (i->lineno != 0)
        sb_printf(&t, "%s:%" PRId64, file, i->lineno);
    else if (*file)
        sb_puts(&t, file);
    else if (*name)
        ;
    else if (*work_str(w, i->objfile)) {
        char ob[4096];
        sb_printf(&t, "[%s]", path_base(work_str(w, i->objfile), ob, sizeof(ob)));
    } else
        sb_puts(&t, "<unknown>");
    if (t.len) {
        if (any)
            sb_puts(b, "\\n");
        escape_dot(b, sb_cstr(&t));
    }
    sb_free(&t);
    sb_puts(b, "\\n");
}

/* --- colours ----------------------------------------------------------------------- */

/* pprof's dotColor: score in [-1, 1], green (negative) through grey to
 * red; background colours are light. */
static const char *dot_color(double score, bool background, char *buf, size_t n)
{
    const double shift = 0.7;
    double saturation = background ? 0.1 : 1.0, value = background ? 0.93 : 0.7;
    if (isnan(score)) {
        snprintf(buf, n, "#%02x%02x%02x", 0, 0, 0);
        return buf;
    }
    score = fmax(-1.0, fmin(1.0, score));
    if (fabs(score) < 0.2)
        saturation *= fabs(score) / 0.2;
    if (score > 0.0)
        score = pow(score, 1.0 - shift);
    if (score < 0.0)
        score = -pow(-score, 1.0 - shift);
    double r, g, b;
    if (score < 0.0) {
        g = value;
        r = value * (1 + saturation * score);
    } else {
        r = value;
        g = value * (1 - saturation * score);
    }
    b = value * (1 - saturation);
    snprintf(buf, n, "#%02x%02x%02x", (unsigned)(uint8_t)(r * 255.0),
             (unsigned)(uint8_t)(g * 255.0), (unsigned)(uint8_t)(b * 255.0));
    return buf;
}

/* --- tags (nodelets) ----------------------------------------------------------------- */

typedef struct {
    const char *name; /* NULL: own */
    const char *unit;
    int64_t value;
    int64_t flat, flat_div, cum, cum_div;
    char own[160]; /* storage for collapsed names */
} vtag_t;

static const char *vname(const vtag_t *t)
{
    return t->name ? t->name : t->own;
}

static int64_t tag_flat(const vtag_t *t)
{
    return t->flat_div == 0 ? t->flat : t->flat / t->flat_div;
}

static int64_t tag_cum(const vtag_t *t)
{
    return t->cum_div == 0 ? t->cum : t->cum / t->cum_div;
}

/* pprof's tags.Less. */
static int tag_cmp(const void *pa, const void *pb, void *arg)
{
    bool flat = *(const bool *)arg;
    const vtag_t *a = pa, *b = pb;
    if (!flat && a->cum != b->cum) {
        int64_t x = abs64(a->cum), y = abs64(b->cum);
        if (x != y)
            return x > y ? -1 : 1;
    }
    if (a->flat != b->flat) {
        int64_t x = abs64(a->flat), y = abs64(b->flat);
        if (x != y)
            return x > y ? -1 : 1;
    }
    return strcmp(vname(a), vname(b));
}

static void sort_tags(vtag_t *t, size_t n, bool flat)
{
    qsort_r(t, n, sizeof(*t), tag_cmp, &flat);
}

/* measurement.Scale's value only. */
static double scale_to(int64_t v, const char *from, const char *to)
{
    const char *u;
    return measure_scale(v, from, to, &u);
}

static double tag_distance(const vtag_t *t, const vtag_t *u)
{
    double v = scale_to(u->value, u->unit, t->unit);
    return v < (double)t->value ? (double)t->value - v : v - (double)t->value;
}

/* pprof's collapsedTags: at most count tags, the others merged into the
 * nearest of the first count ("min..max"). Returns the number of tags in
 * out (which has room for count). */
static size_t collapse_tags(vtag_t *ts, size_t n, size_t count, bool flat, vtag_t *out)
{
    sort_tags(ts, n, flat);
    if (n <= count) {
        memcpy(out, ts, n * sizeof(*ts));
        return n;
    }
    size_t *grp = malloc(n * sizeof(*grp));
    if (!grp)
        return 0;
    for (size_t i = 0; i < count; i++)
        grp[i] = i;
    for (size_t i = count; i < n; i++) {
        size_t gi = 0;
        double d = tag_distance(&ts[i], &ts[0]);
        for (size_t j = 1; j < count; j++) {
            double nd = tag_distance(&ts[i], &ts[j]);
            if (nd < d) {
                gi = j;
                d = nd;
            }
        }
        grp[i] = gi;
    }
    for (size_t gi = 0; gi < count; gi++) {
        vtag_t *o = &out[gi];
        memset(o, 0, sizeof(*o));
        size_t members = 0;
        const vtag_t *min = &ts[gi], *max = &ts[gi];
        int64_t f = 0, df = 0, c = 0, dc = 0;
        for (size_t i = 0; i < n; i++) {
            if (grp[i] != gi)
                continue;
            const vtag_t *t = &ts[i];
            if (members++ > 0) {
                if ((int64_t)scale_to(t->value, t->unit, min->unit) < min->value)
                    min = t;
                if ((int64_t)scale_to(t->value, t->unit, max->unit) > max->value)
                    max = t;
            }
            f += t->flat;
            df += t->flat_div;
            c += t->cum;
            dc += t->cum_div;
        }
        char a[64], b[64];
        if (members == 1) {
            snprintf(o->own, sizeof(o->own), "%s",
                     measure_label(a, sizeof(a), ts[gi].value, ts[gi].unit));
            o->flat = tag_flat(&ts[gi]);
            o->cum = tag_cum(&ts[gi]);
        } else {
            snprintf(o->own, sizeof(o->own), "%s..%s",
                     measure_label(a, sizeof(a), min->value, min->unit),
                     measure_label(b, sizeof(b), max->value, max->unit));
            o->flat = df != 0 ? f / df : f;
            o->cum = dc != 0 ? c / dc : c;
        }
        o->name = NULL;
        o->unit = "";
    }
    free(grp);
    sort_tags(out, count, flat);
    return count;
}

typedef struct {
    report_t *r;
    graph_t *g;
    sbuf_t *b;
} composer_t;

static const char *fmt_value(composer_t *c, int64_t v, char *buf, size_t n)
{
    return report_format_value(c->r, v, buf, n);
}

/* pprof's numericNodelets. */
static void numeric_nodelets(composer_t *c, vtag_t *nts, size_t n, bool flat_tags,
                             const char *source)
{
    vtag_t out[4];
    size_t m = collapse_tags(nts, n, 4, flat_tags, out);
    for (size_t j = 0; j < m; j++) {
        const vtag_t *t = &out[j];
        int64_t w = tag_cum(t);
        const char *attr = " style=\"dotted\"";
        if (flat_tags || tag_flat(t) == tag_cum(t)) {
            w = tag_flat(t);
            attr = "";
        }
        if (w == 0)
            continue;
        char wv[64];
        fmt_value(c, w, wv, sizeof(wv));
        sb_printf(c->b, "N%s_%zu [label = \"", source, j);
        tag_name(c->b, vname(t));
        sb_printf(c->b, "\" id=\"N%s_%zu\" fontsize=8 shape=box3d tooltip=\"%s\"]\n", source, j,
                  wv);
        sb_printf(c->b,
                  "%s -> N%s_%zu [label=\" %s\" weight=100 tooltip=\"%s\" labeltooltip=\"%s\"%s]\n",
                  source, source, j, wv, wv, wv, attr);
    }
}

static void to_vtag(const graph_t *g, const gtag_t *t, vtag_t *v)
{
    memset(v, 0, sizeof(*v));
    v->name = graph_tag_str(g, t->name);
    v->unit = t->numeric ? (g->o.bytes_unit ? g->o.bytes_unit : "bytes") : "";
    v->value = t->value;
    v->flat = t->flat;
    v->flat_div = t->flat_div;
    v->cum = t->cum;
    v->cum_div = t->cum_div;
}

/* pprof's addNodelets; true if it wrote any. */
static bool add_nodelets(composer_t *c, uint32_t ni, size_t id, bool has_out)
{
    graph_t *g = c->g;
    if (!g->tag_first)
        return false;
    uint32_t first = g->tag_first[ni], cnt = g->tag_first[ni + 1] - first;
    if (cnt == 0)
        return false;
    vtag_t *ts = malloc(cnt * sizeof(*ts)), *nts = malloc(cnt * sizeof(*nts));
    if (!ts || !nts) {
        free(ts);
        free(nts);
        c->b->oom = true;
        return false;
    }
    size_t nl = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        const gtag_t *t = &g->tags[g->tag_refs[first + i]];
        if (!t->removed && !t->numeric)
            to_vtag(g, t, &ts[nl++]);
    }
    size_t before = c->b->len;
    bool flat_tags = has_out;
    sort_tags(ts, nl, flat_tags);
    if (nl > 4)
        nl = 4;
    char src[64];
    for (size_t i = 0; i < nl; i++) {
        const vtag_t *t = &ts[i];
        int64_t w = flat_tags ? tag_flat(t) : tag_cum(t);
        if (w == 0)
            continue;
        char wv[64];
        fmt_value(c, w, wv, sizeof(wv));
        sb_printf(c->b, "N%zu_%zu [label = \"", id, i);
        tag_name(c->b, vname(t));
        sb_printf(c->b, "\" id=\"N%zu_%zu\" fontsize=8 shape=box3d tooltip=\"%s\"]\n", id, i, wv);
        sb_printf(c->b,
                  "N%zu -> N%zu_%zu [label=\" %s\" weight=100 tooltip=\"%s\" labeltooltip=\"%s\"]\n",
                  id, id, i, wv, wv, wv);
        /* the numeric tags of this label group */
        size_t nn = 0;
        for (uint32_t k = 0; k < cnt; k++) {
            const gtag_t *x = &g->tags[g->tag_refs[first + k]];
            if (!x->removed && x->numeric && strcmp(graph_tag_str(g, x->group), vname(t)) == 0)
                to_vtag(g, x, &nts[nn++]);
        }
        if (nn) {
            snprintf(src, sizeof(src), "N%zu_%zu", id, i);
            numeric_nodelets(c, nts, nn, flat_tags, src);
        }
    }
    size_t nn = 0;
    for (uint32_t k = 0; k < cnt; k++) {
        const gtag_t *x = &g->tags[g->tag_refs[first + k]];
        if (!x->removed && x->numeric && x->group == 0)
            to_vtag(g, x, &nts[nn++]);
    }
    if (nn) {
        snprintf(src, sizeof(src), "N%zu", id);
        numeric_nodelets(c, nts, nn, flat_tags, src);
    }
    free(ts);
    free(nts);
    return c->b->len != before;
}

/* --- composing ------------------------------------------------------------------------ */

static bool has_live_out(const graph_t *g, uint32_t ni)
{
    const gnode_t *n = &g->nodes[ni];
    for (uint32_t j = 0; j < n->out_n; j++)
        if (!g->edges[g->out_refs[n->out_start + j]].removed)
            return true;
    return false;
}

static void add_legend(composer_t *c, const char *title, const char *labels)
{
    /* labels: '\n'-terminated lines; pprof's labels are lines that may
     * themselves hold newlines, and escaping turns every newline into \l,
     * so splitting here gives the same text. */
    const char *nl = strchr(labels, '\n');
    if (!*labels)
        return;
    sbuf_t first = {0};
    sb_putn(&first, labels, nl ? (size_t)(nl - labels) : strlen(labels));
    sb_puts(c->b, "subgraph cluster_L { \"");
    escape_dot(c->b, sb_cstr(&first));
    sb_puts(c->b, "\" [shape=box fontsize=16 label=\"");
    size_t n = strlen(labels);
    if (n && labels[n - 1] == '\n')
        n--;
    for (size_t i = 0; i < n; i++) {
        if (labels[i] == '\\')
            sb_puts(c->b, "\\\\");
        else if (labels[i] == '"')
            sb_puts(c->b, "\\\"");
        else if (labels[i] == '\n')
            sb_puts(c->b, "\\l");
        else
            sb_putc(c->b, labels[i]);
    }
    sb_puts(c->b, "\\l\"");
    if (title && *title)
        sb_printf(c->b, " tooltip=\"%s\"", title);
    sb_puts(c->b, "] }\n");
    sb_free(&first);
}

static void add_node(composer_t *c, uint32_t ni, size_t id, double max_flat)
{
    graph_t *g = c->g;
    const gnode_t *n = &g->nodes[ni];
    int64_t flat = graph_flat_value(n), cum = graph_cum_value(n), total = c->r->total;
    sbuf_t *b = c->b;
    char fv[64], cv[64], pct[32], col[16], fill[16];
    sb_printf(b, "N%zu [label=\"", id);
    multiline_name(g, ni, b);
    fmt_value(c, flat, fv, sizeof(fv));
    if (flat != 0) {
        measure_percentage(pct, sizeof(pct), flat, total);
        const char *p = pct;
        while (*p == ' ')
            p++;
        sb_printf(b, "%s (%s)", fv, p);
    } else {
        sb_puts(b, "0");
    }
    const char *cum_value = fv;
    if (cum != flat) {
        sb_puts(b, flat != 0 ? "\\n" : " ");
        cum_value = fmt_value(c, cum, cv, sizeof(cv));
        measure_percentage(pct, sizeof(pct), cum, total);
        const char *p = pct;
        while (*p == ' ')
            p++;
        sb_printf(b, "of %s (%s)", cum_value, p);
    }
    int font = 8;
    if (max_flat != 0 && flat != 0 && (double)abs64(flat) <= max_flat)
        font += (int)ceil(16.0 * sqrt((double)abs64(flat) / max_flat));
    double score = (double)cum / (double)abs64(total);
    sb_printf(b, "\" id=\"node%zu\" fontsize=%d shape=box tooltip=\"", id, font);
    escape_dot(b, graph_node_name(g, ni));
    sb_printf(b, " (%s)\" color=\"%s\" fillcolor=\"%s\"]\n", cum_value,
              dot_color(score, false, col, sizeof(col)), dot_color(score, true, fill, sizeof(fill)));
}

static void add_edge(composer_t *c, const gedge_t *e, size_t from, size_t to, bool nodelets)
{
    graph_t *g = c->g;
    sbuf_t *b = c->b;
    int64_t total = c->r->total;
    int64_t wv = e->weight_div == 0 ? e->weight : e->weight / e->weight_div;
    char w[64], col[16];
    fmt_value(c, wv, w, sizeof(w));
    sb_printf(b, "N%zu -> N%zu [label=\" %s%s\"", from, to, w, e->inl ? "\\n (inline)" : "");
    if (total != 0) {
        int64_t x = abs64(profile_value_mul(wv, 100) / total);
        int weight = 1 + (int)(x < 100 ? x : 100);
        if (weight > 1)
            sb_printf(b, " weight=%d", weight);
        x = abs64(profile_value_mul(wv, 5) / total);
        int width = 1 + (int)(x < 5 ? x : 5);
        if (width > 1)
            sb_printf(b, " penwidth=%d", width);
        sb_printf(b, " color=\"%s\"",
                  dot_color((double)wv / (double)abs64(total), false, col, sizeof(col)));
    }
    sbuf_t tip = {0};
    sb_putc(&tip, '"');
    escape_dot(&tip, graph_node_name(g, e->src));
    sb_puts(&tip, e->residual ? " ... " : " -> ");
    escape_dot(&tip, graph_node_name(g, e->dst));
    sb_printf(&tip, " (%s)\"", w);
    const char *t = sb_cstr(&tip);
    sb_printf(b, " tooltip=%s labeltooltip=%s", t, t);
    sb_free(&tip);
    if (e->residual)
        sb_puts(b, " style=\"dotted\"");
    if (nodelets)
        sb_puts(b, " minlen=2");
    sb_puts(b, "]\n");
}

/* The DOT text into b. */
static int compose(report_t *r, sbuf_t *b, char *err, size_t errlen)
{
    graph_t *g;
    trim_result_t t;
    int rc = report_trimmed_graph(r, true, &g, &t, err, errlen);
    if (rc < 0)
        return rc;
    composer_t c = {r, g, b};
    const profile_t *p = r->w->p;
    char tb[4096];
    const char *title = "";
    if (p->n_mappings > 0 && *work_str(r->w, p->mappings[0].filename))
        title = path_base(work_str(r->w, p->mappings[0].filename), tb, sizeof(tb));
    sb_printf(b, "digraph \"%s\" {\n", *title ? title : "unnamed");
    sb_puts(b, "node [style=filled fillcolor=\"#f8f8f8\"]\n");
    sbuf_t labels = {0};
    report_graph_labels(r, g, &t, true, &labels);
    add_legend(&c, title, sb_cstr(&labels));
    sb_free(&labels);

    size_t *ids = calloc(g->n_nodes + 1, sizeof(*ids));
    bool *nodelets = calloc(g->n_nodes + 1, sizeof(*nodelets));
    uint32_t *edges = NULL;
    size_t ne = 0;
    if (!ids || !nodelets)
        goto oom;
    if (g->n_sel > 0) {
        double max_flat = (double)abs64(graph_flat_value(&g->nodes[g->sel[0]]));
        for (size_t i = 0; i < g->n_sel; i++) {
            ids[g->sel[i]] = i + 1;
            double f = (double)abs64(graph_flat_value(&g->nodes[g->sel[i]]));
            if (f > max_flat)
                max_flat = f;
        }
        size_t cap = 0;
        for (size_t i = 0; i < g->n_sel; i++)
            cap += g->nodes[g->sel[i]].out_n;
        edges = malloc((cap + 1) * sizeof(*edges));
        if (!edges)
            goto oom;
        for (size_t i = 0; i < g->n_sel; i++) {
            uint32_t ni = g->sel[i];
            add_node(&c, ni, i + 1, max_flat);
            nodelets[ni] = add_nodelets(&c, ni, i + 1, has_live_out(g, ni));
            const gnode_t *n = &g->nodes[ni];
            for (uint32_t j = 0; j < n->out_n; j++) {
                uint32_t ei = g->out_refs[n->out_start + j];
                if (!g->edges[ei].removed)
                    edges[ne++] = ei;
            }
        }
        graph_sort_edges(g, edges, ne);
        for (size_t i = 0; i < ne; i++) {
            const gedge_t *e = &g->edges[edges[i]];
            add_edge(&c, e, ids[e->src], ids[e->dst], nodelets[e->src]);
        }
    }
    sb_puts(b, "}\n");
    free(ids);
    free(nodelets);
    free(edges);
    graph_free(g);
    if (b->oom) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
oom:
    free(ids);
    free(nodelets);
    free(edges);
    graph_free(g);
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

int dot_generate(report_t *r, char **dot, size_t *len, char *err, size_t errlen)
{
    sbuf_t b = {0};
    int rc = compose(r, &b, err, errlen);
    if (rc < 0) {
        sb_free(&b);
        return rc;
    }
    *len = b.len;
    *dot = sb_steal(&b);
    if (!*dot) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static int write_all(FILE *out, const char *s, size_t n, char *err, size_t errlen)
{
    if (n && fwrite(s, 1, n, out) != n) {
        snprintf(err, errlen, "write error: %s", strerror(errno));
        return -EIO;
    }
    return 0;
}

int report_dot(report_t *r, char *err, size_t errlen)
{
    char *dot;
    size_t len;
    int rc = dot_generate(r, &dot, &len, err, errlen);
    if (rc < 0)
        return rc;
    rc = write_all(r->out, dot, len, err, errlen);
    free(dot);
    return rc;
}

/* --- Graphviz ----------------------------------------------------------------------- */

int dot_run_filter(char *const argv[], const char *in, size_t inlen, sbuf_t *out,
                      sbuf_t *errs)
{
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    int rc = 0;
    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
        rc = -errno;
        goto out;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
    posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
    posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
    pid_t pid;
    int src = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (src != 0) {
        rc = -src;
        goto out;
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    pin[0] = pout[1] = perr[1] = -1;
    /* never block on a full pipe while the child waits for us to read */
    fcntl(pin[1], F_SETFL, O_NONBLOCK);

    /* A child that dies early must not kill us with SIGPIPE. */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    size_t off = 0;
    if (inlen == 0) {
        close(pin[1]);
        pin[1] = -1;
    }
    char buf[65536];
    while (pout[0] >= 0 || perr[0] >= 0) {
        struct pollfd fds[3];
        int nf = 0, iw = -1, io = -1, ie = -1;
        if (pin[1] >= 0) {
            fds[nf] = (struct pollfd){pin[1], POLLOUT, 0};
            iw = nf++;
        }
        if (pout[0] >= 0) {
            fds[nf] = (struct pollfd){pout[0], POLLIN, 0};
            io = nf++;
        }
        if (perr[0] >= 0) {
            fds[nf] = (struct pollfd){perr[0], POLLIN, 0};
            ie = nf++;
        }
        if (poll(fds, (nfds_t)nf, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (iw >= 0 && fds[iw].revents) {
            size_t chunk = inlen - off < 65536 ? inlen - off : 65536;
            ssize_t w = write(pin[1], in + off, chunk);
            if (w > 0)
                off += (size_t)w;
            if (w < 0 && errno != EINTR && errno != EAGAIN)
                off = inlen; /* the child stopped reading */
            if (off >= inlen) {
                close(pin[1]);
                pin[1] = -1;
            }
        }
        int rd[2] = {io, ie};
        int *fdp[2] = {&pout[0], &perr[0]};
        sbuf_t *dst[2] = {out, errs};
        for (int k = 0; k < 2; k++) {
            if (rd[k] < 0 || !fds[rd[k]].revents)
                continue;
            ssize_t n = read(*fdp[k], buf, sizeof(buf));
            if (n > 0)
                sb_putn(dst[k], buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(*fdp[k]);
                *fdp[k] = -1;
            }
        }
    }
    if (pin[1] >= 0) {
        close(pin[1]);
        pin[1] = -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    rc = status;
out:
    for (int i = 0; i < 2; i++) {
        if (pin[i] >= 0)
            close(pin[i]);
        if (pout[i] >= 0)
            close(pout[i]);
        if (perr[i] >= 0)
            close(perr[i]);
    }
    return rc;
}

/* Replaces the first match of the literal-prefix pattern
 * `<svg\s*width="[^"]+"\s*height="[^"]+"\s*viewBox="[^"]+"`; returns the end
 * of the match in *end, or false. */
static bool find_svg_open(const char *s, size_t *start, size_t *end)
{
    for (const char *p = s; (p = strstr(p, "<svg")); p++) {
        const char *q = p + 4;
        static const char *const attrs[] = {"width=\"", "height=\"", "viewBox=\""};
        bool ok = true;
        for (int k = 0; k < 3 && ok; k++) {
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' ||
                   *q == '\v')
                q++;
            size_t al = strlen(attrs[k]);
            if (strncmp(q, attrs[k], al) != 0) {
                ok = false;
                break;
            }
            q += al;
            const char *e = strchr(q, '"');
            if (!e || e == q) {
                ok = false;
                break;
            }
            q = e + 1;
        }
        if (ok) {
            *start = (size_t)(p - s);
            *end = (size_t)(q - s);
            return true;
        }
    }
    return false;
}

/* pprof's massageSVG, with our own pan/zoom script. */
static void massage_svg(const char *svg, bool pan, sbuf_t *out)
{
    sbuf_t a = {0};
    /* dot's unquoted ampersands */
    for (const char *p = svg; *p;) {
        const char *q = strstr(p, "&;");
        if (!q) {
            sb_puts(&a, p);
            break;
        }
        sb_putn(&a, p, (size_t)(q - p));
        sb_puts(&a, "&amp;;");
        p = q + 2;
    }
    const char *s = sb_cstr(&a);
    if (!pan) {
        sb_puts(out, s);
        sb_free(&a);
        return;
    }
    size_t st, en;
    const char *rest = s;
    if (find_svg_open(s, &st, &en)) {
        sb_putn(out, s, st);
        sb_puts(out, "<svg width=\"100%\" height=\"100%\"");
        rest = s + en;
    }
    const char *gp = NULL;
    for (const char *p = rest; (p = strstr(p, "<g id=\"graph")); p++)
        if (p[12] >= '0' && p[12] <= '9' && p[13] == '"') {
            gp = p;
            break;
        }
    if (gp) {
        sb_putn(out, rest, (size_t)(gp - rest));
        sb_puts(out, "<script type=\"text/ecmascript\"><![CDATA[");
        sb_putn(out, (const char *)asset_graphpan_js, asset_graphpan_js_len);
        sb_puts(out, "]]></script><g id=\"viewport\" transform=\"scale(0.5,0.5) translate(0,0)\">");
        rest = gp;
    }
    const char *close = strstr(rest, "</svg>");
    if (close && gp) {
        sb_putn(out, rest, (size_t)(close - rest));
        sb_puts(out, "</g>");
        rest = close;
    }
    sb_puts(out, rest);
    sb_free(&a);
}

int dot_render(const char *dot, size_t len, const char *format, bool pan, FILE *out, char *err,
               size_t errlen)
{
    if (strcmp(format, "dot") == 0)
        return write_all(out, dot, len, err, errlen);
    char tflag[64];
    snprintf(tflag, sizeof(tflag), "-T%s", format);
    char *argv[] = {"dot", tflag, NULL};
    sbuf_t o = {0}, e = {0};
    int st = dot_run_filter(argv, dot, len, &o, &e);
    int rc = 0;
    if (st < 0) {
        snprintf(err, errlen, "failed to execute dot. Is Graphviz installed? Error: %s",
                 strerror(-st));
        rc = st;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        const char *m = sb_cstr(&e);
        size_t ml = strcspn(m, "\n");
        if (WIFEXITED(st))
            snprintf(err, errlen, "failed to execute dot. Is Graphviz installed? Error: exit "
                     "status %d%s%.*s", WEXITSTATUS(st), ml ? ": " : "", (int)ml, m);
        else
            snprintf(err, errlen, "failed to execute dot: killed by signal %d", WTERMSIG(st));
        rc = -EIO;
    } else if (o.oom || e.oom) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    } else if (strcmp(format, "svg") == 0) {
        sbuf_t m = {0};
        massage_svg(sb_cstr(&o), pan, &m);
        if (m.oom) {
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
        } else {
            rc = write_all(out, m.s, m.len, err, errlen);
        }
        sb_free(&m);
    } else {
        rc = write_all(out, o.s, o.len, err, errlen);
    }
    sb_free(&o);
    sb_free(&e);
    return rc;
}

bool dot_command(const char *name, dot_command_t *out)
{
    const command_t *c = command_find(name);
    if (!c || !c->dot.format)
        return false;
    *out = c->dot;
    return true;
}

int report_graph(report_t *r, char *err, size_t errlen)
{
    dot_command_t dc = r->cmd->dot;
    if (!dc.format)
        dc = (dot_command_t){"dot", false, NULL};
    char *dot;
    size_t len;
    int rc = dot_generate(r, &dot, &len, err, errlen);
    if (rc < 0)
        return rc;
    rc = dot_render(dot, len, dc.format, dc.pan, r->out, err, errlen);
    free(dot);
    return rc;
}
