/* driver.h — cprof's pipeline (pprof's internal/driver): fetch, merge and
 * symbolize the profiles, then produce a report. The user interfaces
 * (tool/ui: the command line, the shell, the web UI) drive it; it prints
 * the errors and warnings (stderr) of what it does. */
#ifndef CPROF_TOOL_DRIVER_H
#define CPROF_TOOL_DRIVER_H

#include <stdbool.h>

#include <stdio.h>

#include "profile/profile.h"
#include "tool/driver/flags.h"
#include "tool/report/options.h"
#include "tool/report/report.h"


/* Generates report `cmd` (with regexp `param` for list/peek) of p under
 * cfg, to cfg->output or stdout. Prints its own messages; 0 or -1.
 * last: no report of p follows (the command line's one report), so p's
 * stacks go once the report holds its own (profile_drop_stacks): the peak
 * of memory on a large profile is less by them. */
int driver_report(profile_t *p, const char *cmd, const char *param, const config_t *cfg,
                  bool interactive, bool last);

/* A report printer in place of report_generate: gets the report set up
 * (filters applied, granularity, sample index, total). 0 or a negative
 * errno with a message in err. */
typedef int (*driver_gen_fn)(report_t *r, void *arg, char *err, size_t errlen);

/* driver_report for callers that lay reports out themselves (the web UI):
 * the report goes to out (never -output), through gen when not NULL, and
 * the messages printed on stderr are also written to messages when not
 * NULL (this thread's messages only). 0 or -1. */
int driver_report_with(profile_t *p, const char *cmd, const char *param, const config_t *cfg,
                       FILE *out, FILE *messages, driver_gen_fn gen, void *arg);

/* A message line on stderr (and, inside driver_report_with, in its
 * messages too). */
void driver_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fetches, merges (subtracting the base), symbolizes the sources of s as
 * the command line does; NULL after messages on stderr. */
profile_t *driver_fetch(const source_opts_t *s);

/* driver_fetch whose messages also go to messages when not NULL (this
 * thread's only), for a caller that shows them (the web UI). */
profile_t *driver_fetch_with(const source_opts_t *s, FILE *messages);

/* Index of the sample type named by sample_index ("" = default), or -1
 * with pprof's message in err. */
int driver_sample_index(const profile_t *p, const char *sample_index, char *err, size_t errlen);

#endif
