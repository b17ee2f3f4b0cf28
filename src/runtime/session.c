/* session.c — one-at-a-time recording sessions, the process's two, and
 * their entry points (see session.h). */
#include "session.h"

#include "base/fdio.h"
#include "config.h"
#include "cprof.h"
#include "outfile.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OFF, STARTING, RUNNING, STOPPING };

#define NRESULTS (sizeof(((session_t *)0)->results) / sizeof(((session_t *)0)->results[0]))

static void set_state(session_t *s, int st)
{
    __atomic_store_n(&s->state, st, __ATOMIC_RELEASE);
    rt_futex_wake(&s->state, INT32_MAX);
}

static void wait_state(session_t *s, int st)
{
    rt_futex_wait(&s->state, (uint32_t)st, 10000000);
}

/* out for a file session (fd is its descriptor), else NULL. */
static int64_t start(session_t *s, int fd, const outfile_t *out)
{
    int (*start_fn)(session_t *) = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);
    if (!start_fn)
        return -ENOTSUP; /* its module is off, or not yet started */
    int expected = OFF;
    if (!__atomic_compare_exchange_n(&s->state, &expected, STARTING, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return -EBUSY;
    s->fd = fd;
    s->file = out != NULL;
    if (out)
        s->out = *out;
    int rc = start_fn(s);
    int64_t id = rc < 0 ? rc : (s->id = ++s->last_id);
    set_state(s, rc < 0 ? OFF : RUNNING);
    return id;
}

int session_fd(session_t *s)
{
    if (!s->file)
        return s->fd;
    int fd = outfile_fd(&s->out);
    if (fd >= 0)
        s->fd = fd;
    return fd;
}

static int result_of(session_t *s, int64_t id)
{
    return s->results[id % NRESULTS].id == id ? s->results[id % NRESULTS].rc : -ENOTCONN;
}

typedef struct {
    session_t *s;
    bool discard;
} stopping_t;

static int stop_into(int fd, void *arg)
{
    (void)fd; /* s->fd, the outfile's */
    stopping_t *st = arg;
    return st->s->stop(st->s, st->discard);
}

static int stop_fd(void *arg)
{
    stopping_t *st = arg;
    return st->s->stop(st->s, st->discard);
}

/* The running session's end (state is STOPPING): the module's stop, then
 * its file completed (outfile.h: renamed into place, or written in place
 * for a device or FIFO, SIGPIPE held back). */
static int stop_locked(session_t *s, bool discard)
{
    int rc;
    if (s->file) {
        stopping_t st = {s, discard};
        rc = outfile_close(&s->out, discard ? -ECANCELED : outfile_write(&s->out, stop_into, &st));
        if (discard)
            rc = 0;
        else if (rc < 0)
            rt_warn("cannot write %s %s: %s", s->what, s->out.path, outfile_strerror(rc));
    } else {
        /* The caller's descriptor: a pipe or socket (the HTTP trace's
         * stream) whose reader may leave, or stop reading. */
        stopping_t st = {s, discard};
        rc = outfile_nopipe(stop_fd, &st);
        if (rc == -ETIMEDOUT)
            rt_warn("%s: its reader took nothing for %d s: the %s ends incomplete", s->what,
                    FDIO_STALL_MS / 1000, s->what);
        else if (rc == -EPIPE && !discard)
            rt_warn("%s: its reader went away: the %s ends incomplete", s->what, s->what);
    }
    s->fd = -1;
    return rc;
}

static int stop(session_t *s, int64_t id, bool discard)
{
    for (;;) {
        int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == OFF)
            return id ? result_of(s, id) : -ENOTCONN;
        if (st == RUNNING) {
            if (id && s->id != id)
                return result_of(s, id);
            if (!__atomic_compare_exchange_n(&s->state, &st, STOPPING, false, __ATOMIC_ACQUIRE,
                                             __ATOMIC_RELAXED))
                continue;
            if (!id || s->id == id)
                break;
            set_state(s, RUNNING); /* another session began meanwhile: not ours */
            return result_of(s, id);
        }
        wait_state(s, st); /* STARTING or STOPPING: wait for its end */
    }
    int64_t sid = s->id;
    int rc = stop_locked(s, discard);
    s->results[sid % NRESULTS].id = sid;
    s->results[sid % NRESULTS].rc = rc;
    set_state(s, OFF);
    return id && id != sid ? result_of(s, id) : rc;
}

