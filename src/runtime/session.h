/* session.h — recording sessions that run one at a time and end in a file
 * or a descriptor: the CPU profile (cpuprof.h) and the execution trace
 * (trace.h). Owns the start/stop state machine, the outcome of recent
 * sessions by id, and the file a session started from a pattern writes:
 * the pattern expanded (config.h) and opened at the start as outfile.h
 * opens output paths (so a path that cannot be written fails then),
 * completed at the end. Also the process's two sessions, one row each,
 * and their entry points (cprof.h's start and stop, the HTTP server's):
 * the recording modules bind their callbacks to their row.
 *
 * Threads: start and stop may be called from any thread, also at once:
 * one wins, a start that finds a session gets -EBUSY, a stop that finds a
 * start or stop in progress waits for it (futex on the state word, no
 * lock). The module's own work runs in its start and stop callbacks, with
 * the state STARTING or STOPPING, with the guard set. Not for hooks or
 * signal handlers. fork: session_fork_child forgets the parent's session
 * in the child. */
#ifndef CPROF_SESSION_H
#define CPROF_SESSION_H

#include "outfile.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct session session_t;

struct session {
    const char *what;  /* "CPU profile", in messages */
    const char *env;   /* the variable that starts one for the run */
    /* set by the module (session_bind, for a row below); none: the
     * session cannot start (-ENOTSUP). start: 0 or -errno; s->fd and
     * s->file are set (s->out for a file) */
    int (*start)(session_t *s);
    /* ends the recording and writes it to s->fd (not with discard):
     * 0 or -errno; the file is then completed here */
    int (*stop)(session_t *s, bool discard);
    /* optional: what to do about a start's failure rc, for the message of
     * session_start_env; NULL for the error's own phrase */
    const char *(*explain)(int rc);

    /* the running (or last) session */
    int64_t id;
    int fd;
    bool file;          /* fd is out's */
    outfile_t out;

    int state;          /* futex word */
    int64_t last_id;
    uint64_t file_seq;
    struct {
        int64_t id;
        int rc;
    } results[8];
};

/* A session into the file of pattern (%p %e %t %n %%, relative to the
 * current directory now). 0, -EINVAL (bad pattern), -EBUSY, or -errno. */
int session_start_file(session_t *s, const char *pattern);

/* The same for the environment variable s->env: one stderr line when it
 * cannot start. Nothing when pattern is NULL. */
void session_start_env(session_t *s, const char *pattern);

/* A session into fd (the caller's): its id (> 0), -EBUSY, or -errno. */
int64_t session_start_fd(session_t *s, int fd);

/* Where the running session writes, in its start and stop callbacks and
 * its writer: for a file the descriptor checked (outfile_fd: opened again
 * if the program closed it), else the caller's. -errno if lost. */
int session_fd(session_t *s);

/* Stops session id (0: whichever runs) and writes it (not with discard).
 * If that session was stopped already, the outcome of that; -ENOTCONN if
 * none runs (id 0) or it is unknown. */
int session_stop(session_t *s, int64_t id, bool discard);

/* At exit: stops a running session, writing it if it has a file. */
void session_fini(session_t *s);

/* In a fork child (no other thread): forgets the parent's session,
 * closing the child's copy of its file. True if one was running. */
bool session_fork_child(session_t *s);

/* --- the process's sessions ------------------------------------------------ */

extern session_t session_cpu;   /* the CPU profile, CPROF_CPU_PROFILE */
extern session_t session_trace; /* the execution trace, CPROF_TRACE */

/* From the module's init (guard set), once it can record: its callbacks
 * (explain may be NULL). Until then its session does not start. */
void session_bind(session_t *s, int (*start)(session_t *), int (*stop)(session_t *, bool),
                  const char *(*explain)(int));

/* The HTTP server's entry points (httpops.h's sessions[]): session_start_fd
 * and session_stop on a row. cprof.h's cprof_cpu_start/stop and
 * cprof_trace_start/stop are session_start_file and session_stop(0). */
int64_t session_cpu_start_fd(int fd);
int session_cpu_stop(int64_t id, bool discard);
int64_t session_trace_start_fd(int fd);
int session_trace_stop(int64_t id, bool discard);

#endif
