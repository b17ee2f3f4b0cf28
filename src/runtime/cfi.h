/* cfi.h — a table-driven stack walk (x86-64 and aarch64) from the DWARF
 * call-frame information (.eh_frame, found through each module's
 * PT_GNU_EH_FRAME header): CPROF_UNWIND=cfi, the default unwinder.
 *
 * Each return address's frame rule is reduced to what the common shapes
 * need (CFA = sp+N or fp+N, return address at CFA+M, fp saved at CFA+K
 * or unchanged; fp is rbp or x29, and on aarch64 every return address
 * read is stripped of its pointer-authentication code) and kept in one global table keyed by pc: lock-free
 * (claimed with a compare-and-swap, published with a release store), in
 * memory cprof maps itself, never freed, bounded (an entry kept before the
 * last module unload is free for any pc; when a pc's probe run has none
 * free its rule is computed each time). Computing a rule calls
 * dl_iterate_phdr (the loader's lock), once per distinct pc. Each thread
 * also keeps (in one of a fixed number of slots, given back when it exits
 * and, in a forked child, for every thread but the forking one) its last
 * rules and its last walk: a frame whose pc, sp and fp are those of a
 * frame of the last walk, with every stack word the last walk read from
 * there on unchanged, has the same callers, which are copied with their
 * hashes instead of walked (fp and the fp words read are left out where
 * no rule from that frame out takes the CFA from fp, as in code built
 * without frame pointers): the last walk lies at the end of the thread's
 * arrays, leaf first, so a walk that joins it there writes only its own
 * new frames before that part and copies nothing of the rest: the caller
 * reads the whole stack there (a last walk cut at its max, a stack deeper
 * than it, is copied up to its cut and the walk goes on from there).
 *
 * Every stack word read lies in the thread's stack [lo, hi), at or above
 * the frame's sp: a wrong rule cannot fault. Anything not modelled — no
 * FDE for a pc (but an interrupted aarch64 pc in a PLT stub, which has
 * none: pltstub.h), a DWARF expression, a signal frame, a CFA in another
 * register, a start outside [lo, hi) (sigaltstack, makecontext, a stack
 * switched to), a read that would leave it — makes the walk give up (-1),
 * and the caller unwinds the whole stack with libunwind instead, so stacks
 * are exactly libunwind's (tests/e2e/unwind_exact.sh checks that).
 *
 * Threads: any number at once. Signal handlers: no lock, no allocation,
 * no stdio; a rule computed in a handler calls dl_iterate_phdr, as
 * libunwind's own cache misses do.
 *
 * Unloads: a module unloaded and another loaded at its address would find
 * stale rules. cprof's dlclose (it is interposed) marks an unload in
 * progress (no walk then) and, if the loader's unload count (dlpi_subs)
 * moved, a new generation: kept rules and last walks of an older one are
 * not used, and libunwind's caches are flushed. The count is also read at
 * every rule computed and every 256th walk of a thread: an unload that
 * bypasses dlclose (the C library's own, for iconv modules) is seen there,
 * and until then a walk through code loaded at its place may use the old
 * code's rules (a wrong stack, never a fault). A walk during which the
 * generation moved is given up. */
#ifndef CPROF_CFI_H
#define CPROF_CFI_H

#include <stdbool.h>
#include <stdint.h>

/* Prepares walks of up to max frames (the first call decides). The rule
 * table and the threads' last walks are mapped at the first walk; if that
 * fails (CPROF_MEMORY_LIMIT), every walk gives up: libunwind does them. */
void cfi_init(int max);

/* Where a walk's stack lies: n return addresses at pcs, and hashes[i] =
 * hash_pcs(pcs + i, n - i) (base/hash.h), mostly carried over from the
 * thread's last walk. Both are the thread's kept walk, read in place (no
 * copy of the part taken from the last walk), or, for a walk without the
 * thread's slot, the caller's arrays. hashes is NULL for a walk cut at
 * its max: what it would hash is not the stack a caller keeps. */
