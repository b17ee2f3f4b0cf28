/* commands.h — the report commands pprof knows (-top, -list REGEX, ...),
 * one record each in one table (commands.c): name, help, output kind,
 * parameter, graph or not, default options and renderer. The command line
 * (flags.c), the shell, the web UI and the driver read only this table.
 *
 * Adding a report command: write its renderer (a report_render_fn, in its
 * own file of src/tool/report/ with its declaration in that file's header)
 * and add one row to cmds[] in commands.c, in alphabetical order. A row
 * without a renderer is a command pprof has and cprof does not yet: flags
 * parse, and running it says it is not available. */
#ifndef CPROF_TOOL_COMMANDS_H
#define CPROF_TOOL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "tool/report/options.h"

/* The output kind (pprof's report format): what the renderer writes, which
 * the shared report code (report.c) also looks at. */
typedef enum {
    FMT_CALLGRIND,
    FMT_COMMENTS,
    FMT_DIS,
    FMT_DOT,
    FMT_FLAME,
    FMT_FOLDED,
    FMT_LIST,
    FMT_PROTO,
    FMT_RAW,
    FMT_TAGS,
    FMT_TEXT,
    FMT_TOPPROTO,
    FMT_TRACES,
    FMT_TREE,
    FMT_WEBLIST,
} report_format_t;

/* pprof's applyCommandOverrides, as data: what a command changes in the
 * user's options before it runs. Zero changes nothing. */
typedef struct {
    bool notrim;             /* every node: nodecount, nodefraction, edgefraction 0 */
    bool all_nodes;          /* nodecount defaults to all (0) instead of 80 */
    const char *granularity; /* NULL: the user's */
    signed char noinlines;   /* 0: the user's; 1: on; -1: off */
} command_defaults_t;

/* For a graph command: the Graphviz output format it produces ("dot" for
 * dot itself), and for the viewer commands (web, eog, evince, gv) the
 * programs that display it, in the order pprof tries them (web: $BROWSER,
 * then xdg-open when a display is set); NULL viewer for the others. Other
 * commands that a viewer shows or that go to a file away from a terminal
 * (kcachegrind, weblist, callgrind) name here their file's extension and
 * viewer; report_graph is not their renderer. */
typedef struct {
    const char *format;
    bool pan;           /* svg with the pan/zoom script */
    const char *viewer; /* "browser" (browser_open), a program name, or NULL */
} dot_command_t;

typedef struct report report_t;
/* Writes r's report to r->out: 0, or a negative errno with a message in
 * err. */
typedef int (*report_render_fn)(report_t *r, char *err, size_t errlen);

typedef struct {
    const char *name;
    report_format_t format;
    bool has_param;     /* takes an argument: a regexp, or a file (param_is_file) */
    bool param_is_file; /* on the command line (-flame FILE) the parameter is its
                           output file; in the shell it takes the graph
                           arguments and >file instead */
    bool binary;        /* output not for a terminal */
    bool graph;         /* built from the call graph: file names trimmed first */
    const char *description;
    const char *usage;  /* may be NULL */
    command_defaults_t defaults;
    dot_command_t dot;  /* graph commands rendered by Graphviz; format NULL otherwise */
    report_render_fn render; /* NULL: not available in this version of cprof */
} command_t;

const command_t *commands_all(int *n);
const command_t *command_find(const char *name);

/* Applies cmd's defaults to c (pprof's applyCommandOverrides). */
void command_apply_defaults(const command_t *cmd, config_t *c);

#endif
