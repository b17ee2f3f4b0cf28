/* webpage.h — the pages of cprof's web UI (-http), pprof's webhtml.go and
 * its templates: the request state a view reads (URL parameters, the
 * profile, the command-line configuration), the frame every page shares
 * (menus, sample type selector, refine menu, search box, the legend, the
 * messages), and the escaping helpers the views build HTML with.
 *
 * The state of a view lives in its URL, with pprof's parameter names
 * (si, f, i, h, s, sf, ...); links are built from the current parameters
 * so a page can be bookmarked, reloaded or shared. Everything that comes
 * from a profile or a URL goes through web_html/web_url_escape/web_json
 * before it reaches a page: names may hold < > & " and any byte.
 *
 * Pages are built in memory (an sbuf) by one thread at a time: the server
 * serializes requests (web.c). Nothing here prints. */
#ifndef CPROF_TOOL_WEBPAGE_H
#define CPROF_TOOL_WEBPAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"
#include "tool/report/options.h"
#include "base/sbuf.h"

/* --- URL parameters (pprof's urlparam table) ----------------------------------- */

typedef struct {
    const char *param; /* in URLs: "f" */
    const char *field; /* the configuration field: "focus" */
} web_param_t;

/* pprof's parameters, then cprof's own (site: a call site of the memory
 * view; by: the label key the breakdown and memory views group by;
 * window: START,END of the polled process's flight recorder, webwindow.h).
 * n receives the count. */
const web_param_t *web_params(size_t *n);
#define WEB_MAX_PARAMS 32

/* --- a request ------------------------------------------------------------------ */

typedef enum {
    VIEW_GRAPH,
    VIEW_TOP,
    VIEW_FLAME,
    VIEW_PEEK,
    VIEW_SOURCE,
    VIEW_DISASM,
    VIEW_MEMORY,
    VIEW_BREAKDOWN,
    VIEW_LIFETIMES,
    VIEW_DOWNLOAD,
    VIEW_NONE, /* unknown path */
} web_view_t;

/* The view that /ui/<name> shows, VIEW_NONE if none. */
web_view_t web_view_of(const char *name);

typedef struct memseries memseries_t; /* memtime.h */

typedef struct {
    web_view_t view;
    const char *vals[WEB_MAX_PARAMS]; /* per web_params() entry: value or NULL */
    profile_t *p;                     /* the profile the views show */
    const config_t *base_cfg;         /* from the command line */
    bool diff;                        /* -base/-diff_base given */
    memseries_t *series;              /* snapshots for the memory view (may be empty) */
    bool series_possible;             /* several sources, or -poll */
    bool window_possible;             /* a polled heap URL: windows can be asked for */
} web_req_t;

/* The value of URL parameter param ("" when absent). */
const char *web_arg(const web_req_t *q, const char *param);

/* The label key a breakdown groups by: the URL's by, else "class" (the
 * memory profile's, docs/memory.md). */
const char *web_group_key(const web_req_t *q);

/* The numeric label of a lifetime profile's samples (lifetimes.h): the
 * lower edge of the sample's lifetime bin, nanoseconds. */
#define WEB_LIFETIME_LABEL "lifetime"

/* Whether some sample of p has a label named key. */
bool web_has_label(const profile_t *p, const char *key);

/* The configuration of a request: the command line's, with the URL
 * parameters applied (pprof's applyURL). 0, or -1 with pprof's message
 * ("error setting config field ...") in err. */
int web_config(const web_req_t *q, config_t *out, char *err, size_t errlen);

/* --- responses ------------------------------------------------------------------ */

typedef struct {
    int status;        /* HTTP status */
    const char *ctype; /* Content-Type */
    const char *disposition; /* Content-Disposition, or NULL */
    sbuf_t body;
    const char *location; /* Location (redirects), or NULL */
} web_resp_t;

/* What the frame shows around a view. */
typedef struct {
    const char *legend;   /* newline-separated header lines ("File: ...", ...) */
    const char *messages; /* newline-separated errors and warnings, or NULL */
    bool failed;          /* the view could not be made: messages are errors */
} web_frame_t;

/* Starts a page: head, style, the menu bar, the legend and the messages. */
void web_page_begin(sbuf_t *b, const web_req_t *q, const web_frame_t *f);
/* Ends it: the script, and data (a JSON value, or NULL) the script reads
 * as the page's data. */
void web_page_end(sbuf_t *b, const web_req_t *q, const char *data);

/* A complete page holding only a message (status: 404 for an unknown view,
 * 400 for bad parameters, ...). */
void web_page_message(web_resp_t *r, const web_req_t *q, int status, const char *legend,
                      const char *messages);

/* --- escaping and links --------------------------------------------------------- */

/* Text into HTML (element content or a quoted attribute value): the base
 * escaper (sbuf.h), under the names the web UI's code uses. */
static inline void web_html(sbuf_t *b, const char *s)
{
    sb_html(b, s);
}
static inline void web_html_n(sbuf_t *b, const char *s, size_t n)
{
    sb_html_n(b, s, n);
}
/* A URL query component (percent-encoding all but unreserved bytes). */
void web_url_escape(sbuf_t *b, const char *s);
/* A JSON string literal, safe inside <script> (no "</", no U+2028/9). */
void web_json(sbuf_t *b, const char *s);
/* A regexp matching s (pprof's quotemeta); anchored: s alone or followed
 * by a space ("name file:line", the printable names of the lines
 * granularity that peek matches). */
void web_quotemeta(sbuf_t *b, const char *s, bool anchored);

/* The query string ("?a=b&c=d", or "" when empty) of the request with
 * parameter set to value (value NULL: removed; set NULL: unchanged). */
void web_query(sbuf_t *b, const web_req_t *q, const char *set, const char *value);

#endif
