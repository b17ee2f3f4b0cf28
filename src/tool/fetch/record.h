/* record.h — the pieces of `cprof record [-o FILE] [-rate N] -- PROG ARGS`:
 * PROG runs with libcprof.so preloaded (found next to the cprof binary, or
 * in ../lib when installed as PREFIX/bin/cprof), CPROF_RATE set from -rate
 * and CPROF_HEAP_PROFILE pointing into a private directory with %p, so the
 * profile of PROG itself is told apart from those of the processes it
 * starts (they inherit the preload). The driver (driver_record) strings
 * them together, prints, and reports; nothing here prints. */
#ifndef CPROF_TOOL_RECORD_H
#define CPROF_TOOL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    const char *output; /* -o FILE, or NULL */
    const char *rate;   /* -rate N (digits), or NULL */
    char **argv;        /* PROG ARGS..., NULL-terminated */
    bool help;
} record_opts_t;

/* Parses the arguments after "record": -o FILE / -o=FILE, -rate N,
 * -h/-help, then "--" (optional when PROG does not start with '-') and
 * PROG ARGS. 0, or -1 with the reason in err. */
int record_parse(int argc, char **argv, record_opts_t *o, char *err, size_t errlen);

/* The absolute path of libcprof.so for this cprof binary. 0 or -1. */
int record_find_runtime(char *path, size_t n, char *err, size_t errlen);

/* Starts PROG (searched in PATH) with the preload and the environment
 * above, writing profiles as DIR/heap.<pid>.pb.gz. *pid on success; else
 * a negative errno (-ENOENT: no such program, -EACCES...) with err set. */
int record_spawn(const record_opts_t *o, const char *runtime, const char *dir, pid_t *pid,
                 char *err, size_t errlen);

/* Waits for pid, ignoring SIGINT/SIGQUIT meanwhile (the terminal sends them
 * to PROG too) and passing SIGTERM/SIGHUP on to it. Returns the shell's
 * exit status of PROG: its exit code, or 128+N when killed by signal N;
 * *signo receives N (0 if it exited). */
int record_wait(pid_t pid, int *signo);

/* Copies file from to to (rename when possible). 0 or negative errno. */
int record_move(const char *from, const char *to);

#endif
