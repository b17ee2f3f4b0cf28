/* trace.c — execution trace sessions, per-thread buffers, the writer thread,
 * the Go 1.19 encoding and the public trace API (see trace.h).
 *
 * Encoding (Go's traceEventLocked): an event is one byte of type | nargs<<6
 * (nargs counts the arguments after the timestamp, stack included; 3 means
 * "a length byte follows"), the timestamp as the difference to the
 * previous event of the batch, then the arguments, the stack id last;
 * numbers are LEB128 varints. Timestamps are CLOCK_MONOTONIC nanoseconds
 * (the frequency event says 1e9 ticks per second). A buffer is one batch:
 * EvBatch [P, timestamp] then its events, all of one thread. */
#include "trace.h"

#include "arena.h"
#include "base/fdio.h"
#include "base/hash.h"
#include "counters.h"
#include "cprof.h"
#include "labels.h"
#include "lockprof.h"
#include "session.h"
#include "sitetab.h"
#include "symtab.h"
#include "threadhook.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Go's event types (runtime/trace.go). */
enum {
    EV_BATCH = 1, EV_FREQUENCY = 2, EV_STACK = 3, EV_PROC_START = 5, EV_PROC_STOP = 6,
    EV_GO_CREATE = 13, EV_GO_START = 14, EV_GO_END = 15, EV_GO_PREEMPT = 18, EV_GO_UNBLOCK = 21,
    EV_HEAP_ALLOC = 33, EV_STRING = 37, EV_USER_TASK_CREATE = 45, EV_USER_TASK_END = 46,
    EV_USER_REGION = 47, EV_USER_LOG = 48, EV_CPU_SAMPLE = 49,
};

#define BUF_BYTES (16u << 10)     /* one batch */
#define EV_MAX 80                 /* the largest event but a log message */
#define STR_MAX 1024              /* longer strings are cut */
#define STRINGS_CAP 4096          /* distinct strings (names, log keys) */
#define STACKS_MAX (1u << 16)     /* distinct stacks */
#define WRITER_PERIOD_MS 10       /* also the HeapAlloc rate limit */
#define QUIESCE_NS 2000000000LL   /* a thread stuck in a write is given up */
#define FINISH_MS 5000            /* the end of a trace waits this long for its reader */

/* --- buffers ---------------------------------------------------------------- */

typedef struct tbuf {
    struct tbuf *next;
    uint32_t len;
    int64_t last;   /* timestamp of the batch's last event */
    uint8_t data[BUF_BYTES - 24];
} tbuf_t;

static tbuf_t *pool;           /* npool buffers, mapped at first start */
static uint32_t npool;
static uint64_t pool_bytes = 16u << 20; /* the trace's memory budget */
static tbuf_t *free_list;      /* under pool_lock */
static tbuf_t *full_head, *full_tail;
static uint32_t nfree;
static rt_lock_t pool_lock = RT_LOCK_INIT;

/* --- per-thread records ------------------------------------------------------ */

enum { G_NONE, G_CREATED, G_RUNNING, G_WAITING };

typedef struct trec {
    int busy;              /* inside a write (see stop) */
    bool stuck;            /* still busy when a trace stopped (see quiesce) */
    uint32_t gen;          /* the session the fields below belong to */
    uint64_t goid;         /* its goroutine there, 0 none */
    uint64_t seq;          /* Go's traceseq of that goroutine */
    uint32_t p;            /* its processor: the record's number */
    uint8_t state;         /* G_* */
    uint32_t rdepth;       /* open user regions, and which of the */
    uint64_t rmask;        /*   innermost 64 were written (bit 0) */
    tbuf_t *buf;           /* current batch, or NULL */
    struct trec *next_all; /* every record, newest first */
    struct trec *next_free;
} trec_t;

static __thread trec_t *me __attribute__((tls_model("initial-exec")));
/* Known from the thread's start (threadhook), before any trace: */
static __thread uintptr_t my_start_pc __attribute__((tls_model("initial-exec")));
static __thread uint8_t my_internal __attribute__((tls_model("initial-exec")));
static trec_t *all_recs;       /* published with release */
static trec_t *free_recs;      /* under pool_lock */
static uint32_t nrecs;

/* --- session ------------------------------------------------------------------ */

static int start_locked(session_t *s);
static int stop_locked(session_t *s, bool discard);

