/* threaddump.h — the stacks of the other threads of this process, for the
 * threads profile. C cannot read another thread's registers, so each
 * thread is asked to unwind itself: cprof sends it a real-time signal
 * (rt_tgsigqueueinfo, carrying a slot number) whose handler unwinds from
 * the interrupted context with libunwind into a preallocated slot and
 * answers. A thread that blocks the signal (its SigBlk in /proc) is asked
 * once and given 50 ms, in case it was only passing through a signal
 * handler, then reported as blocking it; while that request is still
 * pending (SigPnd), it is not asked again, so a thread that blocks the
 * signal for good holds at most one. Threads that do not answer in time
 * (stopped, in uninterruptible sleep, exiting) are reported without a
 * stack.
 *
 * The signal: SIGRTMAX-3 (61 on Linux x86-64), or the next lower real-time
 * signal whose disposition is the default, chosen and installed at the
 * first collection (never before: a program that takes no thread profile
 * has no handler installed). If the program later installs its own handler
 * on that signal, the next collection moves to another free one. The
 * handler uses SA_RESTART; system calls that a signal interrupts whatever
 * the flag (nanosleep, poll, epoll_wait, sigtimedwait, ...) return EINTR in
 * the interrupted thread, as they would for any signal.
 *
 * Signal safety: the handler (*_sigsafe) takes no lock, does not allocate,
 * and only writes the slot whose tag it wins with a compare-and-swap, so a
 * late answer to an abandoned request changes nothing. Slots live in arena
 * memory that is never unmapped. Collections are serialized by a lock that
 * only collecting threads take (never a hook or a handler); it is held
 * while waiting for answers. */
#ifndef CPROF_THREADDUMP_H
#define CPROF_THREADDUMP_H

#include <stdint.h>
#include <sys/types.h>

enum {
    TD_OK,        /* pcs hold the stack */
    TD_BLOCKED,   /* the thread blocks the signal */
    TD_NO_ANSWER, /* no answer before the deadline */
    TD_GONE,      /* the thread ended meanwhile */
    TD_NO_SIGNAL, /* no free real-time signal, or no memory for slots */
};

typedef struct {
    pid_t tid;        /* in: the thread to ask */
    int status;       /* out: TD_* */
    uint32_t depth;   /* out: frames in pcs */
    uint32_t labels;  /* out: the thread's label set then (labels.h) */
    uintptr_t *pcs;   /* in: room for max_depth frames; out: leaf first. The
                       * leaf is the interrupted instruction + 1, the others
                       * return addresses, so pc - 1 is inside every frame */
} td_thread_t;

/* Asks every thread of th[] (never the calling thread) for its stack, up to
 * max_depth frames, waiting at most timeout_ms in all. 0, or a negative
 * errno when nothing could be asked (then every status is TD_NO_SIGNAL). */
int threaddump_collect(td_thread_t *th, size_t n, int max_depth, int timeout_ms);

/* Waits (at most 50 ms) until no thread runs the handler of an earlier
 * collection, so that the threads it woke are back where they were (their
 * states in /proc say so again). */
void threaddump_settle(void);

/* The calling thread's own stack, unwound the same way (libunwind, whatever
 * CPROF_UNWIND says), with cprof's frames left out: the leaf is the
 * function that called into cprof. Returns the depth. */
int threaddump_self(uintptr_t *pcs, int max_depth);

/* The signal in use, 0 before the first collection. */
int threaddump_signal(void);

#endif
