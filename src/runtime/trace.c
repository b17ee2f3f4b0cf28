/* trace.c — the execution trace's sessions and API (see trace.h): the
 * session's start and stop (session.h's session_trace), the goroutine
 * state machine each thread's events follow, the hooks' entry points, the
 * thread callbacks, the user annotations (cprof.h) and the fork handlers.
 * The events' memory and encoding are tracebuf.h's; the writer thread and
 * the trace's end are tracewriter.h's. */
#include "trace.h"

#include "arena.h"
#include "cprof.h"
#include "labels.h"
#include "lockprof.h"
#include "session.h"
#include "syshooks.h"
#include "threadhook.h"
#include "tracebuf.h"
#include "tracewriter.h"
#include "unwind.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Known from the thread's start (threadhook), before any trace: */
static __thread uintptr_t my_start_pc __attribute__((tls_model("initial-exec")));
static __thread uint8_t my_internal __attribute__((tls_model("initial-exec")));
/* The thread has ended for the trace (on_exit_ ran). */
static __thread uint8_t my_gone __attribute__((tls_model("initial-exec")));

static uint64_t pool_bytes = 16u << 20; /* the trace's memory budget */
static uint64_t next_goid, next_task;
static int64_t t0;                /* the running trace's start */

/* --- the goroutine state machine ---------------------------------------------------------- */

/* The wait of r's goroutine ended: GoUnblock on its own P (the waker is
 * not known), GoStart. Room for two events was made. The unblock carries
 * the wait's stack: Go 1.22+'s trace tool (its converter of this format)
 * computes the blocking profiles from the transitions that carry a stack,
 * and a wait whose end has none is never closed (docs/trace.md). */
static void wake(trec_t *r, int64_t ts)
{
    uint64_t a[3] = {r->goid, r->seq++, r->wait_stk};
    tracebuf_put_event(r->buf, EV_GO_UNBLOCK, ts, a, 3);
    a[1] = r->seq++;
    tracebuf_put_event(r->buf, EV_GO_START, ts, a, 2);
    r->state = G_RUNNING;
}

/* Makes r's goroutine run: a thread new to the trace (G_NONE, G_CREATED)
 * gets ProcStart, GoCreate on its own P unless its creator wrote one, and
 * GoStart; one whose unblock was dropped (G_WAITING) is woken now. root: a
 * stack of the thread, whose outermost frame names the goroutine when its
 * start routine is unknown. False when dropped. */
static bool begin_as(trec_t *r, int64_t ts, const uintptr_t *root, int depth, int32_t tid,
                     uintptr_t start_pc, bool waiting);

static bool begin(trec_t *r, int64_t ts, const uintptr_t *root, int depth)
{
    return begin_as(r, ts, root, depth, (int32_t)gettid(), my_start_pc, false);
}

/* begin for thread tid, whose start routine is start_pc (0: unknown);
 * waiting (a thread new to the trace that waits at its start): GoWaiting
 * instead of GoStart, as Go's trace start has it for a blocked goroutine. */
static bool begin_as(trec_t *r, int64_t ts, const uintptr_t *root, int depth, int32_t tid,
                     uintptr_t start_pc, bool waiting)
{
    if (r->state == G_RUNNING)
        return true;
    if (!tracebuf_room(r, 3 * EV_MAX, ts))
        return false;
    if (r->state == G_WAITING) {
        wake(r, ts);
        return true;
    }
    uint64_t a[3] = {(uint64_t)tid};
    tracebuf_put_event(r->buf, EV_PROC_START, ts, a, 1);
    r->born = r->buf->last;
    if (r->state == G_NONE) {
        r->goid = __atomic_add_fetch(&next_goid, 1, __ATOMIC_RELAXED);
        /* go tool trace names a goroutine by this stack's frame: never
         * none (1 names address 0). */
        uintptr_t pc = start_pc ? start_pc + 1 : depth > 0 ? root[depth - 1] : 1;
        a[0] = r->goid;
        a[1] = tracebuf_stack(&pc, 1);
        a[2] = 0;
        tracebuf_put_event(r->buf, EV_GO_CREATE, ts, a, 3);
        r->seq = 1;
        if (waiting) {
            tracebuf_put_event(r->buf, EV_GO_WAITING, ts, a, 1);
            r->seq = 2; /* the parser's order.go: GoWaiting takes seq 1 to 2 */
            r->state = G_WAITING;
            return true;
        }
    }
    a[0] = r->goid;
    a[1] = r->seq++;
    tracebuf_put_event(r->buf, EV_GO_START, ts, a, 2);
    r->state = G_RUNNING;
    return true;
}