static const char *explain(int rc);
static session_t sess = {.what = "trace", .env = "CPROF_TRACE", .start = start_locked,
                         .stop = stop_locked, .explain = explain};
int trace_active;
static uint32_t gen;              /* the running session's number */
static uint64_t next_goid, next_task, next_stack;
static uint64_t dropped;          /* events not recorded: no free buffer */
static bool inited;
static sitetab_t stacks = SITETAB_INIT(STACKS_MAX);
static struct {
    int64_t t0;
    int rc;                       /* first write error */
    int64_t finish_by;            /* ms (fdio_now_ms): writes give up then; 0 while tracing */
    pthread_t writer;
} run;
static int writer_stop, writer_wake;

/* --- strings: interned for the whole process, ids for every trace --------------- */

typedef struct {
    const char *s; /* copy in the arena; NULL: empty slot */
    uint64_t hash;
    uint32_t len, id;
} tstr_t;

static tstr_t *strs;       /* STRINGS_CAP slots, mapped at first start */
static uint32_t nstrs;     /* ids given: 1..nstrs */
static rt_lock_t str_lock = RT_LOCK_INIT;

/* The id of s (first n bytes, cut at STR_MAX), made if new: lock-free when
 * known. 0 for the empty string, or when the table is full. */
static uint64_t str_id(const char *s, size_t n)
{
    if (n == 0 || !strs)
        return 0;
    if (n > STR_MAX)
        n = STR_MAX;
    uint64_t h = hash_fnv1a(s, n);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = h & (STRINGS_CAP - 1), k = 0; k < STRINGS_CAP;
             i = (i + 1) & (STRINGS_CAP - 1), k++) {
            const char *e = __atomic_load_n(&strs[i].s, __ATOMIC_ACQUIRE);
            if (!e)
                break;
            if (strs[i].hash == h && strs[i].len == n && memcmp(e, s, n) == 0)
                return strs[i].id;
        }
        if (pass)
            return 0;
        /* Not found: insert under the lock, after looking again there. */
        rt_lock(&str_lock);
        uint32_t i = h & (STRINGS_CAP - 1), k = 0;
        for (; k < STRINGS_CAP && strs[i].s; i = (i + 1) & (STRINGS_CAP - 1), k++)
            if (strs[i].hash == h && strs[i].len == n && memcmp(strs[i].s, s, n) == 0)
                break;
        uint64_t id = 0;
        if (k < STRINGS_CAP && strs[i].s) {
            id = strs[i].id;
        } else if (k < STRINGS_CAP && nstrs + 1 < STRINGS_CAP * 3 / 4) {
            char *copy = arena_alloc(n + 1);
            if (copy) {
                memcpy(copy, s, n);
                strs[i].hash = h;
                strs[i].len = (uint32_t)n;
                strs[i].id = ++nstrs;
                id = strs[i].id;
                __atomic_store_n(&strs[i].s, copy, __ATOMIC_RELEASE);
            }
        }
        rt_unlock(&str_lock);
        return id;
    }
    return 0;
}

/* --- stacks --------------------------------------------------------------------- */

/* The trace's id of a stack: the entry's v[0] holds (session << 32 | id)
 * once the stack was used in that session. 0 for no stack. */
