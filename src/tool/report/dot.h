/* dot.h — call graphs: the trimmed call graph of a report in Graphviz's
 * DOT language, laid out exactly as pprof's internal/graph ComposeDot
 * writes it (node labels "flat (pct)\nof cum (pct)", font size by flat,
 * red-grey / green colour by cum, tag nodelets, edge weight, pen width
 * and colour by value, dotted residual edges, the legend box), and its
 * rendering by Graphviz `dot` into SVG, PNG, PDF, PS or GIF.
 *
 * These are library functions: the command line, the shell and the web UI
 * call them with a report_t set up by the driver (filters applied). They
 * write to the stream they are given and never print to stderr or exit;
 * errors come back as a negative errno with a message in err. Graphviz runs
 * as a child process (`dot -T<format>`), PATH-searched. Not thread-safe
 * beyond what report_t allows (one report per thread). */
#ifndef CPROF_TOOL_DOT_H
#define CPROF_TOOL_DOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tool/report/report.h"

/* pprof's printDOT: the DOT text of r's call graph (visual trimming:
 * nodecount/nodefraction/edgefraction, entropy order, redundant residual
 * edges removed) written to r->out. */
int report_dot(report_t *r, char *err, size_t errlen);

/* The same DOT text into a malloc'd, NUL-terminated buffer (*len bytes). */
int dot_generate(report_t *r, char **dot, size_t *len, char *err, size_t errlen);

/* Runs `dot -T<format>` on the DOT text and writes the result to out.
 * format: "svg", "png", "pdf", "ps", "gif" (anything dot -T takes).
 * pan (svg only): make the SVG fill the window and add a small pan/zoom
 * script (mouse wheel zooms around the pointer, dragging pans), as pprof's
 * -svg and web outputs do; false gives Graphviz's SVG unchanged except for
 * dot's unquoted-ampersand bug fixed. -ENOENT when Graphviz is missing. */
int dot_render(const char *dot, size_t len, const char *format, bool pan, FILE *out, char *err,
               size_t errlen);

/* The graph command r->cmd names (dot, svg, png, pdf, ps, gif, and the
 * viewer commands web, eog, evince, gv: their file format) written to
 * r->out. */
int report_graph(report_t *r, char *err, size_t errlen);

/* The Graphviz rendering of the graph command named name (dot, svg, png,
 * pdf, ps, gif, web, eog, evince, gv: see dot_command_t in commands.h);
 * false for the other commands. */
bool dot_command(const char *name, dot_command_t *out);

/* Runs argv (searched on PATH) with in on its stdin; its stdout into *out,
 * stderr into *errs. Returns the wait status, or -errno. */
int dot_run_filter(char *const argv[], const char *in, size_t inlen, sbuf_t *out, sbuf_t *errs);

#endif
