/* cpuprof.h — the CPU profile, as Go's runtime/pprof.StartCPUProfile takes
 * it: every thread of the process sampled on its own CPU-time clock, the
 * stacks turned into a profile with sample types samples/count and
 * cpu/nanoseconds when profiling stops.
 *
 * Owns: the profiling session's recording (one at a time: CPROF_CPU_PROFILE
 * for the whole run, cprof_cpu_start/cprof_cpu_stop, or
 * /debug/pprof/profile; the session, its state machine, file and entry
 * points are session.h's session_cpu), the per-thread timers, the
 * drain thread and its table of stacks (whose samples also go to a running
 * execution trace, trace.h), and the profile writer. The signal handler and
 * the ring are cpuring.h.
 *
 * Timers: one POSIX timer per thread on that thread's CPU-time clock
 * (CLOCK_THREAD_CPUTIME_ID of the tid), firing every 1/CPROF_CPU_HZ s of
 * CPU the thread uses, its SIGPROF directed at that thread
 * (SIGEV_THREAD_ID). Threads running at the start come from
 * /proc/self/task; threads created later make their own timer as they
 * start (threadhook.h); a thread deletes its timer as it exits, and
 * stopping deletes them all. A sleeping thread's clock stands still, so it
 * gets no signal: only a thread that was running can see a system call
 * interrupted.
 *
 * Threads: start/stop may be called from any thread, also concurrently
 * (one wins, the others get -EBUSY or wait for the stop in progress); they
 * run with the guard set, and no lock is held across a call out (the
 * timer registry's lock covers timer system calls only). fork: the child
 * has no timers and no drain thread: profiling is off there, and the
 * parent's session is not written by the child. */
#ifndef CPROF_CPUPROF_H
#define CPROF_CPUPROF_H

#include <stdbool.h>
#include <stdint.h>

/* Called once from the runtime's constructor (guard set): the sampling
 * rate (CPROF_CPU_HZ) and the stack depth (CPROF_DEPTH). Registers the
 * thread callbacks and the fork handlers, and binds session_cpu: before,
 * or when this fails, a CPU profile does not start (-ENOTSUP). 0 or a
 * negative errno (-ENOTSUP when hz is 0: CPROF_CPU_HZ was invalid). */
int cpu_init(int hz, int max_depth);


/* Deltas for the push client (push.h): from cpu_delta_enable on, every
 * sample any session takes is also kept apart until cpu_delta_write writes
 * those kept since its last call (or the enable) to fd as a CPU profile and
 * forgets them; *start_real_ns gets the start of that span. The deltas of a
 * run add up to its sessions' profiles, sample for sample. Called from one
 * cprof thread at a time (guard set); 0 or a negative errno. */
void cpu_delta_enable(void);
int cpu_delta_write(int fd, int64_t *start_real_ns);

#endif