static uint64_t stack_id(const uintptr_t *pcs, int depth)
{
    if (depth <= 0)
        return 0;
    site_t *e = sitetab_intern(&stacks, pcs, depth);
    if (!e)
        return 0;
    int64_t cur = __atomic_load_n(&e->v[0], __ATOMIC_ACQUIRE);
    if ((uint64_t)cur >> 32 == gen)
        return (uint32_t)cur;
    int64_t want = (int64_t)((uint64_t)gen << 32 |
                             (__atomic_add_fetch(&next_stack, 1, __ATOMIC_RELAXED) & 0xffffffff));
    if (__atomic_compare_exchange_n(&e->v[0], &cur, want, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return (uint32_t)want;
    return (uint32_t)cur;
}

/* --- encoding ---------------------------------------------------------------------- */

static uint8_t *put_uv(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(0x80 | v);
    *p++ = (uint8_t)v;
    return p;
}

/* One event at the end of b (room checked by the caller): args[0..n) after
 * the timestamp, the stack id among them, last, when the type has one. */
static void put_ev(tbuf_t *b, uint8_t type, int64_t ts, const uint64_t *args, int n)
{
    if (ts <= b->last)
        ts = b->last + 1; /* as Go: no two events of a batch at one tick */
    uint64_t diff = (uint64_t)(ts - b->last);
    b->last = ts;
    uint8_t *p = b->data + b->len;
    *p++ = (uint8_t)(type | (n < 3 ? n : 3) << 6);
    uint8_t *lenp = NULL;
    if (n >= 3)
        lenp = p++; /* the length of what follows, < 128 */
    uint8_t *start = p;
    p = put_uv(p, diff);
    for (int i = 0; i < n; i++)
        p = put_uv(p, args[i]);
    if (lenp)
        *lenp = (uint8_t)(p - start);
    b->len = (uint32_t)(p - b->data);
}

/* --- buffers of the calling thread --------------------------------------------------- */

static void queue_full_locked(tbuf_t *b)
{
    b->next = NULL;
    if (full_tail)
        full_tail->next = b;
    else
        full_head = b;
    full_tail = b;
}

/* Room for `need` bytes in r's batch: the full one is queued for the
 * writer, a fresh one begins a batch of P r->p. False when the pool is
 * empty (the caller drops its events). */
static bool room(trec_t *r, uint32_t need, int64_t ts)
{
    tbuf_t *b = r->buf;
    if (b && b->len + need <= sizeof(b->data))
        return true;
    rt_lock(&pool_lock);
    if (b)
        queue_full_locked(b);
    b = free_list;
    if (b) {
        free_list = b->next;
        nfree--;
    }
    bool wake = nfree < npool / 2;
    rt_unlock(&pool_lock);
    if (wake) {
        __atomic_add_fetch(&writer_wake, 1, __ATOMIC_RELEASE);
        rt_futex_wake(&writer_wake, INT32_MAX);
    }
    r->buf = b;
    if (!b) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        return false;
    }
    b->len = 0;
    b->last = ts - 1;
    uint8_t *p = b->data;
    *p++ = EV_BATCH | 1 << 6;
    p = put_uv(p, r->p);
    p = put_uv(p, (uint64_t)ts);
    b->len = (uint32_t)(p - b->data);
    b->last = ts;
    return true;
}

/* The calling thread's record, made on its first event. */
static trec_t *self(void)
{
    trec_t *r = me;
    if (RT_LIKELY(r != NULL))
        return r;
    rt_lock(&pool_lock);
    r = free_recs;
    if (r)
        free_recs = r->next_free;
    rt_unlock(&pool_lock);
    if (!r) {
        r = arena_alloc(sizeof(*r));
        if (!r)
            return NULL;
        r->p = __atomic_fetch_add(&nrecs, 1, __ATOMIC_RELAXED);
        rt_lock(&pool_lock);
        r->next_all = all_recs;
        __atomic_store_n(&all_recs, r, __ATOMIC_RELEASE);
        rt_unlock(&pool_lock);
    }
    r->gen = 0;
    r->state = G_NONE;
    me = r;
    return r;
}

/* Enters a write: false (and nothing to undo) when no trace runs. The
 * busy flag is raised before active is read again, and stop clears active
 * before it reads the flags: one of the two sees the other. */
static trec_t *enter(void)
{
    trec_t *r = self();
    if (!r)
        return NULL;
    __atomic_exchange_n(&r->busy, 1, __ATOMIC_SEQ_CST); /* a full barrier, cheaper than a fence */
    if (!__atomic_load_n(&trace_active, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
        return NULL;
    }
    uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    if (r->gen != g) { /* first event of this thread in this trace */
        r->gen = g;
        r->goid = 0;
        r->state = G_NONE;
        r->buf = NULL; /* the pool was refilled at the start */
        r->rdepth = 0;
        r->rmask = 0;
    }
    return r;
}

static void leave(trec_t *r)
{
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

/* The wait of r's goroutine ended: GoUnblock on its own P (the waker is
 * not known), GoStart. Room for two events was made. */
static void wake(trec_t *r, int64_t ts)
{
    uint64_t a[3] = {r->goid, r->seq++, 0};
    put_ev(r->buf, EV_GO_UNBLOCK, ts, a, 3);
    a[1] = r->seq++;
    put_ev(r->buf, EV_GO_START, ts, a, 2);
    r->state = G_RUNNING;
}

/* Makes r's goroutine run: a thread new to the trace (G_NONE, G_CREATED)
 * gets ProcStart, GoCreate on its own P unless its creator wrote one, and
 * GoStart; one whose unblock was dropped (G_WAITING) is woken now. root: a
 * stack of the thread, whose outermost frame names the goroutine when its
 * start routine is unknown. False when dropped. */
static bool begin(trec_t *r, int64_t ts, const uintptr_t *root, int depth)
{
    if (r->state == G_RUNNING)
        return true;
    if (!room(r, 3 * EV_MAX, ts))
        return false;
    if (r->state == G_WAITING) {
        wake(r, ts);
        return true;
    }
    uint64_t a[3] = {(uint64_t)gettid()};
    put_ev(r->buf, EV_PROC_START, ts, a, 1);
    if (r->state == G_NONE) {
        r->goid = __atomic_add_fetch(&next_goid, 1, __ATOMIC_RELAXED);
        /* go tool trace names a goroutine by this stack's frame: never
         * none (1 names address 0). */
        uintptr_t pc = my_start_pc ? my_start_pc + 1 : depth > 0 ? root[depth - 1] : 1;
        a[0] = r->goid;
        a[1] = stack_id(&pc, 1);
        a[2] = 0;
        put_ev(r->buf, EV_GO_CREATE, ts, a, 3);
        r->seq = 1;
    }
    a[0] = r->goid;
    a[1] = r->seq++;
    put_ev(r->buf, EV_GO_START, ts, a, 2);
    r->state = G_RUNNING;
    return true;
}

/* --- hooks' entry points ------------------------------------------------------------------ */

bool trace_block(int kind, const uintptr_t *pcs, int depth)
{
    trec_t *r = enter();
    if (!r)
        return false;
    bool ok = false;
    int64_t ts = rt_now_ns();
    if (!my_internal && begin(r, ts, pcs, depth) && room(r, EV_MAX, ts)) {
        uint64_t a[1] = {stack_id(pcs, depth)};
        put_ev(r->buf, (uint8_t)kind, ts, a, 1);
        r->state = G_WAITING;
        ok = true;
    }
    leave(r);
    return ok;
}

void trace_unblock(void)
{
    trec_t *r = enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    if (r->state == G_WAITING && room(r, 2 * EV_MAX, ts))
        wake(r, ts); /* if dropped, the thread's next event wakes it */
    leave(r);
}

void trace_cpu_sample(int64_t ts_ns, uint64_t thread, const uintptr_t *pcs, int depth)
{
    trec_t *r = enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    if (ts_ns >= run.t0 && room(r, EV_MAX, ts)) {
        /* [timestamp, real timestamp, P (-1: none), goroutine, stack] */
        uint64_t goid = (uint32_t)thread;
        uint64_t a[4] = {(uint64_t)ts_ns, goid ? thread >> 32 : UINT64_MAX, goid,
                         stack_id(pcs, depth)};
        put_ev(r->buf, EV_CPU_SAMPLE, ts, a, 4);
    }
    leave(r);
}

uint64_t trace_thread_sigsafe(void)
{
    trec_t *r = me;
    if (!r || !__atomic_load_n(&trace_active, __ATOMIC_RELAXED) || r->gen != gen ||
        r->state == G_NONE)
        return 0;
    return (uint64_t)r->p << 32 | (uint32_t)r->goid;
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
    if (!my_internal && begin(r, ts, pcs, depth) && room(r, EV_MAX, ts)) {
        uint64_t id = __atomic_add_fetch(&next_goid, 1, __ATOMIC_RELAXED);
        uintptr_t pc = threadhook_routine() + 1;
        uint64_t a[3] = {id, stack_id(&pc, 1), stack_id(pcs, depth)};
        put_ev(r->buf, EV_GO_CREATE, ts, a, 3);
        cookie = (void *)(uintptr_t)((uint64_t)r->gen << 32 | id);
    }
    leave(r);
    return cookie;
}

static void on_start(void *cookie, bool internal)
{
    my_internal = internal;
    my_start_pc = threadhook_routine();
    if (!cookie || internal)
        return;
    trec_t *r = enter();
    if (!r)
        return;
    uint64_t c = (uint64_t)(uintptr_t)cookie;
    if ((uint32_t)(c >> 32) == r->gen) {
        r->goid = (uint32_t)c;
        r->seq = 1;
        r->state = G_CREATED;
        begin(r, rt_now_ns(), NULL, 0);
    }
    leave(r);
}

static void on_exit_(void *cookie, bool internal)
{
    (void)cookie;
    (void)internal;
    trec_t *r = me;
    if (!r)
        return;
    bool open = false;
    trec_t *w = enter();
    if (w) {
        int64_t ts = rt_now_ns();
        if ((w->state == G_RUNNING || w->state == G_WAITING) && begin(w, ts, NULL, 0) &&
            room(w, 2 * EV_MAX, ts)) {
            put_ev(w->buf, EV_GO_END, ts, NULL, 0);
            put_ev(w->buf, EV_PROC_STOP, ts, NULL, 0);
            w->state = G_NONE;
        }
        /* Its batch goes to the writer now: the record may serve another
         * thread, whose batches must come later in the file. */
        if (w->buf) {
            rt_lock(&pool_lock);
            queue_full_locked(w->buf);
            rt_unlock(&pool_lock);
            w->buf = NULL;
        }
        /* Its end could not be written (no buffer left): the record keeps
         * this trace's state and is never given to another thread, so the
         * trace's end closes its P (write_ends) and no new thread starts on
         * a P the reader thinks is running. One record lost per such exit. */
        open = w->state == G_RUNNING || w->state == G_WAITING;
        if (!open)
            w->gen = 0;
        leave(w);
    }
    me = NULL;
    if (open)
        return;
    rt_lock(&pool_lock);
    r->next_free = free_recs;
    free_recs = r;
    rt_unlock(&pool_lock);
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
            room(r, EV_MAX + (uint32_t)slen + 10, ts)) {
            a[n] = stack_id(pcs, depth);
            put_ev(r->buf, type, ts, a, n + 1);
            if (type == EV_USER_LOG) {
                tbuf_t *b = r->buf;
                uint8_t *p = put_uv(b->data + b->len, slen);
                memcpy(p, str, slen);
                b->len = (uint32_t)(p + slen - b->data);
            }
            ok = true;
        }
        leave(r);
    }
    rt_guard_leave(g);
    return ok;
}

RT_EXPORT uint64_t cprof_trace_task_begin(uint64_t parent, const char *name)
{
    if (!trace_on())
        return 0;
    uint64_t id = __atomic_add_fetch(&next_task, 1, __ATOMIC_RELAXED);
    uint64_t a[4] = {id, parent, name ? str_id(name, strlen(name)) : 0};
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
    uint64_t a[4] = {task, mode, name ? str_id(name, strlen(name)) : 0};
    trec_t *r = self();
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
    uint64_t a[3] = {task, category ? str_id(category, strlen(category)) : 0};
    user_event(EV_USER_LOG, a, 2, message ? message : "");
    return 0;
}

/* --- the writer thread -------------------------------------------------------------------- */

/* While tracing, a reader that does not keep up only makes the threads'
 * events drop (the pool runs out) while the writer waits for it; once the
 * trace is ending (finish_by is set), the writer and the end's own writes
 * give up at finish_by, so that a stalled reader cannot hang the program's
 * stop or exit (the descriptor is non-blocking: outfile.h). */
static void write_all(const void *p, size_t n)
{
    const uint8_t *c = p;
    int fd = session_fd(&sess); /* the program may have closed it */
    if (fd < 0 && run.rc == 0)
        run.rc = fd;
    while (n > 0 && run.rc == 0) {
        int64_t by = __atomic_load_n(&run.finish_by, __ATOMIC_ACQUIRE);
        ssize_t w = fdio_write_some(fd, c, n, by ? by : fdio_now_ms() + 100);
        if (w == -ETIMEDOUT && !by)
            continue; /* tracing: look at finish_by again */
        if (w < 0) {
            run.rc = (int)w;
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}

/* Writes the queued batches and hands their buffers back. */
static void drain_full(void)
{
    rt_lock(&pool_lock);
    tbuf_t *b = full_head;
    full_head = full_tail = NULL;
    rt_unlock(&pool_lock);
    while (b) {
        tbuf_t *next = b->next;
        write_all(b->data, b->len);
        rt_lock(&pool_lock);
        b->next = free_list;
        free_list = b;
        nfree++;
        rt_unlock(&pool_lock);
        b = next;
    }
}

/* The live heap (Go's HeapAlloc) from the exact counters, when it changed. */
static void heap_event(uint64_t *last)
{
    counters_sum_t s;
    counters_sum(&s);
    uint64_t live = counters_live_bytes(&s);
    if (live == *last)
        return;
    trec_t *r = enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    if (room(r, EV_MAX, ts)) {
        put_ev(r->buf, EV_HEAP_ALLOC, ts, &live, 1);
        *last = live;
    }
    leave(r);
}

static void *writer_main(void *arg)
{
    (void)arg;
    rt_self.guard = 1; /* for its whole life */
    self();
    uint64_t last_heap = UINT64_MAX;
    for (;;) {
        bool last = __atomic_load_n(&writer_stop, __ATOMIC_ACQUIRE);
        heap_event(&last_heap);
        drain_full();
        if (last)
            break;
        int w = __atomic_load_n(&writer_wake, __ATOMIC_ACQUIRE);
        rt_futex_wait(&writer_wake, (uint32_t)w, WRITER_PERIOD_MS * 1000000LL);
    }
    return NULL;
}

/* --- the end of a trace: stacks, strings, frequency --------------------------------------- */

typedef struct {
    uint8_t b[64 << 10];
    size_t n;
    tbuf_t scratch[1]; /* a last batch being made */
} out_t;

static void out_flush(out_t *o)
{
    write_all(o->b, o->n);
    o->n = 0;
}

static void out_bytes(out_t *o, const void *p, size_t n)
{
    if (o->n + n > sizeof(o->b))
        out_flush(o);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void out_string(out_t *o, uint64_t id, const char *s, size_t n)
{
    uint8_t hdr[24], *p = hdr;
    *p++ = EV_STRING;
    p = put_uv(p, id);
    p = put_uv(p, n);
    out_bytes(o, hdr, (size_t)(p - hdr));
    out_bytes(o, s, n);
}

/* One frame's function and file names: the function from the symbol
 * tables, the file is the object it lies in (exe: the main program's). */
static void frame_names(symtab_t *st, const char *exe, uintptr_t pc, uint64_t *fn,
                        uint64_t *file)
{
    const char *name = st ? symtab_lookup(st, pc) : NULL;
    char hex[24];
    if (!name) {
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)pc);
        name = hex;
    }
    *fn = str_id(name, strlen(name));
    Dl_info info;
    const char *obj = dladdr((void *)pc, &info) ? info.dli_fname : NULL;
    if (obj && obj[0] != '/') /* the main program, as it was started */
        obj = exe;
    *file = obj ? str_id(obj, strlen(obj)) : 0;
}

static void write_footer(out_t *o)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    symtab_t *st = symtab_build();
    for (site_t *e = sitetab_first(&stacks); e; e = sitetab_next(e)) {
        int64_t v = __atomic_load_n(&e->v[0], __ATOMIC_ACQUIRE);
        if ((uint64_t)v >> 32 != gen)
            continue;
        uint8_t rec[16 + UNWIND_MAX_DEPTH * 40], *p = rec;
        p = put_uv(p, (uint32_t)v);
        p = put_uv(p, e->depth);
        for (uint32_t i = 0; i < e->depth; i++) {
            uintptr_t pc = e->pcs[i] - 1; /* return address -> the call */
            uint64_t fn, file;
            frame_names(st, exe, pc, &fn, &file);
            p = put_uv(p, pc);
            p = put_uv(p, fn);
            p = put_uv(p, file);
            p = put_uv(p, 0);
        }
        uint8_t hdr[12], *h = hdr;
        *h++ = EV_STACK | 3 << 6;
        h = put_uv(h, (uint64_t)(p - rec));
        out_bytes(o, hdr, (size_t)(h - hdr));
        out_bytes(o, rec, (size_t)(p - rec));
    }
    symtab_free(st);
    uint32_t ids = __atomic_load_n(&nstrs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < STRINGS_CAP; i++) {
        const char *s = __atomic_load_n(&strs[i].s, __ATOMIC_ACQUIRE);
        if (s && strs[i].id <= ids)
            out_string(o, strs[i].id, s, strs[i].len);
    }
    uint8_t f[12] = {EV_FREQUENCY}, *p = put_uv(f + 1, 1000000000);
    out_bytes(o, f, (size_t)(p - f));
    out_flush(o);
}

/* A batch of P p in b, begun now: for the last events of a P, written
 * by the stopping thread after every other batch of that P. */
static void end_batch(tbuf_t *b, uint32_t p)
{
    b->last = rt_now_ns();
    uint8_t *q = b->data;
    *q++ = EV_BATCH | 1 << 6;
    q = put_uv(q, p);
    q = put_uv(q, (uint64_t)b->last);
    b->len = (uint32_t)(q - b->data);
}

/* Every thread's goroutine stops running and its P stops, as Go's
 * StopTrace stops the world: go tool trace wants every running span
 * ended. */
static void write_ends(out_t *o)
{
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all) {
        if (r->gen != gen || (r->state != G_RUNNING && r->state != G_WAITING))
            continue;
        tbuf_t *b = o->scratch;
        end_batch(b, r->p);
        uint64_t none = 0;
        if (r->state == G_RUNNING)
            put_ev(b, EV_GO_PREEMPT, b->last + 1, &none, 1);
        put_ev(b, EV_PROC_STOP, b->last + 1, NULL, 0);
        out_bytes(o, b->data, b->len);
    }
}

