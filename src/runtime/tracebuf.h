/* tracebuf.h — the execution trace's recording memory and its encoding
 * (trace.h's family; included by trace.c and tracewriter.c only). Owns the
 * buffer pool and the queue of full buffers, the per-thread records, the
 * string and stack tables, the running trace's number, the count of
 * dropped events, and Go 1.19's event encoding.
 *
 * Encoding (Go's traceEventLocked): an event is one byte of type | nargs<<6
 * (nargs counts the arguments after the timestamp, stack included; 3 means
 * "a length byte follows"), the timestamp as the difference to the
 * previous event of the batch, then the arguments, the stack id last;
 * numbers are LEB128 varints. Timestamps are CLOCK_MONOTONIC nanoseconds
 * (the frequency event says 1e9 ticks per second). A buffer is one batch:
 * EvBatch [P, timestamp] then its events, all of one thread.
 *
 * Threads: a thread writes only into its own record's batch, between
 * tracebuf_enter and tracebuf_leave (a busy flag against trace_active,
 * Dekker-style: tracebuf_quiesce, after trace_active is cleared, waits for
 * every thread to be out). Locks, in this order: the string table's (a new
 * string), the stack table's (sitetab.h, a new stack), the pool's (a
 * buffer change, a new record); none is held across a call out. Not for
 * signal handlers, except tracebuf_running_sigsafe. */
#ifndef CPROF_TRACEBUF_H
#define CPROF_TRACEBUF_H

#include "sitetab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Go's event types (runtime/trace.go). */
enum {
    EV_BATCH = 1, EV_FREQUENCY = 2, EV_STACK = 3, EV_GOMAXPROCS = 4, EV_PROC_START = 5, EV_PROC_STOP = 6,
    EV_GO_CREATE = 13, EV_GO_START = 14, EV_GO_END = 15, EV_GO_PREEMPT = 18, EV_GO_UNBLOCK = 21,
    EV_GO_SYSCALL = 28, EV_GO_SYSEXIT = 29, EV_GO_SYSBLOCK = 30,
    EV_GO_WAITING = 31,
    EV_HEAP_ALLOC = 33, EV_STRING = 37, EV_USER_TASK_CREATE = 45, EV_USER_TASK_END = 46,
    EV_USER_REGION = 47, EV_USER_LOG = 48, EV_CPU_SAMPLE = 49,
};

#define BUF_BYTES (16u << 10)     /* one batch */
#define EV_MAX 80                 /* the largest event but a log message */
#define STR_MAX 1024              /* longer strings are cut */

typedef struct tbuf {
    struct tbuf *next;
    uint32_t len;
    int64_t last;   /* timestamp of the batch's last event */
    uint8_t data[BUF_BYTES - 24];
} tbuf_t;

/* A thread's goroutine in the running trace. */
enum { G_NONE, G_CREATED, G_RUNNING, G_WAITING };

typedef struct trec {
    int busy;              /* inside a write (see tracebuf_quiesce) */
    bool stuck;            /* still busy when a trace stopped (see tracebuf_quiesce) */
    uint32_t gen;          /* the trace the fields below belong to */
    uint64_t goid;         /* its goroutine there, 0 none */
    uint64_t seq;          /* Go's traceseq of that goroutine */
    uint32_t p;            /* its processor: the record's number */
    uint8_t state;         /* G_* */
    int64_t born;          /* when its goroutine began to run here (ProcStart) */
    uint64_t wait_stk;     /* the stack id of its wait, for the unblock */
    int32_t proxy;         /* made by another thread for this tid (a thread seen
                            * by the CPU profile's signal only), until that
                            * thread adopts it at its first event; 0 none */
    uint64_t claim;        /* trace << 32 | tid of the thread that wrote in it
                            * (its own or adopted), kept after it is freed:
                            * no record is made for that thread after it */
    int64_t p_last;        /* the last event of P p in a queued batch: a later
                            * batch of p never begins before it */
    int64_t released;      /* when its thread ended (rt_now_ns), INT64_MIN if
                            * it was not freed so: see tracebuf_drained */
    uint32_t rdepth;       /* open user regions, and which of the */
    uint64_t rmask;        /*   innermost 64 were written (bit 0) */
    tbuf_t *buf;           /* current batch, or NULL */
    struct trec *next_all; /* every record, newest first */
    struct trec *next_free;
} trec_t;

/* Nonzero while a trace records (trace.h declares it too, for the hooks'
 * inline test): set and cleared by trace.c, read against the busy flags. */
extern int trace_active __attribute__((visibility("hidden")));

/* --- a trace's start and end (the session's thread) ------------------------- */

/* The pool (pool_bytes, mapped at the first start: CPROF_MEMORY_LIMIT
 * counts it) and the string table mapped, every buffer free. -EBUSY while
 * a thread given up by the last stop is still inside a write, -ENOMEM. */
int tracebuf_open(uint64_t pool_bytes);

/* True once the pool is mapped (it never goes). */
bool tracebuf_mapped(void);

/* A new trace's number, its stacks' ids and the drop count begun afresh
 * (before trace_active is raised). */
void tracebuf_begin(void);

/* Waits until no thread is inside a write; trace_active is already clear.
 * A thread still inside one after 2 s (stopped by a debugger, say) is
 * marked stuck: its batch is left out of this trace, and tracebuf_open
 * refuses a new trace while it may still write into a buffer of the pool. */