/* --- hooks' entry points ------------------------------------------------------------------ */

/* The calling thread's record for a write (tracebuf_enter), unless the
 * thread has ended for the trace: an event after its GoEnd and ProcStop
 * (a signal handler's system call, a TLS destructor's lock) would start a
 * processor that nothing stops, and the reader refuses the next
 * ProcStart on it. */
static trec_t *enter(void)
{
    return my_gone ? NULL : tracebuf_enter();
}

bool trace_block(int kind, const uintptr_t *pcs, int depth)
{
    trec_t *r = enter();
    if (!r)
        return false;
    bool ok = false;
    int64_t ts = rt_now_ns();
    if (!my_internal && begin(r, ts, pcs, depth) && tracebuf_room(r, EV_MAX, ts)) {
        uint64_t a[1] = {tracebuf_stack(pcs, depth)};
        tracebuf_put_event(r->buf, (uint8_t)kind, ts, a, 1);
        r->wait_stk = a[0];
        r->state = G_WAITING;
        ok = true;
    }
    tracebuf_leave(r);
    return ok;
}

void trace_unblock(void)
{
    trec_t *r = enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    if (r->state == G_WAITING && tracebuf_room(r, 2 * EV_MAX, ts))
        wake(r, ts); /* if dropped, the thread's next event wakes it */
    tracebuf_leave(r);
}

/* A system call that blocked, as Go 1.19 writes it: GoSysCall with the
 * stack, GoSysBlock (the P lets go), GoSysExit and GoStart at its end.
 * Then a GoPreempt with the call's stack and a GoStart at the same
 * instant: Go 1.22+ ends a syscall's span in -pprof=syscall only at a
 * transition that carries a stack, and GoSysExit has none (golang/go#74850;
 * docs/trace.md). Room for six events was made. */
static void syscall_blocked(trec_t *r, uint64_t stk, int64_t t0, int64_t t1)
{
    uint64_t a[3] = {stk};
    tracebuf_put_event(r->buf, EV_GO_SYSCALL, t0, a, 1);
    tracebuf_put_event(r->buf, EV_GO_SYSBLOCK, t0, NULL, 0);
    a[0] = r->goid;
    a[1] = r->seq++;
    a[2] = 0; /* the exit's own timestamp: the event's */
    tracebuf_put_event(r->buf, EV_GO_SYSEXIT, t1, a, 3);
    a[1] = r->seq++;
    tracebuf_put_event(r->buf, EV_GO_START, t1, a, 2);
    a[0] = stk;
    tracebuf_put_event(r->buf, EV_GO_PREEMPT, t1, a, 1);
    a[0] = r->goid;
    a[1] = r->seq++;
    tracebuf_put_event(r->buf, EV_GO_START, t1, a, 2);
}

void trace_waited(int kind, int64_t from, int64_t to, const uintptr_t *pcs, int depth)
{
    /* A signal handler's call that interrupted this thread's own write
     * (its busy flag up): the batch is half written, leave it alone. */
    const trec_t *m = tracebuf_mine();
    if (m && __atomic_load_n(&m->busy, __ATOMIC_RELAXED))
        return;
    trec_t *r = enter();
    if (!r)
        return;
    if (from < t0)
        from = t0;
    /* A signal handler's calls recorded during this call came later than
     * its start: the thread's events stay in time order. */
    if (r->buf && from <= r->buf->last)
        from = r->buf->last + 1;
    if (to < from)
        to = from;
    if (!my_internal && begin(r, from, pcs, depth) && tracebuf_room(r, 6 * EV_MAX, from)) {
        uint64_t stk = tracebuf_stack(pcs, depth);
        if (kind == TRACE_SYSCALL) {
            tracebuf_put_event(r->buf, EV_GO_SYSCALL, from, &stk, 1);
        } else if (kind == TRACE_SYSCALL_BLOCK) {
            syscall_blocked(r, stk, from, to);
        } else {
            tracebuf_put_event(r->buf, (uint8_t)kind, from, &stk, 1);
            r->wait_stk = stk;
            wake(r, to);
        }
    }
    tracebuf_leave(r);
}