/* What was dropped, said in the trace: a log message on the stopping
 * thread's P, in a batch of its own after every other. */
static void write_drops(out_t *o, uint32_t p)
{
    uint64_t d = __atomic_load_n(&dropped, __ATOMIC_RELAXED);
    if (!d)
        return;
    char msg[160];
    int len = snprintf(msg, sizeof(msg), "%llu events dropped: the trace outgrew its %llu KiB "
                       "of buffers (CPROF_TRACE_BUFFER)", (unsigned long long)d,
                       (unsigned long long)(npool * sizeof(tbuf_t) >> 10));
    rt_warn("trace: %s", msg);
    tbuf_t *b = o->scratch;
    end_batch(b, p);
    uint64_t a[3] = {0, str_id("cprof", 5), 0};
    put_ev(b, EV_USER_LOG, b->last + 1, a, 3);
    uint8_t *q = put_uv(b->data + b->len, (uint64_t)len);
    memcpy(q, msg, (size_t)len);
    b->len = (uint32_t)(q + len - b->data);
    out_bytes(o, b->data, b->len);
}

/* --- sessions ------------------------------------------------------------------------------- */

/* Waits until no thread is inside a write; active is already clear. A
 * thread still inside one after QUIESCE_NS (stopped by a debugger, say) is
 * marked stuck: its batch is left out of this trace, and no new trace
 * starts while it may still write into a buffer of the pool. */
