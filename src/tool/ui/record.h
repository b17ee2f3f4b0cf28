/* record.h — `cprof record [-o FILE] [-rate N] [--] PROG ARGS`: runs PROG
 * with libcprof.so preloaded (launch.h), waits for it, moves its heap
 * profile to FILE (or a new pprof.PROG....pb.gz in pprof's temp directory)
 * and prints the top 10 by in-use space on stderr. Called by main();
 * prints, and returns PROG's exit status (125: cprof failed, 126/127: PROG
 * could not be run or found). */
#ifndef CPROF_TOOL_RECORD_H
#define CPROF_TOOL_RECORD_H

/* argv[0] is "record" (main.c's subcommands[]). */
int record_main(int argc, char **argv);

#endif
