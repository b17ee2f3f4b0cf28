/* stopworld.h — holding the other threads of the process still while the
 * leak scan (leaks.h) reads memory, with their registers.
 *
 * Each thread is sent a real-time signal (rt_tgsigqueueinfo, carrying a
 * generation and a slot number); its handler copies the interrupted
 * registers, stack pointer and thread pointer into the slot, answers, and
 * waits on a futex until stopworld_resume. A thread that blocks the
 * signal (its /proc status says so, or a request is still pending) is not
 * asked; one that does not answer in time (stopped, exiting) is left
 * running. Both are reported as missed; a late answer to an earlier
 * generation finds its slot withdrawn and returns at once.
 *
 * The signal: the highest real-time signal from SIGRTMAX-4 down whose
 * disposition is the default, installed at the first stop (threaddump.h
 * takes the ones above). The handler uses SA_RESTART; system calls that a
 * signal interrupts whatever the flag return EINTR, as for any signal.
 *
 * Signal safety: the handler takes no lock, does not allocate, and only
 * writes the slot whose tag it wins with a compare-and-swap. Slots live in
 * arena memory that is never unmapped.
 *
 * While threads are stopped, the stopping thread must not take any lock a
 * stopped thread may hold (malloc's, cprof's arena or private heap): it
 * prepares everything it needs before stopworld_stop. Stops are serialized
 * by a lock held from stop to resume. */
#ifndef CPROF_STOPWORLD_H
#define CPROF_STOPWORLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SW_NREGS 32 /* words of interrupted registers kept */

typedef struct {
    uint64_t tag;             /* generation << 2 | state (internal) */
    uintptr_t sp;             /* interrupted stack pointer */
    uintptr_t tp;             /* thread pointer (pthread_self) */
    uintptr_t regs[SW_NREGS]; /* the interrupted general registers */
} sw_slot_t;

/* Stops every thread of tids[] but the caller, waiting at most timeout_ms
 * for their answers. Returns how many stopped, or a negative errno (no
 * free signal while there is another thread to stop, no memory): then none
 * is stopped and the lock is not held.
 * Otherwise stopworld_resume must follow. */
int stopworld_stop(const pid_t *tids, size_t n, int timeout_ms);

/* After a stop: the answer of tids[i], or NULL if that thread was missed
 * (or is the caller). */
const sw_slot_t *stopworld_slot(size_t i);

/* Lets every stopped thread run again. */
void stopworld_resume(void);

/* In a fork child: frees the lock a stopping thread of the parent held. */
void stopworld_fork_child(void);

#endif