static void quiesce(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all) {
        int64_t t0 = rt_now_ns();
        while (__atomic_load_n(&r->busy, __ATOMIC_SEQ_CST) && rt_now_ns() - t0 < QUIESCE_NS) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        r->stuck = __atomic_load_n(&r->busy, __ATOMIC_SEQ_CST);
    }
}

/* True while a thread given up by the last stop is still inside a write. */
static bool stuck_writer(void)
{
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all) {
        if (r->stuck && __atomic_load_n(&r->busy, __ATOMIC_SEQ_CST))
            return true;
        r->stuck = false;
    }
    return false;
}

/* The trace's start (session.h): the pool, the header, the writer. */
static int start_locked(session_t *s)
{
    (void)s; /* sess: written through session_fd */
    if (!inited)
        return -ENOTSUP;
    if (stuck_writer())
        return -EBUSY;
    if (!pool) {
        npool = (uint32_t)(pool_bytes / sizeof(tbuf_t));
        if (!(pool = arena_map((size_t)npool * sizeof(tbuf_t))))
            return -ENOMEM;
    }
    if (!strs && !(strs = arena_map(STRINGS_CAP * sizeof(*strs))))
        return -ENOMEM;
    rt_lock(&pool_lock);
    free_list = full_head = full_tail = NULL;
    for (uint32_t i = 0; i < npool; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    nfree = npool;
    rt_unlock(&pool_lock);
    run.rc = 0;
    run.finish_by = fdio_now_ms() + FINISH_MS; /* the header, from the caller's thread */
    write_all("go 1.19 trace\0\0\0", 16);
    if (run.rc < 0)
        return run.rc;
    run.finish_by = 0;
    __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_goid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_task, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_stack, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&writer_stop, 0, __ATOMIC_RELAXED);
    run.t0 = rt_now_ns();
    __atomic_store_n(&trace_active, 1, __ATOMIC_SEQ_CST);
    lockprof_watch_trace(true);
    /* Created guarded (an internal thread) with every signal blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&run.writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        lockprof_watch_trace(false);
        __atomic_store_n(&trace_active, 0, __ATOMIC_SEQ_CST);
        return -rc;
    }
    pthread_setname_np(run.writer, "cprof-trace");
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
    if (rc != -ENOMEM || pool || used + pool_bytes <= limit)
        return NULL;
    snprintf(why, sizeof(why),
             "its buffers (CPROF_TRACE_BUFFER, %lluM) do not fit under cprof's memory limit "
             "(CPROF_MEMORY_LIMIT, %lluM, of which %lluM in use): raise CPROF_MEMORY_LIMIT or "
             "lower CPROF_TRACE_BUFFER",
             (unsigned long long)((pool_bytes + (1 << 20) - 1) >> 20),
             (unsigned long long)(limit >> 20), (unsigned long long)((used + (1 << 20) - 1) >> 20));
    return why;
}

/* The trace's end (session.h): every thread out of its writes, the
 * writer's last batches, then the rest of the trace. */
static int stop_locked(session_t *s, bool discard)
{
    (void)s;
    (void)discard; /* the file is removed then; a descriptor is the caller's */
    lockprof_watch_trace(false);
    __atomic_store_n(&trace_active, 0, __ATOMIC_SEQ_CST);
    quiesce();
    __atomic_store_n(&run.finish_by, fdio_now_ms() + FINISH_MS, __ATOMIC_RELEASE);
    __atomic_store_n(&writer_stop, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&writer_wake, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&writer_wake, INT32_MAX);
    pthread_join(run.writer, NULL);
    /* The batches still being filled, after every queued one of theirs. */
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all)
        if (r->gen == gen && !r->stuck && r->buf && r->buf->len)
            write_all(r->buf->data, r->buf->len);
    out_t *o = malloc(sizeof(*o));
    if (!o) {
        run.rc = -ENOMEM;
    } else {
        o->n = 0;
        trec_t *r = self();
        write_ends(o);
        write_drops(o, r ? r->p : 0);
        write_footer(o);
        free(o);
    }
    return run.rc;
}

