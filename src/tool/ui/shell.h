/* shell.h — the interactive shell (cprof without an output format), as
 * pprof's: commands (top10, list REGEX, peek, traces, tree, tags, ...),
 * option settings (nodecount=5, sample_index=alloc_space, focus=...), "o"
 * to show them, "help", "quit". Reads with libedit (history) when stdin
 * is a terminal, plain lines otherwise; reports go to stdout, messages
 * and the greeting to stderr. */
#ifndef CPROF_TOOL_SHELL_H
#define CPROF_TOOL_SHELL_H

#include "profile/profile.h"
#include "tool/report/options.h"

/* Runs until quit/EOF. cfg is the command line's configuration (copied).
 * 0, or -1 on a read error. */
int shell_run(profile_t *p, const config_t *cfg);

#endif