/* The goroutine of a thread that the CPU profile's signal found outside
 * the trace (one that only computes): it joins the trace now, running on
 * a P of its own, in a record the calling (drain) thread writes and the
 * thread adopts at its first event. Its name is its outermost frame, as
 * for the threads that existed before the trace. A thread whose first
 * event came after the signal (or that ended) has its record already:
 * the sample is its goroutine's if that ran before the sample (the
 * parser takes a sample of a goroutine not yet created for its
 * creation). P << 32 | goroutine, or 0 when none. */
static uint64_t join_seen(int32_t tid, const uintptr_t *pcs, int depth, int64_t ts)
{
    trec_t *p = tracebuf_proxy_find(tid);
    if (!p && !(p = tracebuf_claimed(tid))) {
        if (!(p = tracebuf_proxy_new(ts)))
            return 0;
        if (!begin_as(p, ts, pcs, depth, tid, 0, false)) {
            tracebuf_proxy_drop(p);
            return 0;
        }
        p = tracebuf_proxy_publish(p, tid);
    }
    uint8_t state = __atomic_load_n(&p->state, __ATOMIC_RELAXED);
    if (state == G_NONE || __atomic_load_n(&p->gen, __ATOMIC_RELAXED) != tracebuf_gen() ||
        __atomic_load_n(&p->born, __ATOMIC_RELAXED) > ts)
        return 0;
    return (uint64_t)p->p << 32 | (uint32_t)__atomic_load_n(&p->goid, __ATOMIC_RELAXED);
}

void trace_cpu_sample(int64_t ts_ns, uint64_t thread, const uintptr_t *pcs, int depth)
{
    trec_t *r = tracebuf_enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    /* It runs from just before the sample (its three events after the
     * batch's tick): the parser takes a sample of a goroutine not yet
     * created (at the same tick) for its creation. */
    if (ts_ns >= t0 && (thread & TRACE_THREAD_UNSEEN))
        thread = join_seen((int32_t)(uint32_t)thread, pcs, depth, ts_ns - 4);
    if (ts_ns >= t0 && tracebuf_room(r, EV_MAX, ts)) {
        /* [timestamp, real timestamp, P (-1: none), goroutine, stack] */
        uint64_t goid = (uint32_t)thread;
        uint64_t a[4] = {(uint64_t)ts_ns, goid ? thread >> 32 : UINT64_MAX, goid,
                         tracebuf_stack(pcs, depth)};
        tracebuf_put_event(r->buf, EV_CPU_SAMPLE, ts, a, 4);
    }
    tracebuf_leave(r);
}

void trace_cpu_drained(int64_t t)
{
    tracebuf_drained(t);
}

uint64_t trace_thread_sigsafe(void)
{
    const trec_t *r = tracebuf_running_sigsafe();
    if (r)
        return (uint64_t)r->p << 32 | (uint32_t)r->goid;
    /* A thread past its exit hook (its goroutine ended) whose timer still
     * fired: not a thread to join the trace anew. */
    return my_internal || my_gone ? 0 : TRACE_THREAD_UNSEEN | (uint32_t)gettid();
}

/* --- threads (threadhook.h) ------------------------------------------------------------- */

/* In the creating thread: GoCreate for the new thread, on the creator's P.
 * The cookie carries the session and goroutine, or is NULL when the
 * creation was not recorded (the thread then creates itself). */
