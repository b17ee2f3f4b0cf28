/* webpage.c — the frame of the web UI's pages, URL parameters and escaping. */
#include "tool/ui/webpage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "base/path.h"
#include "tool/report/commands.h"
#include "tool/driver/driver.h"
#include "tool/ui/settings.h"

/* --- parameters ----------------------------------------------------------------- */

/* pprof's urlparam map, in its configFields order; then cprof's own. */
static const web_param_t params[] = {
    {"calltree", "call_tree"},
    {"rel", "relative_percentages"},
    {"unit", "unit"},
    {"compact", "compact_labels"},
    {"intel", "intel_syntax"},
    {"mean", "mean"},
    {"si", "sample_index"},
    {"norm", "normalize"},
    {"sort", "sort"},
    {"dropneg", "drop_negative"},
    {"n", "nodecount"},
    {"nf", "nodefraction"},
    {"ef", "edgefraction"},
    {"trim", "trim"},
    {"f", "focus"},
    {"i", "ignore"},
    {"prunefrom", "prune_from"},
    {"h", "hide"},
    {"s", "show"},
    {"sf", "show_from"},
    {"tf", "tagfocus"},
    {"ti", "tagignore"},
    {"ts", "tagshow"},
    {"th", "taghide"},
    {"noinlines", "noinlines"},
    {"g", "granularity"},
    {"site", NULL},
    {"by", NULL},
    {"window", NULL},
};
#define N_PARAMS (sizeof(params) / sizeof(params[0]))
_Static_assert(N_PARAMS <= WEB_MAX_PARAMS, "WEB_MAX_PARAMS too small");

const web_param_t *web_params(size_t *n)
{
    *n = N_PARAMS;
    return params;
}

const char *web_arg(const web_req_t *q, const char *param)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (strcmp(params[i].param, param) == 0)
            return q->vals[i] ? q->vals[i] : "";
    return "";
}

const char *web_group_key(const web_req_t *q)
{
    const char *by = web_arg(q, "by");
    return *by ? by : "class";
}

bool web_has_label(const profile_t *p, const char *key)
{
    int64_t k = 0; /* the key's string index: 0 is always "" */
    for (size_t i = 1; p && i < p->n_strings && !k; i++)
        if (strcmp(p->strings[i], key) == 0)
            k = (int64_t)i;
    for (size_t i = 0; k && i < p->n_samples; i++)
        for (uint32_t j = 0; j < p->samples[i].n_labels; j++)
            if (p->samples[i].labels[j].key == k)
                return true;
    return false;
}

