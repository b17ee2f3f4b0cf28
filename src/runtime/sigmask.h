/* sigmask.h — SIGPROF kept deliverable while the program blocks signals,
 * so that the CPU profile sees every thread: liblzma creates its workers
 * with every signal blocked, servers block every signal in all threads but
 * one. A thread that blocks SIGPROF gets none of its CPU timer's signals:
 * its time would be missing from the profile without a word.
 *
 * Owns: the interposed pthread_sigmask and sigprocmask, and each thread's
 * record of the program's wish for SIGPROF. From the first CPU profile on
 * (sigmask_enable), a mask the program sets never blocks SIGPROF for real,
 * while the program still reads back the mask it set; a thread created
 * then starts with SIGPROF deliverable (threadhook.h) and remembers
 * whether its creator blocked it. A SIGPROF that is not cprof's, arriving
 * at a thread whose program blocks SIGPROF, is blocked and queued again
 * from cprof's handler (sigmask_redirect_sigsafe): it stays pending, as
 * sigpending shows, until the program unblocks it. What remains unseen:
 * threads that blocked SIGPROF before the first profile started and have
 * not set a mask since (cpuprof.c measures their CPU time), and masks set
 * by raw system calls. What differs: a program's own SIGPROF that it
 * meant to take with sigwait or signalfd on another thread stays pending
 * on the thread it reached; a child of posix_spawn (without
 * POSIX_SPAWN_SETSIGMASK) or vfork starts with SIGPROF deliverable. A fork
 * child gets the program's mask back (it profiles nothing).
 *
 * Threads and signals: all per-thread state is the thread's own
 * (initial-exec TLS); the interposed functions are async-signal-safe, as
 * the ones they wrap, take no lock and allocate nothing after the first
 * call (which resolves the next definitions). Calls made by cprof itself
 * (guard set) pass through unchanged: its own threads block SIGPROF. */
#ifndef CPROF_SIGMASK_H
#define CPROF_SIGMASK_H

#include <signal.h>
#include <stdbool.h>

/* From cpu_init (guard set): resolves the next definitions and registers
 * the thread callbacks. 0 or a negative errno. */
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
 * program of this thread blocks SIGPROF, blocks it in the mask that the
 * handler's return restores (uc) and queues the signal again on this
 * thread, to be pending as it would have been; returns true then. */
bool sigmask_redirect_sigsafe(const siginfo_t *info, void *uc);

/* Makes SIGPROF deliverable on the calling thread, also when guarded (an
 * exiting thread whose pending timer signal still stands for periods): a
 * query of the mask as the program's own would be. */
void sigmask_open_self(void);

#endif
