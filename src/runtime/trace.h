/* trace.h — the execution trace: Go 1.19's trace format (what `go tool
 * trace` reads) recorded from a C program. Owns the trace sessions' work
 * (one at a time: CPROF_TRACE for the whole run, cprof_trace_start/stop,
 * or /debug/pprof/trace; the session, its state machine, file and entry
 * points are session.h's session_trace), the per-thread event buffers, the
 * writer thread, and the stack and string tables of the trace. The family:
 * trace.c (sessions, the goroutine state machine, the hooks' entry points,
 * annotations), tracebuf.h (buffers, records, tables, encoding),
 * tracewriter.h (the writer thread and the trace's end).
 *
 * The model (Go's runtime/trace.go, as internal/trace/parser.go checks it):
 * every thread of the program is a goroutine running on a processor (P) of
 * its own, so the parser's state machine holds per thread: ProcStart,
 * GoCreate (by the creating thread, with the pthread_create stack, when the
 * trace saw the creation; else by the thread itself), GoStart, then blocks
 * (GoBlockSync for mutexes, rwlocks, semaphores and joins; GoBlockCond for
 * condition variables; GoBlockNet for sockets, GoSleep for sleeps) each
 * followed by a GoUnblock on its own P (the waker is not seen: unlocks are
 * not hooked) and a GoStart; system calls (syshooks.c) as GoSysCall, and
 * when they blocked GoSysBlock, GoSysExit, GoStart; GoEnd and
 * ProcStop when the thread ends. A thread joins a trace at its first event
 * in it; a thread running when the trace starts joins it then (GoStart,
 * or GoWaiting if /proc says it waits), and one the CPU profile's signal
 * finds outside (a thread that only computes) then: the session's or the
 * drain thread writes its ProcStart, GoCreate and GoStart or GoWaiting
 * into a record made for it, which the thread adopts at its first event
 * (tracebuf.h's proxies). Events without state (HeapAlloc from the writer thread, CPUSample
 * from the CPU profile's drain thread, the user annotations) go into the
 * batch of whichever thread emits them.
 *
 * Recording: a thread writes its events, already encoded, into a buffer it
 * owns (no lock, no allocation per event); full buffers go to a queue that
 * the writer thread empties into the trace's file. Buffers come from one
 * pool mapped at the first start (bounded: CPROF_MEMORY_LIMIT counts it);
 * when none is free, events are dropped and counted — whole state
 * transitions at a time, so the trace stays a valid state machine — and
 * the count is written into the trace as a log message (category "cprof").
 * Stacks are interned into a table of their own; the stack and string
 * tables, symbolized in the process by the writer thread (function names
 * from the objects' symbol tables, file and line from DWARF, else file =
 * the object; frames without a name carry their address), go at the end
 * of the trace, with the frequency event.
 *
 * Threads: the hooks' entry points run in any program thread with the
 * guard clear; they capture no stack and take no lock but the pool's, on
 * the rare buffer change. Stop waits until no thread is inside its write
 * (a per-thread busy flag against the active flag, Dekker-style). Not for
 * signal handlers, except trace_thread_sigsafe. fork: the child traces
 * nothing and leaves the parent's file alone. */
#ifndef CPROF_TRACE_H
#define CPROF_TRACE_H

#include "rt.h"

#include <stdbool.h>
#include <stdint.h>

/* Nonzero while a trace runs: the one load of the annotations and the CPU
 * profile's signal when none does (the lock hooks read lockprof_watch).
 * tracebuf.c's. */
extern int trace_active __attribute__((visibility("hidden")));

static inline bool trace_on(void)
{
    return RT_UNLIKELY(__atomic_load_n(&trace_active, __ATOMIC_RELAXED) != 0);
}

/* What a thread blocks on: Go's event types. TRACE_SYSCALL is a system
 * call that did not block (Go's GoSysCall alone), TRACE_SYSCALL_BLOCK one
 * that did (GoSysCall, GoSysBlock, GoSysExit). */
enum {
    TRACE_SLEEP = 19, TRACE_BLOCK_SYNC = 25, TRACE_BLOCK_COND = 26, TRACE_BLOCK_NET = 27,
    TRACE_SYSCALL = 28, TRACE_SYSCALL_BLOCK = 30,
};

/* From the runtime's constructor (guard set): the bytes of the buffer
 * pool (CPROF_TRACE_BUFFER), the thread callbacks and the fork handlers;
 * binds session_trace (before, or when this fails, a trace does not
 * start: -ENOTSUP). 0 or a negative errno. */
int trace_init(uint64_t pool_bytes);

/* The calling thread blocks now (kind TRACE_BLOCK_*), at the stack pcs
 * (depth frames, leaf first, return addresses). True when the block was
 * recorded: then trace_unblock must follow when the wait ends. Called with
 * the guard clear or raised by the caller (lock hooks). */
bool trace_block(int kind, const uintptr_t *pcs, int depth);
void trace_unblock(void);

/* A wait of the calling thread that has ended (a system call hook records
 * after the call): kind TRACE_SLEEP, TRACE_BLOCK_NET, TRACE_SYSCALL or
 * TRACE_SYSCALL_BLOCK, from t0 to t1 (CLOCK_MONOTONIC ns; a start before
 * the trace's is taken as the trace's), at the stack pcs. Called with the
 * guard raised by the caller; from a signal handler that interrupted this
 * thread inside a trace write, nothing is recorded. */
void trace_waited(int kind, int64_t t0, int64_t t1, const uintptr_t *pcs, int depth);

/* A CPU profile sample (from the CPU profile's drain thread): taken at
 * ts_ns (CLOCK_MONOTONIC) on the thread that trace_thread_sigsafe named
 * then. */
void trace_cpu_sample(int64_t ts_ns, uint64_t thread, const uintptr_t *pcs, int depth);

/* The CPU profile's drain handed over every sample taken before t
 * (rt_now_ns): an ended thread's record may serve another thread after
 * that (tracebuf_drained). INT64_MAX once no CPU profile runs. */
void trace_cpu_drained(int64_t t);

/* The calling thread's goroutine and P in the running trace (P << 32 |
 * goroutine); for a program thread not in it (one that only computes),
 * TRACE_THREAD_UNSEEN | its tid, which trace_cpu_sample makes join the
 * trace; 0 for cprof's own threads. May run in a signal handler (reads
 * the thread's own record only). */
#define TRACE_THREAD_UNSEEN (1ull << 63)
uint64_t trace_thread_sigsafe(void);

#endif
