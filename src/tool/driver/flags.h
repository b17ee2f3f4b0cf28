/* flags.h — the command line of cprof, parsed with the rules of Go's flag
 * package that go tool pprof uses: flags (one or two dashes, -f=v or -f v,
 * booleans only as -f or -f=bool) come first and stop at the first
 * non-flag argument or "--". Every configuration field is a flag
 * (-nodecount=5), as is every report command (-top, -list=REGEX) and the
 * source options (-base, -symbolize, ...). */
#ifndef CPROF_TOOL_FLAGS_H
#define CPROF_TOOL_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tool/report/options.h"

typedef struct {
    char **sources; /* profile files or URLs (point into argv) */
    size_t n_sources;
    const char *exec_name; /* BINARY argument, or NULL */
    const char *build_id;  /* -buildid or a hex first argument */
    const char *base;      /* -base / -diff_base source, or NULL */
    bool diff_base;
    bool normalize;
    int seconds, timeout;
    const char *symbolize; /* NULL = default */
    const char *http;      /* -http host:port, or NULL */
    bool no_browser;
    int poll; /* -poll seconds (web UI), 0 = off */
    const char *comment; /* -add_comment */
    const char *tools;
} source_opts_t;

typedef struct {
    const char *name;  /* report command, or NULL for the interactive shell */
    const char *param; /* its regexp argument (-list=REGEX), or NULL */
} cmdline_cmd_t;

typedef enum {
    FLAGS_OK,      /* run */
    FLAGS_EXIT_OK, /* help or version printed: exit 0 */
    FLAGS_ERROR,   /* message in err: exit 2 */
} flags_result_t;

/* Parses argv into cfg (already defaulted), src and cmd. Warnings that
 * pprof prints but tolerates ("Multiple value selections, ...") go to
 * warn (newline-separated, static-size buffer). */
flags_result_t flags_parse(int argc, char **argv, config_t *cfg, source_opts_t *src,
                           cmdline_cmd_t *cmd, char *err, size_t errlen, char *warn,
                           size_t warnlen);

/* The usage text of the command line (flags) or of the shell (commands). */
void flags_usage(FILE *f, bool command_line);

#endif
