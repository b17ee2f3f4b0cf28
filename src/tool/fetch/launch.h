/* launch.h — running a program with libcprof.so preloaded, for
 * `cprof record` (ui/record.h): libcprof.so is found next to the cprof
 * binary, or in ../lib when installed as PREFIX/bin/cprof; the program gets
 * LD_PRELOAD, CPROF_RATE and CPROF_HEAP_PROFILE pointing into a private
 * directory with %p, so the profile of the program itself is told apart
 * from those of the processes it starts (they inherit the preload).
 * Nothing here prints: errors come back in err. */
#ifndef CPROF_TOOL_LAUNCH_H
#define CPROF_TOOL_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

/* The absolute path of libcprof.so for this cprof binary. 0 or -1. */
int launch_find_runtime(char *path, size_t n, char *err, size_t errlen);

/* Starts argv[0] (searched in PATH; argv NULL-terminated) with the
 * preload of runtime, CPROF_RATE=rate unless rate is NULL, and profiles
 * written as DIR/heap.<pid>.pb.gz. *pid on success; else a negative errno
 * (-ENOENT: no such program, -EACCES...) with err set. */
int launch_spawn(char *const argv[], const char *rate, const char *runtime, const char *dir,
                 pid_t *pid, char *err, size_t errlen);

/* Waits for pid, ignoring SIGINT/SIGQUIT meanwhile (the terminal sends them
 * to PROG too) and passing SIGTERM/SIGHUP on to it. Returns the shell's
 * exit status of PROG: its exit code, or 128+N when killed by signal N;
 * *signo receives N (0 if it exited). */
int launch_wait(pid_t pid, int *signo);

/* Moves file from to to: a rename onto a regular file or a new name (a
 * copy across file systems); through a symlink, into a device or a FIFO,
 * a copy that leaves what is there in place. 0 or negative errno. */
int launch_move(const char *from, const char *to);

#endif
