/* cpuring.h — the signal side of the CPU profile: the SIGPROF handler, the
 * stack capture it does, and the preallocated lock-free ring it writes the
 * stacks into. Everything else about CPU profiles (timers, the drain
 * thread, the profile) is cpuprof.h.
 *
 * Signal-safety rules (the handler, and every function named *_sigsafe):
 * - only async-signal-safe work: no malloc, no lock, no stdio, no
 *   pthread_* call; errno is saved and restored;
 * - memory it touches was mapped before the handler could run (the ring),
 *   or is the thread's own stack and initial-exec TLS;
 * - the only calls out are libunwind's local unwinder (unw_backtrace, or
 *   unw_init_local2 on the signal's ucontext and unw_step: signal-safe
 *   for local unwinding, its caches per thread; the first unwind on a
 *   thread makes its frame cache with mmap and a pthread_setspecific on a
 *   key made at start, which glibc stores without allocating), before
 *   it unwfds_ok_sigsafe (system calls: libunwind's pipe is still its
 *   own, else the leaf alone is recorded), the futex wake of the drain
 *   thread (a system call), while a trace runs clock_gettime and
 *   trace_thread_sigsafe (reads of the thread's own trace record), and
 *   sigmask.h's *_sigsafe functions (reads and writes of the thread's
 *   own mask record), labels_now (a read of the thread's own TLS); on
 *   aarch64, before libunwind, the cfi walk from the signal's registers
 *   (cfi_walk_context_sigsafe: the global rule table, lock-free; a rule
 *   not kept yet calls dl_iterate_phdr, as libunwind's misses do) and, at
 *   a thread's first sample, stackbounds_get (raw system calls into a
 *   buffer on the stack).
 * - If the signal interrupted libunwind on this thread (a heap sample being
 *   unwound, the threads profile's handler: rt_self.unwinding), libunwind's
 *   per-thread caches may be half updated: the sample is then recorded
 *   with the interrupted PC alone. While it unwinds, the handler sets
 *   rt_self.unwinding and the guard itself, and blocks every signal but
 *   the synchronous faults. A program that calls libunwind itself is not
 *   seen: a sample landing inside its unwind may find libunwind's
 *   per-thread cache inconsistent (as with any libunwind-based profiler).
 *
 * Ring: a bounded multi-producer, single-consumer queue of fixed-size slots
 * (Vyukov's bounded queue). A producer reserves a slot with a CAS on the
 * tail, unwinds straight into it, and publishes it with a release store of
 * the slot's sequence number; the one consumer (cpuprof's drain thread)
 * reads published slots in order and hands them back. When the ring is
 * full — the drain fell behind — the sample is dropped and counted (Go's
 * "lost" profile events). A handler in flight is counted, so that stopping
 * can wait until no handler still writes.
 *
 * Signals: the handler is installed when profiling first starts, with
 * SA_RESTART (system calls it interrupts are restarted where the kernel
 * allows), and never removed: a SIGPROF already queued when profiling
 * stops must still find it. It claims only signals that carry cprof's
 * timer cookie (si_code SI_TIMER); any other SIGPROF (setitimer's
 * ITIMER_PROF, kill) goes to the handler the program had installed
 * before, or is dropped if there was none (instead of killing the
 * process) — unless the program blocks SIGPROF on that thread, which only
 * sigmask.h keeps deliverable: sigmask.h then holds it pending for the
 * program, as the kernel would have. A program that installs its own SIGPROF handler while
 * profiling runs takes the signals over (cprof does not interpose
 * sigaction); the next start installs cprof's in front of it again. */
#ifndef CPROF_CPURING_H
#define CPROF_CPURING_H

#include <stdbool.h>
#include <stdint.h>

/* One sample as the consumer sees it (pointers into the ring slot: valid
 * until cpuring_release). */
typedef struct {
    const uintptr_t *pcs; /* leaf first; the leaf is the interrupted PC + 1,
                             callers are return addresses, so that every
                             entry names its instruction when decremented */
    uint32_t depth;       /* 0: periods the thread spent with SIGPROF
                             blocked (sigmask.h), where is not known */
    uint32_t count;       /* timer periods it stands for: 1 + overruns */
    int64_t ts;           /* when, if an execution trace ran (trace.h), else 0 */
    uint64_t thread;      /* the trace's thread (trace_thread_sigsafe) */
    uint32_t labels;      /* the thread's label set (labels_now) */
} cpuring_sample_t;

/* Early, from the runtime's constructor: has libunwind make its
 * per-thread frame-cache key now, while few keys exist (see capture in
 * cpuring.c). */
void cpuring_prepare(void);

/* Outside any signal, with the guard set: has libunwind set up its state
 * on this thread, so that the handler may unwind it wherever it stops it
 * (capture in cpuring.c). Also done by cpuring_prepare for its thread. */
void cpuring_thread_ready(void);

/* Maps the ring for stacks of up to max_depth frames (on the first call)
 * and installs the handler unless it is in place. Not signal-safe; 0,
 * -ENOMEM, or -errno of sigaction. */
int cpuring_init(int max_depth);

/* The value cprof's timers carry in sigev_value.sival_ptr. */
void *cpuring_cookie(void);

/* Turns recording on or off. After off, cpuring_quiesce waits until no
 * handler is still writing. */
void cpuring_enable(bool on);
void cpuring_quiesce(void);

/* Empties the ring and zeroes the lost count (call while disabled and
 * quiesced). */
void cpuring_reset(void);

/* In a fork child: disabled, empty, and no handler in flight (those that
 * were ran on threads the child does not have). */
void cpuring_fork_child(void);

/* Marks the calling thread as cprof's own: its samples are dropped. */
void cpuring_ignore_this_thread(void);

/* True if the program had its own SIGPROF handler when cprof installed
 * its own (its signals are passed on to it). */
bool cpuring_chained(void);

/* False if the program has replaced cprof's handler since (its own
 * sigaction(SIGPROF)): the timers' signals then go to the program. */
bool cpuring_handler_intact(void);

/* --- consumer (one thread at a time) ------------------------------------ */

/* The oldest published sample, or false if there is none yet. */
bool cpuring_peek(cpuring_sample_t *s);
/* Hands the slot of the sample from cpuring_peek back to the producers. */
void cpuring_release(void);
/* Samples dropped since the last call (ring full), as timer periods. */
uint64_t cpuring_take_lost(void);
/* Sleeps until the ring is half full or timeout_ms pass. */
void cpuring_wait(int timeout_ms);
/* True when no sample is in the ring, nor in a slot a handler still
 * fills. */
bool cpuring_empty(void);
/* Wakes a cpuring_wait early. */
void cpuring_wake(void);

#endif