static void *on_create(bool internal)
{
    if (internal || !trace_on())
        return NULL;
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth = unwind_capture(pcs);
    trec_t *r = enter();
    if (!r)
        return NULL;
    void *cookie = NULL;
    int64_t ts = rt_now_ns();
    if (!my_internal && begin(r, ts, pcs, depth) && tracebuf_room(r, EV_MAX, ts)) {
        uint64_t id = __atomic_add_fetch(&next_goid, 1, __ATOMIC_RELAXED);
        uintptr_t pc = threadhook_routine() + 1;
        uint64_t a[3] = {id, tracebuf_stack(&pc, 1), tracebuf_stack(pcs, depth)};
        tracebuf_put_event(r->buf, EV_GO_CREATE, ts, a, 3);
        cookie = (void *)(uintptr_t)((uint64_t)r->gen << 32 | id);
    }
    tracebuf_leave(r);
    return cookie;
}

static void on_start(void *cookie, bool internal)
{
    my_internal = internal;
    my_start_pc = threadhook_routine();
    if (!cookie || internal)
        return;
    trec_t *r = tracebuf_enter();
    if (!r)
        return;
    uint64_t c = (uint64_t)(uintptr_t)cookie;
    int64_t ts = rt_now_ns();
    if ((uint32_t)(c >> 32) != r->gen) {
        /* the creation was in another trace: the thread creates itself */
    } else if (r->state == G_NONE) {
        r->goid = (uint32_t)c;
        r->seq = 1;
        r->state = G_CREATED;
        begin(r, ts, NULL, 0);
    } else if (begin(r, ts, NULL, 0) && tracebuf_room(r, 2 * EV_MAX, ts)) {
        /* A signal handler's event made the thread a goroutine of its own
         * before its start routine ran: that one ends here, and the one
         * its creator made starts on the same P (a second ProcStart
         * would be refused). */
        tracebuf_put_event(r->buf, EV_GO_END, ts, NULL, 0);
        r->born = r->buf->last;
        r->goid = (uint32_t)c;
        r->seq = 1;
        uint64_t a[2] = {r->goid, r->seq++};
        tracebuf_put_event(r->buf, EV_GO_START, ts, a, 2);
        r->state = G_RUNNING;
    }
    tracebuf_leave(r);
}

static void on_exit_(void *cookie, bool internal)
{
    (void)cookie;
    (void)internal;
    my_gone = 1;
    /* A thread with no record may still have a goroutine: one made for it
     * (join_running, join_seen), which its end adopts. Else its end makes
     * one, and its claim keeps the drain from making a goroutine for it
     * from a sample taken before its end. */
    if (!tracebuf_mine() && !trace_on())
        return;
    bool open = false;
    trec_t *w = tracebuf_enter();
    if (w) {
        int64_t ts = rt_now_ns();
        if ((w->state == G_RUNNING || w->state == G_WAITING) && begin(w, ts, NULL, 0) &&
            tracebuf_room(w, 2 * EV_MAX, ts)) {
            tracebuf_put_event(w->buf, EV_GO_END, ts, NULL, 0);
            tracebuf_put_event(w->buf, EV_PROC_STOP, ts, NULL, 0);
            w->state = G_NONE;
        }
        tracebuf_flush(w);
        /* Its end could not be written (no buffer left): the record keeps
         * this trace's state and is never given to another thread, so the
         * trace's end closes its P (tracewriter.h) and no new thread starts
         * on a P the reader thinks is running. One record lost per such
         * exit. */
        open = w->state == G_RUNNING || w->state == G_WAITING;
        if (!open)
            w->gen = 0;
        tracebuf_leave(w);
    }
    tracebuf_release_self(open);
}

static const threadhook_client_t client = {
    .on_create = on_create,
    .on_start = on_start,
    .on_exit = on_exit_,
};

/* --- user annotations (cprof.h) -------------------------------------------------------- */

/* A user event with a stack of the caller; str (a log message) follows the
 * arguments as Go's EvUserLog has it. */