int web_config(const web_req_t *q, config_t *out, char *err, size_t errlen)
{
    if (config_copy(out, q->base_cfg) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* The command line's -output never applies to pages. */
    config_set_str(&out->output, "");
    for (size_t i = 0; i < N_PARAMS; i++) {
        const char *v = q->vals[i];
        if (!params[i].field || !v || !*v)
            continue;
        char e[512];
        if (config_set(out, params[i].field, v, e, sizeof(e)) < 0) {
            snprintf(err, errlen, "error setting config field %s: %s", params[i].field, e);
            config_free(out);
            return -1;
        }
    }
    /* Fractions multiply totals that are converted back to integers: NaN,
     * infinities and huge factors would overflow (pprof takes them; they
     * mean nothing). */
    if (!(fabs(out->nodefraction) <= 1) || !(fabs(out->edgefraction) <= 1)) {
        snprintf(err, errlen, "error setting config field %s: a fraction between 0 and 1 is "
                              "expected",
                 fabs(out->nodefraction) <= 1 ? "edgefraction" : "nodefraction");
        config_free(out);
        return -1;
    }
    return 0;
}

/* --- views ------------------------------------------------------------------------ */

static const struct {
    web_view_t view;
    const char *path; /* under /ui/ */
    const char *id, *label, *help;
} views[] = {
    {VIEW_TOP, "top", "topbtn", "Top", "Outputs top entries in text form"},
    {VIEW_GRAPH, "", "graphbtn", "Graph", "Display profile as a directed graph"},
    {VIEW_FLAME, "flamegraph", "flamegraph", "Flame Graph", "Display profile as a flame graph"},
    {VIEW_PEEK, "peek", "peek", "Peek", "Output callers/callees of functions matching regexp"},
    {VIEW_SOURCE, "source", "list", "Source",
     "Output annotated source for functions matching regexp"},
    {VIEW_DISASM, "disasm", "disasm", "Disassemble",
     "Output assembly listings annotated with samples"},
    {VIEW_MEMORY, "memory", "memory", "Memory over time",
     "Chart of the sample value across the profiles given (or polled), with the call sites "
     "that grew most"},
    {VIEW_BREAKDOWN, "breakdown", "breakdownbtn", "Breakdown",
     "The profile by class (the memory profile's label class, or the label by=KEY) as a "
     "stacked bar; a class leads to its flame graph"},
    {VIEW_LIFETIMES, "lifetimes", "lifetimesbtn", "Lifetimes",
     "The histogram of the objects' lifetimes of a lifetime profile (CPROF_LIFETIME_PROFILE), "
     "for the selection"},
    {VIEW_DOWNLOAD, "download", NULL, NULL, NULL},
};
#define N_VIEWS (sizeof(views) / sizeof(views[0]))

web_view_t web_view_of(const char *name)
{
    for (size_t i = 0; i < N_VIEWS; i++)
        if (strcmp(views[i].path, name) == 0)
            return views[i].view;
    return VIEW_NONE;
}

/* --- escaping ---------------------------------------------------------------------- */

void web_url_escape(sbuf_t *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '_' || *c == '.' || *c == '~') {
            sb_putc(b, (char)*c);
        } else {
            sb_putc(b, '%');
            sb_putc(b, hex[*c >> 4]);
            sb_putc(b, hex[*c & 15]);
        }
    }
}

void web_json(sbuf_t *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sb_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': sb_puts(b, "\\\""); continue;
        case '\\': sb_puts(b, "\\\\"); continue;
        case '\n': sb_puts(b, "\\n"); continue;
        case '\t': sb_puts(b, "\\t"); continue;
        case '<': case '>': case '&': break; /* as \u00XX: never "</script" */
        default:
            /* U+2028/U+2029 end lines in old JavaScript parsers */
            if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)) {
                sb_puts(b, c[2] == 0xa8 ? "\\u2028" : "\\u2029");
                c += 2;
                continue;
            }
            if (*c >= 0x20 && *c != 0x7f) {
                sb_putc(b, (char)*c);
                continue;
            }
        }
        sb_printf(b, "\\u00%c%c", hex[*c >> 4], hex[*c & 15]);
    }
    sb_putc(b, '"');
}

void web_quotemeta(sbuf_t *b, const char *s, bool anchored)
{
    if (anchored)
        sb_putc(b, '^');
    for (; *s; s++) {
        if (strchr("\\.+*?()|[]{}^$", *s))
            sb_putc(b, '\\');
        sb_putc(b, *s);
    }
    if (anchored)
        sb_puts(b, "( |$)");
}

void web_query(sbuf_t *b, const web_req_t *q, const char *set, const char *value)
{
    bool first = true;
    for (size_t i = 0; i < N_PARAMS; i++) {
        const char *v = q->vals[i];
        if (set && strcmp(params[i].param, set) == 0)
            v = value;
        if (!v || !*v)
            continue;
        sb_putc(b, first ? '?' : '&');
        first = false;
        sb_puts(b, params[i].param);
        sb_putc(b, '=');
        web_url_escape(b, v);
    }
}

/* --- the frame ---------------------------------------------------------------------- */

/* The value of the legend line starting with key ("File: "), or def. */
static void legend_value(sbuf_t *b, const char *legend, const char *key, const char *def)
{
    size_t kl = strlen(key);
    for (const char *l = legend ? legend : ""; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (n >= kl && strncmp(l, key, kl) == 0) {
            web_html_n(b, l + kl, n - kl);
            return;
        }
        l += n + (e ? 1 : 0);
    }
    web_html(b, def);
}