/* The file opened now, so that a path that cannot be written fails at the
 * start. */
static int start_file(session_t *s, const char *pattern)
{
    char path[4096];
    uint64_t seq = __atomic_fetch_add(&s->file_seq, 1, __ATOMIC_RELAXED);
    int rc = config_expand_pattern(pattern, seq, path, sizeof(path));
    if (rc < 0)
        return rc;
    outfile_t out;
    if ((rc = outfile_open(&out, path, seq)) < 0)
        return rc;
    int64_t id = start(s, out.fd, &out);
    if (id < 0) {
        outfile_close(&out, (int)id);
        return (int)id;
    }
    return 0;
}

int session_start_file(session_t *s, const char *pattern)
{
    if (!pattern || config_check_pattern(pattern) < 0)
        return -EINVAL;
    uint32_t g = rt_guard_enter();
    int rc = start_file(s, pattern);
    rt_guard_leave(g);
    return rc;
}

void session_start_env(session_t *s, const char *pattern)
{
    if (!pattern)
        return;
    int rc = session_start_file(s, pattern);
    const char *why = rc < 0 && s->explain ? s->explain(rc) : NULL;
    if (rc < 0)
        rt_warn("%s=\"%.*s%s\": cannot start: %s; no %s is written", s->env,
                RT_WARN_VALUE(pattern), why ? why : outfile_strerror(rc), s->what);
}

int64_t session_start_fd(session_t *s, int fd)
{
    uint32_t g = rt_guard_enter();
    int64_t id = start(s, fd, NULL);
    rt_guard_leave(g);
    return id;
}

int session_stop(session_t *s, int64_t id, bool discard)
{
    if (id < 0)
        return -EINVAL;
    uint32_t g = rt_guard_enter();
    int rc = stop(s, id, discard);
    rt_guard_leave(g);
    return rc;
}

void session_fini(session_t *s)
{
    int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st == OFF || st == STARTING)
        return;
    session_stop(s, 0, !s->file);
}

bool session_fork_child(session_t *s)
{
    if (s->state == OFF)
        return false;
    if (s->file)
        outfile_drop(&s->out);
    s->fd = s->out.fd = -1;
    s->state = OFF;
    return true;
}

/* --- the process's sessions -------------------------------------------------- */

session_t session_cpu = {.what = "CPU profile", .env = "CPROF_CPU_PROFILE"};
session_t session_trace = {.what = "trace", .env = "CPROF_TRACE"};

void session_bind(session_t *s, int (*start_fn)(session_t *), int (*stop_fn)(session_t *, bool),
                  const char *(*explain)(int))
{
    s->stop = stop_fn;
    s->explain = explain;
    __atomic_store_n(&s->start, start_fn, __ATOMIC_RELEASE); /* last: it enables the rest */
}

int64_t session_cpu_start_fd(int fd)
{
    return session_start_fd(&session_cpu, fd);
}

int session_cpu_stop(int64_t id, bool discard)
{
    return session_stop(&session_cpu, id, discard);
}

int64_t session_trace_start_fd(int fd)
{
    return session_start_fd(&session_trace, fd);
}

int session_trace_stop(int64_t id, bool discard)
{
    return session_stop(&session_trace, id, discard);
}

RT_EXPORT int cprof_cpu_start(const char *path)
{
    return session_start_file(&session_cpu, path);
}

RT_EXPORT int cprof_cpu_stop(void)
{
    return session_stop(&session_cpu, 0, false);
}

RT_EXPORT int cprof_trace_start(const char *path)
{
    return session_start_file(&session_trace, path);
}

RT_EXPORT int cprof_trace_stop(void)
{
    return session_stop(&session_trace, 0, false);
}
