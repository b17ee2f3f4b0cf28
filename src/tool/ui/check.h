/* check.h — `cprof check`: a CI gate on a profile. Limits on a sample
 * type, each under its own filters (focus, ignore, tagfocus: any setting
 * of options.c), and, against a base profile, a bound on growth; the top
 * stacks that grew (the -base diff's stacks) for each failure; JUnit XML
 * for CI systems. Reuses the driver's fetch, filters and sample index
 * through driver_report_with. Called by main(); prints, and returns the
 * exit status: 0 every check holds, 1 one failed (or a profile could not
 * be read), 2 bad usage (one line). Single-threaded, as the tool. */
#ifndef CPROF_TOOL_CHECK_H
#define CPROF_TOOL_CHECK_H

/* argv[0] is "check". */
int check_main(int argc, char **argv);

#endif