/* Each line of text in its own element. */
static void lines_html(sbuf_t *b, const char *text, const char *open, const char *close)
{
    for (const char *l = text ? text : ""; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        sb_puts(b, open);
        web_html_n(b, l, n);
        sb_puts(b, close);
        l += n + (e ? 1 : 0);
    }
}

static void view_link(sbuf_t *b, const web_req_t *q, size_t i)
{
    sb_printf(b, "<a id=\"%s\" class=\"viewlink%s\" title=\"%s\" href=\"./%s", views[i].id,
              q->view == views[i].view ? " current" : "", views[i].help, views[i].path);
    /* pprof keeps every parameter when switching views */
    web_query(b, q, NULL, NULL);
    sb_printf(b, "\">%s</a>", views[i].label);
}

/* The parameters pprof's Refine menu sets, and their help. */
static const struct {
    const char *id, *param, *label, *field;
} refine[] = {
    {"focus", "f", "Focus", "focus"},          {"ignore", "i", "Ignore", "ignore"},
    {"hide", "h", "Hide", "hide"},             {"show", "s", "Show", "show"},
    {"show-from", "sf", "Show from", "show_from"},
};

/* The help of a configuration field: its first line. */
static void field_help(sbuf_t *b, const char *field)
{
    const char *h = config_help(field);
    if (!h)
        return;
    const char *e = strchr(h, '\n');
    web_html_n(b, h, e ? (size_t)(e - h) : strlen(h));
}

/* "FILE TYPE" for the title and the details: from the legend, else (an
 * error page has none) from the profile itself: its main binary's name and
 * its default sample type, as the reports would say. */
static void profile_title(sbuf_t *b, const web_req_t *q, const char *legend)
{
    const profile_t *p = q->p;
    const char *file = "unknown", *type = "unknown";
    char fb[4096];
    if (p && p->n_mappings && p->strings[p->mappings[0].filename][0])
        file = path_base(p->strings[p->mappings[0].filename], fb, sizeof(fb));
    if (p && p->default_sample_type)
        type = p->strings[p->default_sample_type];
    else if (p && p->n_sample_types)
        type = p->strings[p->sample_types[p->n_sample_types - 1].type];
    legend_value(b, legend, "File: ", file);
    sb_putc(b, ' ');
    legend_value(b, legend, "Type: ", type);
}

/* pprof's configMenu: Default and the saved configurations, each a link
 * to the current URL with its saved fields set (pprof's makeURL: a
 * default value drops the parameter, booleans are "t"/"f"); the last one
 * that leaves the URL as it is is the current one. */
static void config_menu(sbuf_t *b, const web_req_t *q)
{
    char path[4096];
    settings_t s = {0};
    char err[256];
    if (settings_path(path, sizeof(path)) == 0)
        settings_read(path, &s, err, sizeof(err));
    config_t def;
    config_default(&def);
    sbuf_t *links = calloc(s.n + 1, sizeof(*links));
    size_t current = SIZE_MAX;
    for (size_t k = 0; links && k <= s.n; k++) {
        const config_t *c = k == 0 ? &def : &s.v[k - 1].cfg;
        bool changed = false, first = true;
        for (size_t i = 0; i < N_PARAMS; i++) {
            bool choice;
            const opt_field_t *f = params[i].field ? config_field(params[i].field, &choice) : NULL;
            const char *v = q->vals[i] ? q->vals[i] : "";
            char cv[64], dv[64]; /* v may point here */
            if (f && !choice && settings_saved(f)) {
                bool text = f->kind == OPT_STRING || f->kind == OPT_CHOICE;
                const char *val = text ? *(char *const *)((const char *)c + f->offset)
                                       : config_get(c, f, cv, sizeof(cv));
                const char *dflt = text ? *(char *const *)((const char *)&def + f->offset)
                                        : config_get(&def, f, dv, sizeof(dv));
                const char *w = strcmp(val ? val : "", dflt ? dflt : "") == 0 ? ""
                                : f->kind == OPT_BOOL                         ? (val[0] == 't' ? "t" : "f")
                                                                              : val;
                changed |= strcmp(v, w) != 0;
                v = w;
            }
            if (!*v)
                continue;
            sb_putc(&links[k], first ? '?' : '&');
            first = false;
            sb_puts(&links[k], params[i].param);
            sb_putc(&links[k], '=');
            web_url_escape(&links[k], v);
        }
        if (first)
            sb_putc(&links[k], '?');
        if (!changed)
            current = k;
    }
    sb_puts(b, "<div class=\"menu\" id=\"config\" tabindex=\"0\"><span class=\"menu-name\">Config"
               "</span><div class=\"submenu\"><a title=\"Save current settings\" id=\"save-config\" "
               "href=\"\">Save as ...</a><hr>");
    for (size_t k = 0; links && k <= s.n; k++) {
        sb_printf(b, "<a class=\"config%s\" href=\"", k == current ? " current" : "");
        web_html(b, sb_cstr(&links[k]));
        sb_puts(b, "\">");
        web_html(b, k == 0 ? "Default" : s.v[k - 1].name);
        if (k > 0) {
            sb_puts(b, " <span class=\"menu-delete-btn\" title=\"Delete\" data-config=\"");
            web_html(b, s.v[k - 1].name);
            sb_puts(b, "\">\xf0\x9f\x97\x99</span>");
        }
        sb_puts(b, "</a>");
        sb_free(&links[k]);
    }
    sb_puts(b, "</div></div>\n");
    free(links);
    config_free(&def);
    settings_free(&s);
}