typedef struct {
    const uintptr_t *pcs;
    const uint64_t *hashes;
    int reused; /* frames taken from the thread's last walk */
    /* The thread's slot's busy flag, set (no other walk of this thread
     * changes what pcs and hashes point at; a nested one goes without the
     * slot) until cfi_release; NULL: nothing held. */
    int *held;
    /* One word a frame, the holder's (until cfi_release) to name the
     * stack from that frame out by its content (buckets.c: a bucket and a
     * position in its stack): a walk sets the tags of the frames it writes
     * to 0, and carries the others over with their frames (the stack from
     * each of those out is the last walk's), so a tag set names the same
     * stack in every later walk that has it. A walk joined to the last one
     * at its frame reused from the end (pcs[n - reused]) finds there what
     * was set in an earlier walk. NULL unless held and hashes is not. */
    uint64_t *tags;
    /* CFI_MEMO_BYTES of the slot's for the holder (until cfi_release): a
     * memo from such names to what it found for them (buckets.c). Zero
     * when first mapped, then kept as it is for whichever thread takes the
     * slot next: what is written there must hold for any thread. NULL
     * unless held. */
    void *memo;
} cfi_stack_t;

/* 64 KiB found only a few more of python3's start's cut stacks:
 * record_sampled 191.4 -> 189.7 M instructions (callgrind, rate 1,
 * python3 -c pass under setarch -R), for twice the lines. */
#define CFI_MEMO_BYTES (32u << 10)

/* Walks the caller's stack, the thread's stack being [lo, hi), into *out:
 * pcs[0] is the return address into the caller, then one per frame up to
 * max; pcs and hashes: the caller's room for max frames. The count n, or
 * -1 (nothing held) if a frame is not one the walk models (unwind with
 * libunwind instead). */
int cfi_walk(uintptr_t *pcs, uint64_t *hashes, int max, uintptr_t lo, uintptr_t hi,
             cfi_stack_t *out);

/* The same walk from the caller of the function whose frame address
 * (__builtin_frame_address(0), with its frame pointer set up) is frame:
 * pcs[0] is that function's return address. A hook passes its own frame,
 * so that cprof's frames between it and the walk are not walked, only to
 * be dropped (about 4 of 10 at each sampled malloc). x86-64, where the
 * frame record is at the caller's sp less 16; elsewhere it is cfi_walk
 * from cfi_walk_frame (the frames in between are walked). */
int cfi_walk_frame(const void *frame, uintptr_t *pcs, uint64_t *hashes, int max, uintptr_t lo,
                   uintptr_t hi, cfi_stack_t *out);

/* Gives back what a walk held (its cfi_stack_t's held; NULL: nothing):
 * its pcs and hashes are not read after this. */
static inline void cfi_release(int *held)
{
    if (held)
        __atomic_store_n(held, 0, __ATOMIC_RELEASE); /* after the last read of the stack */
}

#if defined(__aarch64__)
/* Maps the rule table now (outside any signal handler), if cfi_init ran;
 * whether walks can be made. */
bool cfi_prepare(void);

/* Walks the stack of an interrupted context (a signal's): pcs[0] = pc,
 * then the return addresses of the callers, up to max; sp, fp the
 * context's, lr its link register (aarch64's x30, which holds the return
 * address of a leaf or of a prologue that has not saved it; 0 where
 * there is none). The thread's last walk is neither used nor kept, the
 * table must be mapped already (cfi_prepare). The count, or -1 if a
 * frame is not modelled. For signal handlers: no lock, no allocation.
 * aarch64 only: its CPU profiler's handler (cpuring.c); x86-64's uses
 * libunwind. */
int cfi_walk_context_sigsafe(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t lr,
                             uintptr_t *pcs, int max, uintptr_t lo, uintptr_t hi);
#endif

#endif
