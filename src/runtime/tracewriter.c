/* tracewriter.c — the execution trace's writer thread and the trace's end
 * (see tracewriter.h). */
#include "tracewriter.h"

#include "base/fdio.h"
#include "counters.h"
#include "rt.h"
#include "srclines.h"
#include "symtab.h"
#include "tracebuf.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRITER_PERIOD_MS 10       /* also the HeapAlloc rate limit */
#define FINISH_MS FDIO_STALL_MS   /* the end of a trace waits this long for its reader */

static session_t *sess;           /* the running trace's */
static struct {
    int rc;                       /* first write error */
    int64_t finish_by;            /* ms (fdio_now_ms): writes give up then; 0 while tracing */
    pthread_t writer;
} run;
static int writer_stop;

/* While tracing, a reader that does not keep up only makes the threads'
 * events drop (the pool runs out) while the writer waits for it; once the
 * trace is ending (finish_by is set), the writer and the end's own writes
 * give up at finish_by, so that a stalled reader cannot hang the program's
 * stop or exit (the descriptor is non-blocking: outfile.h). */
static void write_all(const void *p, size_t n)
{
    const uint8_t *c = p;
    int fd = session_fd(sess); /* the program may have closed it */
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

int tracewriter_header(session_t *s)
{
    sess = s;
    run.rc = 0;
    run.finish_by = fdio_now_ms() + FINISH_MS; /* from the caller's thread */
    write_all("go 1.19 trace\0\0\0", 16);
    /* Gomaxprocs first, in a batch of its own on P 0, as Go's StartTrace
     * writes it after the goroutines that exist: Go 1.22+'s converter
     * takes every event before it for the trace's initial state (a
     * GoStart there becomes a goroutine's status), so without it each
     * start re-creates its goroutine and the blocking profiles lose all
     * but the last run of each (docs/trace.md). */
    uint8_t ev[40], *p = ev;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *p++ = EV_BATCH | 1 << 6;
    p = tracebuf_put_uv(p, 0);
    p = tracebuf_put_uv(p, (uint64_t)rt_now_ns());
    *p++ = EV_GOMAXPROCS | 2 << 6; /* [timestamp, procs, stack] */
    p = tracebuf_put_uv(p, 1);
    p = tracebuf_put_uv(p, cpus > 0 ? (uint64_t)cpus : 1);
    p = tracebuf_put_uv(p, 0);
    write_all(ev, (size_t)(p - ev));
    run.finish_by = 0;
    return run.rc;
}

/* --- the writer thread -------------------------------------------------------------------- */

/* Writes the queued batches and hands their buffers back. */
static void drain_full(void)
{
    tbuf_t *b = tracebuf_take_full();
    while (b) {
        tbuf_t *next = b->next;
        write_all(b->data, b->len);
        tracebuf_give_back(b);
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
    trec_t *r = tracebuf_enter();
    if (!r)
        return;
    int64_t ts = rt_now_ns();
    if (tracebuf_room(r, EV_MAX, ts)) {
        tracebuf_put_event(r->buf, EV_HEAP_ALLOC, ts, &live, 1);
        *last = live;
    }
    tracebuf_leave(r);
}

static void write_end(void);

static void *writer_main(void *arg)
{
    (void)arg;
    rt_self.guard = 1; /* for its whole life */
    tracebuf_self();
    uint64_t last_heap = UINT64_MAX;
    for (;;) {
        bool last = __atomic_load_n(&writer_stop, __ATOMIC_ACQUIRE);
        heap_event(&last_heap);
        drain_full();
        if (last) {
            write_end();
            break;
        }
        tracebuf_wait(WRITER_PERIOD_MS * 1000000LL);
    }
    return NULL;
}

int tracewriter_start(void)
{
    __atomic_store_n(&writer_stop, 0, __ATOMIC_RELAXED);
    /* Created guarded (an internal thread) with every signal blocked. */
    return rt_spawn(&run.writer, writer_main, "cprof-trace");
}

/* --- the end of a trace: stacks, strings, frequency --------------------------------------- */

typedef struct {
    uint8_t b[64 << 10];
    size_t n;
    tbuf_t scratch[1]; /* a last batch being made */
    symtab_t *st;      /* the footer's */
    srclines_t *lines; /* the footer's, or NULL: no lines */
    const char *exe;
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

static void out_string(void *arg, uint64_t id, const char *s, size_t n)
{
    out_t *o = arg;
    uint8_t hdr[24], *p = hdr;
    *p++ = EV_STRING;
    p = tracebuf_put_uv(p, id);
    p = tracebuf_put_uv(p, n);
    out_bytes(o, hdr, (size_t)(p - hdr));
    out_bytes(o, s, n);
}

/* One frame's function, file and line: the function from the symbol
 * tables; the file and line from the DWARF line tables, else the file is
 * the object the frame lies in (exe: the main program's), line 0. */
static void frame_names(out_t *o, uintptr_t pc, uint64_t *fn, uint64_t *file, uint64_t *line)
{
    symtab_t *st = o->st;
    const char *exe = o->exe;
    const char *name = st ? symtab_lookup(st, pc) : NULL;
    char hex[24];
    if (!name) {
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)pc);
        name = hex;
    }
    *fn = tracebuf_string(name, strlen(name));
    const char *src;
    int ln;
    if (srclines_lookup(o->lines, pc, &src, &ln)) {
        *file = tracebuf_string(src, strlen(src));
        *line = (uint64_t)ln;
        return;
    }
    *line = 0;
    Dl_info info;
    const char *obj = dladdr((void *)pc, &info) ? info.dli_fname : NULL;
    if (obj && obj[0] != '/') /* the main program, as it was started */
        obj = exe;
    *file = obj ? tracebuf_string(obj, strlen(obj)) : 0;
}

static void out_stack(void *arg, uint64_t id, const site_t *e)
{
    out_t *o = arg;
    uint8_t rec[16 + UNWIND_MAX_DEPTH * 40], *p = rec;
    p = tracebuf_put_uv(p, id);
    p = tracebuf_put_uv(p, e->depth);
    for (uint32_t i = 0; i < e->depth; i++) {
        uintptr_t pc = e->pcs[i] - 1; /* return address -> the call */
        uint64_t fn, file, line;
        frame_names(o, pc, &fn, &file, &line);
        p = tracebuf_put_uv(p, pc);
        p = tracebuf_put_uv(p, fn);
        p = tracebuf_put_uv(p, file);
        p = tracebuf_put_uv(p, line);
    }
    uint8_t hdr[12], *h = hdr;
    *h++ = EV_STACK | 3 << 6;
    h = tracebuf_put_uv(h, (uint64_t)(p - rec));
    out_bytes(o, hdr, (size_t)(h - hdr));
    out_bytes(o, rec, (size_t)(p - rec));
}

static void write_footer(out_t *o)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    o->exe = exe;
    o->st = symtab_build();
    o->lines = srclines_open();
    tracebuf_each_stack(out_stack, o);
    srclines_close(o->lines);
    symtab_free(o->st);
    tracebuf_each_string(out_string, o);
    uint8_t f[12] = {EV_FREQUENCY}, *p = tracebuf_put_uv(f + 1, 1000000000);
    out_bytes(o, f, (size_t)(p - f));
    out_flush(o);
}