static bool user_event(uint8_t type, uint64_t *a, int n, const char *str)
{
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    uint32_t g = rt_guard_enter();
    int depth = unwind_capture(pcs);
    size_t slen = str ? strnlen(str, STR_MAX) : 0;
    bool ok = false;
    trec_t *r = enter();
    if (r) {
        int64_t ts = rt_now_ns();
        if (!my_internal && begin(r, ts, pcs, depth) &&
            tracebuf_room(r, EV_MAX + (uint32_t)slen + 10, ts)) {
            a[n] = tracebuf_stack(pcs, depth);
            tracebuf_put_event(r->buf, type, ts, a, n + 1);
            if (type == EV_USER_LOG) {
                tbuf_t *b = r->buf;
                uint8_t *p = tracebuf_put_uv(b->data + b->len, slen);
                memcpy(p, str, slen);
                b->len = (uint32_t)(p + slen - b->data);
            }
            ok = true;
        }
        tracebuf_leave(r);
    }
    rt_guard_leave(g);
    return ok;
}

RT_EXPORT uint64_t cprof_trace_task_begin(uint64_t parent, const char *name)
{
    if (!trace_on())
        return 0;
    uint64_t id = __atomic_add_fetch(&next_task, 1, __ATOMIC_RELAXED);
    uint64_t a[4] = {id, parent, name ? tracebuf_string(name, strlen(name)) : 0};
    user_event(EV_USER_TASK_CREATE, a, 3, NULL);
    return id;
}

RT_EXPORT int cprof_trace_task_end(uint64_t task)
{
    if (!trace_on())
        return -ENOTCONN;
    uint64_t a[2] = {task};
    user_event(EV_USER_TASK_END, a, 1, NULL);
    return 0;
}

/* Regions nest per thread; an end whose begin was dropped is dropped too,
 * so the parser never sees an end that does not match the innermost
 * begin. */
static int region(uint64_t task, const char *name, uint64_t mode)
{
    uint64_t a[4] = {task, mode, name ? tracebuf_string(name, strlen(name)) : 0};
    trec_t *r = tracebuf_self();
    if (!r)
        return -ENOMEM;
    if (mode == 0) {
        bool ok = user_event(EV_USER_REGION, a, 3, NULL);
        r->rmask = r->rmask << 1 | ok;
        r->rdepth++;
    } else if (r->rdepth > 0) {
        bool wrote_begin = r->rmask & 1;
        r->rmask >>= 1;
        r->rdepth--;
        if (wrote_begin)
            user_event(EV_USER_REGION, a, 3, NULL);
    } else {
        user_event(EV_USER_REGION, a, 3, NULL); /* begun before the trace */
    }
    return 0;
}

RT_EXPORT int cprof_trace_region_begin(uint64_t task, const char *name)
{
    if (!trace_on())
        return -ENOTCONN;
    int rc = region(task, name, 0);
    /* Go's trace has no labels: a region begun under labels logs them
     * (docs/labels.md). */
    char text[1024];
    if (rc == 0 && labels_format(labels_now(), text, sizeof(text)) > 0)
        cprof_trace_log(task, "cprof.labels", text);
    return rc;
}

RT_EXPORT int cprof_trace_region_end(uint64_t task, const char *name)
{
    if (!trace_on())
        return -ENOTCONN;
    return region(task, name, 1);
}

RT_EXPORT int cprof_trace_log(uint64_t task, const char *category, const char *message)
{
    if (!trace_on())
        return -ENOTCONN;
    uint64_t a[3] = {task, category ? tracebuf_string(category, strlen(category)) : 0};
    user_event(EV_USER_LOG, a, 2, message ? message : "");
    return 0;
}

/* --- sessions ------------------------------------------------------------------------------- */

/* The program's threads running at the trace's start, but the caller
 * (it joins at its first event) and cprof's own: each joins the trace now,
 * in a record made for it (adopted at its first event, as join_seen's),
 * running if /proc says it runs, else waiting (GoWaiting), so that a
 * thread that only computes is on the timeline. Before trace_active is
 * raised: no thread has an event of this trace yet. Its goroutine is
 * named by address 0: another thread's stack is not taken. */
