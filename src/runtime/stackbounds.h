/* stackbounds.h — each thread's stack bounds (rt_self.stack_lo/hi), which
 * the frame-pointer and cfi walks stay inside.
 *
 * Never pthread_getattr_np on the hook path: glibc's holds the thread's
 * lock while it allocates (its cpu set, and for the main thread the FILE
 * of /proc/self/maps), so a sampled allocation inside the program's own
 * call would wait for that lock on itself (a Rust program's start-up
 * does this). Instead:
 *   - a thread made through threadhook.h learns them at its start
 *     (stackbounds_learn_started: no hook, no lock of the program held);
 *   - any other thread on its first walk, from /proc/self/maps read with
 *     raw system calls into a buffer on the stack (no allocation, no lock,
 *     no cancellation point, errno kept): the main thread's is the mapping
 *     holding __libc_stack_end, as far down as RLIMIT_STACK or the mapping
 *     below allows (glibc's own rule); another's the mapping holding its
 *     stack pointer if that also holds its descriptor (pthread_self: its
 *     own stack). A mapping that does not (a coroutine's stack, a
 *     sigaltstack) is not kept: it may be unmapped and its range reused
 *     by a smaller one, so it bounds one walk, and the next asks again.
 * A child forked from a thread other than the main one keeps that
 * thread's bounds, or learns them as for any other thread.
 * Safe in a hook and in a signal handler that interrupted one. */
#ifndef CPROF_STACKBOUNDS_H
#define CPROF_STACKBOUNDS_H

#include "rt.h"

#include <stdbool.h>

/* stackbounds_get's first call on a thread. */
bool stackbounds_learn(rt_thread_t *t);

/* Fills t's bounds on first use, or for this walk while it runs off its
 * own stack (t is this thread's rt_self): also when the bounds kept are
 * the thread's own but it now runs on another stack (a coroutine's, after
 * a first walk on its own; a mapping hook can make that first walk);
 * false if they cannot be known (then the range is empty). */
static inline bool stackbounds_get(rt_thread_t *t)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (RT_UNLIKELY(!t->stack_hi || t->stack_once || here < t->stack_lo || here >= t->stack_hi))
        return stackbounds_learn(t);
    return t->stack_hi > t->stack_lo;
}

/* At start-up, on the thread that runs cprof's constructor. */
void stackbounds_init(void);

/* In a new thread's start wrapper, guarded: its bounds from
 * pthread_getattr_np, before any hook needs them. */
void stackbounds_learn_started(void);

#endif
