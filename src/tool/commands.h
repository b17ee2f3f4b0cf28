/* commands.h — the report commands pprof knows (-top, -list REGEX, ...):
 * their output format, whether they take a regexp argument, and help text.
 * Formats that belong to the visualization work (dot, svg, web, ...) are
 * listed so that flags parse, and report that they are not available. */
#ifndef CPROF_TOOL_COMMANDS_H
#define CPROF_TOOL_COMMANDS_H

#include <stdbool.h>

typedef enum {
    FMT_CALLGRIND,
    FMT_COMMENTS,
    FMT_DIS,
    FMT_DOT,
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

typedef struct {
    const char *name;
    report_format_t format;
    bool has_param;
    bool available; /* implemented by this version of cprof */
    bool binary;    /* output not for a terminal */
    const char *description;
    const char *usage; /* may be NULL */
} command_t;

const command_t *commands_all(int *n);
const command_t *command_find(const char *name);

#endif