static void join_running(int64_t ts)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    int32_t self = (int32_t)gettid();
    struct dirent *e;
    while ((e = readdir(d))) {
        int32_t tid = (int32_t)atoi(e->d_name);
        if (tid <= 0 || tid == self || threadhook_internal_tid(tid))
            continue;
        char path[64], st[256];
        snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            continue;
        st[n] = '\0';
        const char *paren = strrchr(st, ')'); /* the name may hold anything */
        char state = paren && paren[1] == ' ' ? paren[2] : 'Z';
        if (state == 'Z' || state == 'X')
            continue;
        trec_t *p = tracebuf_proxy_new(ts);
        if (!p)
            break;
        if (!begin_as(p, ts, NULL, 0, tid, 0, state != 'R')) {
            tracebuf_proxy_drop(p);
            break;
        }
        tracebuf_proxy_publish(p, tid); /* no thread writes yet: offered */
    }
    closedir(d);
}

/* The trace's start (session.h): the pool, the header, the writer. */
static int start_locked(session_t *s)
{
    int rc = tracebuf_open(pool_bytes);
    if (rc < 0)
        return rc;
    if ((rc = tracewriter_header(s)) < 0)
        return rc;
    __atomic_store_n(&next_goid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_task, 0, __ATOMIC_RELAXED);
    tracebuf_begin();
    t0 = rt_now_ns();
    join_running(t0);
    __atomic_store_n(&trace_active, 1, __ATOMIC_SEQ_CST);
    lockprof_watch_trace(true);
    if ((rc = tracewriter_start()) < 0) {
        lockprof_watch_trace(false);
        __atomic_store_n(&trace_active, 0, __ATOMIC_SEQ_CST);
        return rc;
    }
    return 0;
}

/* A start that failed because the buffers do not fit under cprof's memory
 * limit says so, with the numbers and what to change: CPROF_TRACE_BUFFER=1G
 * never fits under the default limit, and "Cannot allocate memory" alone
 * sends the user looking at the machine. NULL for any other failure. */
static const char *explain(int rc)
{
    static char why[320]; /* session_start_env's, from one thread at a time */
    uint64_t used = arena_bytes(), limit = arena_limit();
    if (rc != -ENOMEM || tracebuf_mapped() || used + pool_bytes <= limit)
        return NULL;
    snprintf(why, sizeof(why),
             "its buffers (CPROF_TRACE_BUFFER, %lluM) do not fit under cprof's memory limit "
             "(CPROF_MEMORY_LIMIT, %lluM, of which %lluM in use): raise CPROF_MEMORY_LIMIT or "
             "lower CPROF_TRACE_BUFFER",
             (unsigned long long)((pool_bytes + (1 << 20) - 1) >> 20),
             (unsigned long long)(limit >> 20), (unsigned long long)((used + (1 << 20) - 1) >> 20));
    return why;
}

/* The trace's end (session.h): every thread out of its writes, then the
 * writer's last batches and the rest of the trace. */
static int stop_locked(session_t *s, bool discard)
{
    (void)s;
    (void)discard; /* the file is removed then; a descriptor is the caller's */
    lockprof_watch_trace(false);
    __atomic_store_n(&trace_active, 0, __ATOMIC_SEQ_CST);
    tracebuf_quiesce();
    int rc = tracewriter_finish();
    tracebuf_proxies_free();
    return rc;
}

/* --- fork ------------------------------------------------------------------------------------ */

static void fork_child(void)
{
    /* No writer thread here, and the other threads' records are stale:
     * the child does not trace, and leaves the parent's file alone. */
    trace_active = 0;
    lockprof_watch_trace(false);
    session_fork_child(&session_trace);
    tracebuf_fork_child();
}

/* --- entry points ---------------------------------------------------------------------------- */

int trace_init(uint64_t bytes)
{
    pool_bytes = bytes;
    syshooks_init();
    int rc = threadhook_register(&client);
    if (rc < 0)
        return rc;
    pthread_atfork(tracebuf_fork_prepare, tracebuf_fork_parent, fork_child);
    session_bind(&session_trace, start_locked, stop_locked, explain);
    return 0;
}
