/* commands.h — the report commands pprof knows (-top, -list REGEX, ...):
 * their output format, whether they take a regexp argument, and help text.
 * A command marked unavailable parses as a flag and says it is not
 * available (every format of go tool pprof 1.19 is available now). */
#ifndef CPROF_TOOL_COMMANDS_H
#define CPROF_TOOL_COMMANDS_H

#include <stdbool.h>

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

typedef struct {
    const char *name;
    report_format_t format;
    bool has_param;
    bool available; /* implemented by this version of cprof */
    bool binary;    /* output not for a terminal */
    const char *description;
    const char *usage; /* may be NULL */
} command_t;

/* The command's parameter is its output file on the command line
 * (-flame FILE), not a regexp; in the shell it takes the graph arguments
 * and >file instead. */
static inline bool command_param_is_file(const command_t *c)
{
    return c->format == FMT_FLAME;
}

const command_t *commands_all(int *n);
const command_t *command_find(const char *name);

#endif