/* --- fork ------------------------------------------------------------------------------------ */

/* Lock order: strings, stacks, pool. */
static void fork_prepare(void)
{
    rt_lock(&str_lock);
    sitetab_fork_prepare(&stacks);
    rt_lock(&pool_lock);
}

static void fork_parent(void)
{
    rt_unlock(&pool_lock);
    sitetab_fork_release(&stacks);
    rt_unlock(&str_lock);
}

static void fork_child(void)
{
    /* No writer thread here, and the other threads' records are stale:
     * the child does not trace, and leaves the parent's file alone. */
    trace_active = 0;
    lockprof_watch_trace(false);
    for (trec_t *r = all_recs; r; r = r->next_all) {
        r->busy = 0;
        r->gen = 0;
    }
    session_fork_child(&sess);
    rt_unlock(&pool_lock);
    sitetab_fork_release(&stacks);
    rt_unlock(&str_lock);
}

/* --- entry points ---------------------------------------------------------------------------- */

int trace_init(uint64_t bytes)
{
    pool_bytes = bytes;
    int rc = threadhook_register(&client);
    if (rc < 0)
        return rc;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    inited = true;
    return 0;
}

void trace_start_from_env(const char *pattern)
{
    session_start_env(&sess, pattern);
}

void trace_fini(void)
{
    if (inited)
        session_fini(&sess);
}

int64_t trace_start_fd(int fd)
{
    return session_start_fd(&sess, fd);
}

int trace_stop_session(int64_t id, bool discard)
{
    return session_stop(&sess, id, discard);
}

RT_EXPORT int cprof_trace_start(const char *path)
{
    return session_start_file(&sess, path);
}

RT_EXPORT int cprof_trace_stop(void)
{
    return session_stop(&sess, 0, false);
}
