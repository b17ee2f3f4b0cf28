/* unwind.h — capturing the stack of a sampled event (an allocation, a
 * contended lock, a thread's creation, a CPU-timer signal's thread dump).
 *
 * A walk of .eh_frame (default, cfi.h), libunwind (CPROF_UNWIND=libunwind)
 * or a frame-pointer walk (CPROF_UNWIND=fp), with
 * cprof's own frames and the C++ operator new frames removed, so the leaf
 * is the program's function. PCs are return addresses; writers subtract 1
 * to name the call site. Capture runs with the guard set; it is not for
 * signal handlers (the CPU profiler has its own, cpuring.h). */
#ifndef CPROF_UNWIND_H
#define CPROF_UNWIND_H

#include "cfi.h"

#include <stdbool.h>
#include <stdint.h>
#ifndef CPROF_NO_LIBUNWIND /* the musl runtime is built without it */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define UNWIND_MAX_DEPTH 256
/* Frames cprof itself may have above the program's (hooks, sampling,
 * capture, operator new), walked before they are dropped. */
#define UNWIND_SLACK 16

enum { UNWIND_LIBUNWIND, UNWIND_FP, UNWIND_CFI };

/* Chooses the unwinder and depth; learns once which code to skip.
 * check_each (CPROF_UNWIND_CHECK): every capture is compared with
 * libunwind's slow step-by-step unwind of the same frame, and every heap
 * sample's bucket with the table's (unwind_check_bucket); the count of
 * stacks compared and of mismatches is printed at exit, and the first
 * mismatches' two stacks; with cfi also the stacks it walked, those it
 * gave to libunwind, those that reused part of the thread's last, and
 * the buckets found from the memo (buckets.h). */
void unwind_init(int unwinder, int max_depth, bool check_each);

/* From a signal's context (a CPU sample, a thread dump): the interrupted
 * pc + 1 (so that pc - 1 lies in its function, as for return addresses),
 * then the return addresses of the frame-pointer chain from the context's
 * frame pointer, within the thread's stack. The count, at most max.
 * Signal-safe: how a build without libunwind (the musl runtime) walks
 * signal contexts. */
int unwind_fp_context_sigsafe(const void *uc, uintptr_t *pcs, int max);

/* Captures the caller's stack into pcs (up to the configured depth) with
 * cprof's frames removed; returns the depth. */
int unwind_capture(uintptr_t *pcs);

/* libunwind's unw_backtrace into pcs, return addresses as every other
 * walk gives them: on aarch64 libunwind 1.6's fast trace gives each
 * return address less 1 (instructions are 4-byte aligned there, so an
 * address ending in binary 11 is one of those). Signal-safe as
 * unw_backtrace is (cpuring.h). */
#ifndef CPROF_NO_LIBUNWIND
static inline int unwind_backtrace_sigsafe(uintptr_t *pcs, int max)
{
    int n = unw_backtrace((void **)pcs, max);
#if defined(__aarch64__)
    for (int i = 0; i < n; i++)
        if ((pcs[i] & 3) == 3)
            pcs[i]++;
#endif
    return n;
}
#endif

/* A captured stack for the stack table: depth return addresses at pcs,
 * and their hash_pcs (base/hash.h), or 0 for a stack cut at the depth
 * with a memo: only a lookup in the table needs it, and buckets_index
 * makes it then (a hash that is 0 is made again, the same). */
typedef struct unwind_stack {
    const uintptr_t *pcs;
    int depth;
    uint64_t hash;
    int *held; /* what unwind_release gives back (cfi.h) */
    /* The cfi walk's tags and memo (cfi_stack_t) for the frames at pcs,
     * until unwind_release. tags: NULL for a stack not kept whole by the
     * cfi walk, or cut at the depth (its tags would name more than the
     * stack kept). memo: NULL for a stack not kept by the cfi walk, or of
     * no frames; a cut stack's bucket is found there by its frames. */
    uint64_t *tags;
    void *memo;
    /* pcs[0] to pcs[fresh - 1] were walked anew: pcs[fresh] on (if fresh
     * < depth) were carried over from the last walk with their tags. */
    int fresh;
} unwind_stack_t;

/* Captures the caller's stack into *st, with its hash (with the cfi walk
 * most of it comes with the walk). buf has room for UNWIND_MAX_DEPTH +
 * UNWIND_SLACK frames; st->pcs points into it, or into the cfi walk's own
 * arrays, not copied out (cfi.h): they stay as they are until
 * unwind_release, which must follow (no other capture of this thread
 * between: a nested one, in a signal handler, walks without them).
 * frame: NULL, or the frame address of a cprof function on this stack
 * (the hook the program called): the walk starts at its caller, not
 * through the cprof frames in between (cfi.h's cfi_walk_frame; libunwind
 * still walks them). The stack is the same either way. */
void unwind_capture_hash(const void *frame, uintptr_t *buf, unwind_stack_t *st);

/* CPROF_UNWIND_CHECK: whether captures are checked (set by unwind_init). */
extern bool unwind_check __attribute__((visibility("hidden")));

/* Under the check: the bucket found for st (from the thread's memo:
 * buckets.h) was (same) or was not the table's; a mismatch if not. */
void unwind_check_bucket(const unwind_stack_t *st, bool memo, bool same);

/* Done with st's stack: the cfi walk's arrays go back to the thread. */
static inline void unwind_release(unwind_stack_t *st)
{
    cfi_release(st->held);
}

#endif
