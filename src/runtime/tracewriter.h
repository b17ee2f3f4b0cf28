/* tracewriter.h — the execution trace's writer (trace.h's family; included
 * by trace.c only): the trace's header, the writer thread that empties the
 * queue of full batches (tracebuf.h) into the session's file and records
 * the live heap (Go's HeapAlloc) every 10 ms, and the trace's end: the
 * batches still being filled, every running goroutine and P stopped, the
 * count of dropped events as a log message (category "cprof"), then the
 * stack and string tables, symbolized in the process (function names from
 * the objects' symbol tables, file and line from their DWARF line tables,
 * srclines.h, else file = the object; frames without a name carry their
 * address), and the frequency event — all written by the writer thread
 * before it ends, so that symbolizing never runs in a program thread.
 *
 * Writes go to session_fd(s) (the program may close the file: it is
 * opened again), non-blocking: while tracing, a reader that does not keep
 * up only makes events drop; once the trace ends, the writes give up after
 * 5 s, so that a stalled reader cannot hang the program's stop or exit.
 * The first write error is kept and returned by tracewriter_finish.
 *
 * Threads: start and finish from the session's thread (session.h: its
 * start and stop), with the guard set. The writer thread runs guarded for
 * its whole life, with every signal blocked. */
#ifndef CPROF_TRACEWRITER_H
#define CPROF_TRACEWRITER_H

#include "session.h"

/* Writes the trace's header to s's descriptor. 0 or -errno. */
int tracewriter_header(session_t *s);

/* Starts the writer thread. 0 or -errno. */
int tracewriter_start(void);

/* After every thread is out of its writes (tracebuf_quiesce): has the
 * writer write the queued batches and the trace's end, and waits for it.
 * 0 or the first write error. */
int tracewriter_finish(void);

#endif
