/* sigmask.h — SIGPROF kept deliverable while the program blocks signals,
 * so that the CPU profile sees every thread: liblzma creates its workers
 * with every signal blocked, servers block every signal in all threads but
 * one. A thread that blocks SIGPROF gets none of its CPU timer's signals:
 * its time would be missing from the profile without a word.
 *
 * Owns: the interposed pthread_sigmask, sigprocmask and sigpending, and
 * each thread's record of the program's wish for SIGPROF. From the first
 * CPU profile on (sigmask_enable), a mask the program sets never blocks
 * SIGPROF for real, while the program still reads back the mask it set;
 * a thread created then starts with SIGPROF deliverable (threadhook.h)
 * and remembers whether its creator blocked it. A SIGPROF that is not
 * cprof's, arriving at a thread whose program blocks SIGPROF, is held by
 * cprof (sigmask_redirect_sigsafe): pending, as sigpending shows, until
 * the program unblocks it, then queued again to its handler. Calls made
 * by cprof itself (guard set: libunwind blocks every signal around its
 * searches) pass through and leave that record alone.
 *
 * What remains unseen: threads that blocked SIGPROF before the first
 * profile started and have not set a mask since (cpuprof.c measures their
 * CPU time), and masks set by raw system calls. What differs:
 * - a program's own SIGPROF that it meant to take with sigwait or
 *   signalfd on another thread is held on the thread it reached; a held
 *   one is lost if the thread execs (the kernel keeps pending signals);
 * - a child of posix_spawn (without POSIX_SPAWN_SETSIGMASK) or vfork
 *   starts with SIGPROF deliverable; a vfork child shares its parent's
 *   TLS, so its mask calls before exec change the parent thread's record;
 * - a signal handler's return restores the real mask from its ucontext,
 *   not the record: a handler that changes the program's SIGPROF wish and
 *   returns leaves the record at the handler's wish (what the thread reads
 *   back, and whether its own SIGPROFs are held) until its next mask call.
 * A fork child gets the program's mask back (it profiles nothing).
 *
 * Threads and signals: all per-thread state is the thread's own
 * (initial-exec TLS); the interposed functions are async-signal-safe, as
 * the ones they wrap, take no lock and allocate nothing once
 * sigmask_resolve ran (cprof_init). */
#ifndef CPROF_SIGMASK_H
#define CPROF_SIGMASK_H

#include <signal.h>
#include <stdbool.h>

/* From cprof_init (guard set), CPU profile or not: resolves the next
 * definitions, so that no later call (from a signal handler) runs dlsym. */
void sigmask_resolve(void);

/* From cpu_init (guard set): registers the thread callbacks. 0 or a
 * negative errno. */
int sigmask_init(void);

/* Once cprof's SIGPROF handler is installed (a CPU profile starts): masks
 * keep SIGPROF deliverable from now on, for good. */
void sigmask_enable(void);

/* In cprof's SIGPROF handler, for a timer signal: true if it arrived as an
 * interposed call made SIGPROF deliverable on a thread that had it blocked
 * (its periods, si_overrun, were spent with the signal blocked: no stack
 * of them is known). */
bool sigmask_catchup_sigsafe(void);

/* In cprof's SIGPROF handler, for a SIGPROF that is not cprof's: if the
 * program of this thread blocks SIGPROF, holds the signal until the
 * program unblocks it (one at most, as the kernel keeps it pending);
 * returns true then. */
bool sigmask_redirect_sigsafe(const siginfo_t *info);

/* Makes SIGPROF deliverable on the calling thread, also when guarded (an
 * exiting thread whose pending timer signal still stands for periods): a
 * query of the mask as the program's own would be. */
void sigmask_open_self(void);

#endif