void tracebuf_quiesce(void);

/* The records of the running trace's threads, newest first: the first
 * after prev (NULL: the first of all), or NULL. */
trec_t *tracebuf_next_rec(trec_t *prev);

/* Events not recorded for want of a buffer, and the pool's bytes. */
uint64_t tracebuf_dropped(void);
uint64_t tracebuf_pool_size(void);

/* The running trace's strings and stacks, for its end (fn is called
 * under no lock). A stack's frames are return addresses. */
void tracebuf_each_string(void (*fn)(void *arg, uint64_t id, const char *s, size_t n),
                          void *arg);
void tracebuf_each_stack(void (*fn)(void *arg, uint64_t id, const site_t *e), void *arg);

/* --- the full queue and the writer (tracewriter.c) ---------------------------- */

/* Takes the queued batches (linked by next, oldest first). */
tbuf_t *tracebuf_take_full(void);

/* Hands a written buffer back to the pool. */
void tracebuf_give_back(tbuf_t *b);

/* The writer sleeps until the pool runs half empty or tracebuf_kick, at
 * most timeout_ns. */
void tracebuf_wait(int64_t timeout_ns);
void tracebuf_kick(void);

/* --- writing events (any thread) ---------------------------------------------- */

/* The calling thread's record, made on its first event; NULL when out of
 * memory. */
trec_t *tracebuf_self(void);

/* The calling thread's record if it has one; not made. */
trec_t *tracebuf_mine(void);

/* A record of the running trace for thread tid, made by the calling
 * thread (the CPU profile's drain) for a thread that has none: its
 * events, from ts on (its P has none later), are written by the caller,
 * inside its own tracebuf_enter, and tracebuf_proxy_publish offers it to
 * tid, whose first tracebuf_enter in this trace adopts it (the same
 * goroutine and P go on). NULL when out of memory. The thread may have
 * written its first event meanwhile: publish then withdraws r (its events
 * dropped, unless tid adopted it already) and returns the record tid
 * wrote in; else r. tracebuf_proxy_find: the offered record of tid, or
 * NULL. tracebuf_claimed: the record tid wrote in in this trace (its own
 * or adopted; it may have ended), or NULL. */
trec_t *tracebuf_proxy_new(int64_t ts);
trec_t *tracebuf_proxy_publish(trec_t *r, int32_t tid);
trec_t *tracebuf_proxy_find(int32_t tid);
trec_t *tracebuf_claimed(int32_t tid);
/* A record of tracebuf_proxy_new not published (its events dropped):
 * back to the free list. */
void tracebuf_proxy_drop(trec_t *r);

/* The running (or last) trace's number, as records' gen holds it. */
uint32_t tracebuf_gen(void);

/* After a trace's end (no thread can adopt any more): the records no
 * thread adopted go back to the free list. */
void tracebuf_proxies_free(void);

/* The same while its goroutine exists in the running trace, else NULL;
 * may run in a signal handler (reads the thread's own record only). */
trec_t *tracebuf_running_sigsafe(void);

/* Enters a write: the thread's record, begun afresh on its first event in
 * this trace; NULL (and nothing to undo) when no trace runs. */
trec_t *tracebuf_enter(void);
void tracebuf_leave(trec_t *r);

/* Room for `need` bytes in r's batch: the full one is queued for the
 * writer, a fresh one begins a batch of P r->p at ts. False when the pool
 * is empty (the caller drops its events; counted). */
bool tracebuf_room(trec_t *r, uint32_t need, int64_t ts);

/* An exiting thread's batch goes to the writer now: the record may serve
 * another thread, whose batches must come later in the file. */
void tracebuf_flush(trec_t *r);

/* The calling thread is gone: its record is forgotten, and given to the
 * next new thread unless keep — once tracebuf_drained has passed its end:
 * until then its claim stays, for the CPU samples the thread took before
 * its end that the drain has not handed over yet (else such a sample
 * would make it a second goroutine, on a P of its own). */
void tracebuf_release_self(bool keep);

/* The CPU profile's drain has handed over every sample taken before t
 * (rt_now_ns); INT64_MAX when no CPU profile runs (the start). */
void tracebuf_drained(int64_t t);

/* The trace's id of a string (first n bytes, cut at STR_MAX) or stack
 * (depth return addresses, leaf first), made if new: 0 for the empty
 * string or stack, or when its table is full. */
uint64_t tracebuf_string(const char *s, size_t n);
uint64_t tracebuf_stack(const uintptr_t *pcs, int depth);

/* Encoding: a varint at p (returns the end), an event at the end of b
 * (room checked by the caller; args[0..n) after the timestamp, the stack
 * id among them, last, when the type has one), a new batch of P p in b
 * begun at ts. */
uint8_t *tracebuf_put_uv(uint8_t *p, uint64_t v);
void tracebuf_put_event(tbuf_t *b, uint8_t type, int64_t ts, const uint64_t *args, int n);
void tracebuf_batch(tbuf_t *b, uint32_t p, int64_t ts);

/* --- fork (trace.c's handlers) --------------------------------------------------- */

void tracebuf_fork_prepare(void);
void tracebuf_fork_parent(void);
/* Every record forgotten (the other threads are gone), the locks free. */
void tracebuf_fork_child(void);

#endif