static void sample_menu(sbuf_t *b, const web_req_t *q)
{
    const profile_t *p = q->p;
    if (!p || p->n_sample_types < 2)
        return;
    char err[512];
    int cur = driver_sample_index(p, web_arg(q, "si"), err, sizeof(err));
    sb_puts(b, "<div class=\"menu\" id=\"sample\" tabindex=\"0\"><span class=\"menu-name\">"
               "Sample: ");
    if (cur >= 0)
        web_html(b, p->strings[p->sample_types[cur].type]);
    else
        sb_puts(b, "?");
    sb_puts(b, "</span><div class=\"submenu\">");
    for (size_t i = 0; i < p->n_sample_types; i++) {
        const char *t = p->strings[p->sample_types[i].type];
        sb_puts(b, "<a class=\"si");
        if ((int)i == cur)
            sb_puts(b, " current");
        sb_puts(b, "\" href=\"");
        web_query(b, q, "si", t);
        sb_puts(b, "\">");
        web_html(b, t);
        sb_puts(b, "</a>");
    }
    sb_puts(b, "</div></div>");
}

/* The filters in the URL, each with a link that removes it. */
static void active_filters(sbuf_t *b, const web_req_t *q)
{
    size_t n;
    const web_param_t *ps = web_params(&n);
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const char *v = q->vals[i];
        if (!v || !*v || !ps[i].field || strcmp(ps[i].param, "si") == 0)
            continue;
        if (!any)
            sb_puts(b, "<div id=\"filters\">");
        any = true;
        sb_puts(b, "<span class=\"filter\" title=\"");
        field_help(b, ps[i].field);
        sb_puts(b, "\">");
        web_html(b, ps[i].field);
        sb_puts(b, "=<code>");
        web_html(b, v);
        sb_puts(b, "</code><a class=\"unset\" title=\"remove\" href=\"");
        size_t at = b->len;
        web_query(b, q, ps[i].param, NULL);
        if (b->len == at)
            sb_putc(b, '?');
        sb_puts(b, "\">\xc3\x97</a></span>");
    }
    if (any)
        sb_puts(b, "</div>");
}

