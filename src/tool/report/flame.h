/* flame.h — flame graphs of a report's samples: an interactive,
 * self-contained HTML page (our own JS/CSS, compiled in from
 * src/tool/ui/assets/), its data as JSON for other pages (the web UI), and
 * Brendan Gregg's folded stacks ("root;caller;leaf value" per distinct
 * stack) for the usual flamegraph tools.
 *
 * Frames are the graph nodes of the report's granularity (functions by
 * default, inline frames expanded), root first. Identical frame paths are
 * merged into one tree; the HTML keeps the heaviest nodes (by |value|,
 * always a connected top of the tree), at most FLAME_MAX_NODES of them and
 * about FLAME_MAX_BYTES of JSON with their names, so a page stays small for
 * any profile, long C++ names included. With -base/-diff_base the samples of the base come in
 * negative: each frame then carries the new (positive) and base (negated
 * negative) sums; its width is their sum and its colour the difference.
 *
 * Library functions: they write to r->out (or an sbuf), never print or
 * exit; errors are a negative errno with a message in err. */
#ifndef CPROF_TOOL_FLAME_H
#define CPROF_TOOL_FLAME_H

#include <stddef.h>

#include "tool/report/report.h"
#include "base/sbuf.h"

#define FLAME_MAX_NODES 30000
#define FLAME_MAX_BYTES (1536 * 1024)

/* The page: HTML with the data, the script and the style inlined; no
 * external URL. Written to r->out. */
int flame_html(report_t *r, char *err, size_t errlen);

/* Folded stacks of the selected sample value, one line per distinct stack
 * (sorted), zero-value stacks left out; the values sum to the total of the
 * samples (negative lines for a diff). Written to r->out. */
int flame_folded(report_t *r, char *err, size_t errlen);

/* The data of the page as one JSON object, appended to out:
 *   {"title":..., "type":..., "unit":..., "legend":[lines...],
 *    "total":T, "diff":bool, "names":[...], "fflat":[...], "fcum":[...],
 *    "nodes":[name, value, base, self, selfbase, nchildren, ...]}
 * nodes in depth-first pre-order, 6 integers each; the first is the root
 * ("root", all samples). fflat/fcum: each name's flat and cum over the
 * whole (unpruned) profile, for tooltips. Values are in the sample unit;
 * "ratio" (1/divide_by) scales them for display. */
int flame_json(report_t *r, sbuf_t *out, char *err, size_t errlen);

/* The page's script and style, for pages that embed the flame graph
 * (the web UI): the script defines cprofFlame(container, data) which
 * renders data (flame_json's object) into container, an empty element. */
const char *flame_script(size_t *len);
const char *flame_style(size_t *len);

#endif
