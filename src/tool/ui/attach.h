/* attach.h — `cprof attach [flags] PID` and `cprof detach PID`: profile a
 * program that was started without libcprof.so. The checks (process,
 * permission, tracer, seccomp, architecture, C library, cprof already there) come
 * first and each refusal is one line; then the program is made to call its
 * own dlopen on libcprof.so (found next to the cprof binary) and the
 * runtime's cprof__attach / cprof__detach (src/runtime/attach.h) through
 * inject.h. Called by main(); prints, and returns the exit status. */
#ifndef CPROF_TOOL_ATTACH_H
#define CPROF_TOOL_ATTACH_H

/* argv[0] is "attach" or "detach". */
int attach_main(int argc, char **argv);

#endif