/* Every thread's goroutine stops running and its P stops, as Go's
 * StopTrace stops the world: go tool trace wants every running span
 * ended. Each in a batch of its P begun now, written by the stopping
 * thread after every other batch of that P. */
static void write_ends(out_t *o)
{
    for (trec_t *r = tracebuf_next_rec(NULL); r; r = tracebuf_next_rec(r)) {
        if (r->state != G_RUNNING && r->state != G_WAITING)
            continue;
        tbuf_t *b = o->scratch;
        tracebuf_batch(b, r->p, rt_now_ns());
        uint64_t none = 0;
        if (r->state == G_RUNNING)
            tracebuf_put_event(b, EV_GO_PREEMPT, b->last + 1, &none, 1);
        tracebuf_put_event(b, EV_PROC_STOP, b->last + 1, NULL, 0);
        out_bytes(o, b->data, b->len);
    }
}

/* What was dropped, said in the trace: a log message on the stopping
 * thread's P, in a batch of its own after every other. */
static void write_drops(out_t *o, uint32_t p)
{
    uint64_t d = tracebuf_dropped();
    if (!d)
        return;
    char msg[160];
    int len = snprintf(msg, sizeof(msg), "%llu events dropped: the trace outgrew its %llu KiB "
                       "of buffers (CPROF_TRACE_BUFFER)", (unsigned long long)d,
                       (unsigned long long)(tracebuf_pool_size() >> 10));
    rt_warn("trace: %s", msg);
    tbuf_t *b = o->scratch;
    tracebuf_batch(b, p, rt_now_ns());
    uint64_t a[3] = {0, tracebuf_string("cprof", 5), 0};
    tracebuf_put_event(b, EV_USER_LOG, b->last + 1, a, 3);
    uint8_t *q = tracebuf_put_uv(b->data + b->len, (uint64_t)len);
    memcpy(q, msg, (size_t)len);
    b->len = (uint32_t)(q + len - b->data);
    out_bytes(o, b->data, b->len);
}

/* The trace's end, in the writer thread once it wrote the queued batches:
 * symbolizing (symbol and line tables) is cprof's own work, never a
 * program thread's. */
static void write_end(void)
{
    /* The batches still being filled, after every queued one of theirs. */
    for (trec_t *r = tracebuf_next_rec(NULL); r; r = tracebuf_next_rec(r))
        if (!r->stuck && r->buf && r->buf->len)
            write_all(r->buf->data, r->buf->len);
    out_t *o = malloc(sizeof(*o));
    if (!o) {
        run.rc = -ENOMEM;
    } else {
        o->n = 0;
        trec_t *r = tracebuf_self();
        write_ends(o);
        write_drops(o, r ? r->p : 0);
        write_footer(o);
        free(o);
    }
}

int tracewriter_finish(void)
{
    __atomic_store_n(&run.finish_by, fdio_now_ms() + FINISH_MS, __ATOMIC_RELEASE);
    __atomic_store_n(&writer_stop, 1, __ATOMIC_RELEASE);
    tracebuf_kick();
    pthread_join(run.writer, NULL);
    return run.rc;
}