void web_page_begin(sbuf_t *b, const web_req_t *q, const web_frame_t *f)
{
    sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>");
    profile_title(b, q, f->legend);
    sb_puts(b, "</title>\n<style>\n");
    sb_putn(b, (const char *)asset_webui_css, asset_webui_css_len);
    sb_puts(b, "</style>\n</head>\n<body");
    for (size_t i = 0; i < N_VIEWS; i++)
        if (views[i].view == q->view && views[i].id)
            sb_printf(b, " data-view=\"%s\"", views[i].id);
    if (q->diff)
        sb_puts(b, " class=\"diff\"");
    sb_puts(b, ">\n<header id=\"bar\">\n<a id=\"home\" href=\"./");
    web_query(b, q, NULL, NULL);
    sb_puts(b, "\">cprof</a>\n<div class=\"menu\" id=\"view\" tabindex=\"0\">"
               "<span class=\"menu-name\">View</span><div class=\"submenu\">");
    for (size_t i = 0; i < N_VIEWS; i++) {
        if (!views[i].label || (views[i].view == VIEW_MEMORY && !q->series_possible &&
                                q->view != VIEW_MEMORY))
            continue;
        if (views[i].view == VIEW_BREAKDOWN && q->view != VIEW_BREAKDOWN &&
            !web_has_label(q->p, web_group_key(q)))
            continue;
        if (views[i].view == VIEW_LIFETIMES && q->view != VIEW_LIFETIMES &&
            !web_has_label(q->p, WEB_LIFETIME_LABEL))
            continue;
        const command_t *dis = command_find("disasm");
        if (views[i].view == VIEW_DISASM && (!dis || !dis->render))
            continue;
        view_link(b, q, i);
    }
    sb_puts(b, "</div></div>\n");
    sample_menu(b, q);
    config_menu(b, q);
    sb_puts(b, "<div class=\"menu\" id=\"refine\" tabindex=\"0\"><span class=\"menu-name\">"
               "Refine</span><div class=\"submenu\">");
    for (size_t i = 0; i < sizeof(refine) / sizeof(refine[0]); i++) {
        sb_printf(b, "<a id=\"%s\" class=\"refine\" data-param=\"%s\" title=\"", refine[i].id,
                  refine[i].param);
        field_help(b, refine[i].field);
        sb_printf(b, "\" href=\"\">%s</a>", refine[i].label);
    }
    sb_puts(b, "<hr><a id=\"reset\" title=\"Show the entire profile\" href=\"?");
    const char *si = web_arg(q, "si");
    if (*si) {
        sb_puts(b, "si=");
        web_url_escape(b, si);
    }
    sb_puts(b, "\">Reset</a></div></div>\n<a id=\"download\" class=\"button\" "
               "title=\"The profile as shown (gzipped profile.proto)\" href=\"./download\">"
               "Download</a>\n<input id=\"search\" type=\"text\" "
               "placeholder=\"Search regexp\" autocomplete=\"off\" autocapitalize=\"none\" "
               "size=\"32\" value=\"");
    web_html(b, web_arg(q, "f"));
    sb_puts(b, "\">\n<details id=\"details\"><summary title=\"Show information about the "
               "profile and this view\">");
    profile_title(b, q, f->legend);
    sb_puts(b, "</summary><div id=\"detailsbox\">");
    lines_html(b, f->legend, "<div>", "</div>");
    sb_puts(b, "</div></details>\n</header>\n");
    active_filters(b, q);
    if (f->messages && *f->messages) {
        sb_printf(b, "<div id=\"errors\" class=\"%s\" role=\"alert\">",
                  f->failed ? "failed" : "warning");
        lines_html(b, f->messages, "<div>", "</div>");
        sb_puts(b, "</div>\n");
    }
    sb_puts(b, "<main id=\"content\">\n");
}

void web_page_end(sbuf_t *b, const web_req_t *q, const char *data)
{
    (void)q;
    sb_puts(b, "</main>\n");
    if (data) {
        sb_puts(b, "<script type=\"application/json\" id=\"page-data\">");
        sb_puts(b, data);
        sb_puts(b, "</script>\n");
    }
    sb_puts(b, "<script>\n");
    sb_putn(b, (const char *)asset_webui_js, asset_webui_js_len);
    sb_puts(b, "</script>\n</body>\n</html>\n");
}

void web_page_message(web_resp_t *r, const web_req_t *q, int status, const char *legend,
                      const char *messages)
{
    web_frame_t f = {legend, messages, status >= 400};
    sb_reset(&r->body);
    web_page_begin(&r->body, q, &f);
    web_page_end(&r->body, q, NULL);
    r->status = status;
    r->ctype = "text/html; charset=utf-8";
}
