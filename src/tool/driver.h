/* driver.h — cprof's top level: parse the command line, fetch, merge and
 * symbolize the profiles, then produce one report or run the shell.
 * This layer alone prints errors and warnings (stderr) and decides exit
 * codes: 0 success, 1 failure, 2 bad usage. */
#ifndef CPROF_TOOL_DRIVER_H
#define CPROF_TOOL_DRIVER_H

#include <stdbool.h>

#include "profile/profile.h"
#include "tool/options.h"

int driver_main(int argc, char **argv);

/* Generates report `cmd` (with regexp `param` for list/peek) of p under
 * cfg, to cfg->output or stdout. Prints its own messages; 0 or -1. */
int driver_report(profile_t *p, const char *cmd, const char *param, const config_t *cfg,
                  bool interactive);

/* Index of the sample type named by sample_index ("" = default), or -1
 * with pprof's message in err. */
int driver_sample_index(const profile_t *p, const char *sample_index, char *err, size_t errlen);

#endif
