/* unwind.c — capturing the stack of a sampled event (see unwind.h). */
#include "unwind.h"

#include "cfi.h"
#include "rt.h"
#include "stackbounds.h"
#include "unwfds.h"

#include "base/hash.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#ifndef CPROF_NO_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

typedef struct {
    uintptr_t lo, hi;
} range_t;

static int unwinder;
static int max_depth = 64;
bool unwind_check; /* CPROF_UNWIND_CHECK */
static uint64_t checked, mismatched, truncated;
static uint64_t cfi_walked, cfi_fell_back, cfi_reused; /* counted for the check */
static uint64_t memo_found; /* buckets found from the memo, checked */
static range_t skip[24]; /* cprof's text, operator new & co */
static int nskip;
static range_t skip_all; /* from the lowest range's start to the highest's end */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz) {
            for (int j = 0; j < info->dlpi_phnum && nskip < 8; j++) {
                const ElfW(Phdr) *x = &info->dlpi_phdr[j];
                if (x->p_type == PT_LOAD && (x->p_flags & PF_X))
                    skip[nskip++] = (range_t){info->dlpi_addr + x->p_vaddr,
                                              info->dlpi_addr + x->p_vaddr + x->p_memsz};
            }
            return 1;
        }
    }
    return 0;
}

/* The size of the function at addr, from its dynamic symbol; 0 unknown
 * (musl has no dladdr1: its C++ programs keep operator new's frames). */
static size_t symbol_size(void *addr)
{
#ifdef __GLIBC__
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    return dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym ? sym->st_size : 0;
#else
    (void)addr;
    return 0;
#endif
}

/* operator new and friends are allocator entry points, like malloc: Go
 * hides its runtime's frames the same way. */
static void skip_symbols(void)
{
    static const char *const names[] = {
        "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
        "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
        "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *addr = dlsym(RTLD_DEFAULT, names[i]);
        size_t size = addr ? symbol_size(addr) : 0;
        if (!size || nskip >= (int)(sizeof(skip) / sizeof(skip[0])))
            continue;
        skip[nskip++] = (range_t){(uintptr_t)addr, (uintptr_t)addr + size};
    }
}

/* Sorts the ranges and joins those that overlap (cprof's own operator
 * new lies in its text), for skipped's binary search. */
static void merge_skips(void)
{
    for (int i = 1; i < nskip; i++)
        for (int j = i; j > 0 && skip[j].lo < skip[j - 1].lo; j--) {
            range_t r = skip[j];
            skip[j] = skip[j - 1];
            skip[j - 1] = r;
        }
    int n = 0;
    for (int i = 0; i < nskip; i++) {
        if (n && skip[i].lo <= skip[n - 1].hi) {
            if (skip[i].hi > skip[n - 1].hi)
                skip[n - 1].hi = skip[i].hi;
        } else {
            skip[n++] = skip[i];
        }
    }
    nskip = n;
    skip_all = n ? (range_t){skip[0].lo, skip[n - 1].hi} : (range_t){0, 0};
}

void unwind_init(int which, int depth, bool check_each)
{
    unwinder = which;
    if (which == UNWIND_CFI)
        cfi_init(depth + UNWIND_SLACK);
    max_depth = depth;
    unwind_check = check_each;
    static bool learned;
    if (learned)
        return;
    learned = true;
    rt_iterate_phdr(find_self, (void *)(uintptr_t)unwind_init);
    skip_symbols();
    merge_skips();
#ifndef CPROF_NO_LIBUNWIND
    /* No cache of unwind rules (unwfds.c set it so at the start; kept
     * here too, as the check's reference must not reuse what an unload
     * made stale). */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
#endif
}

/* Whether pc is in cprof's text or operator new & co: the range with the
 * highest start at or below pc holds it, if any does. Asked of every
 * sampled stack's top frame, with ten or so ranges in a C++ program. */
static inline __attribute__((always_inline)) bool skipped(uintptr_t pc)
{
    /* Most pcs asked (the program's, where a hook's caller is) lie
     * outside all the ranges: one test. */
    if (pc - skip_all.lo >= skip_all.hi - skip_all.lo)
        return false;
    int lo = 0, hi = nskip; /* the range sought is below hi */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (skip[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && pc < skip[lo - 1].hi;
}

/* Walks the frame-pointer chain from fp within t's stack. */
static int fp_chain(const rt_thread_t *t, uintptr_t fp, uintptr_t *pcs, int max)
{
    int n = 0;
    while (n < max && fp >= t->stack_lo && fp + 16 <= t->stack_hi && !(fp & 7)) {
        const uintptr_t *frame = (const uintptr_t *)fp;
        if (!frame[1])
            break;
        pcs[n++] = frame[1];
        if (frame[0] <= fp)
            break;
        fp = frame[0];
    }
    return n;
}

/* Walks the frame-pointer chain within this thread's stack. */
static int fp_walk(uintptr_t *pcs, int max)
{
    rt_thread_t *t = &rt_self;
    if (!stackbounds_get(t))
        return 0;
    return fp_chain(t, (uintptr_t)__builtin_frame_address(0), pcs, max);
}

int unwind_fp_context_sigsafe(const void *ctx, uintptr_t *pcs, int max)
{
    const ucontext_t *uc = ctx;
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.regs[29];
#else
#error "unwind.c: unsupported architecture"
#endif
    if (max <= 0)
        return 0;
    pcs[0] = pc + 1;
    rt_thread_t *t = &rt_self;
    return stackbounds_get(t) ? 1 + fp_chain(t, fp, pcs + 1, max - 1) : 1;
}

/* How many of a raw stack's top frames (of n, 0 if n < 0) are cprof's.
 * Inlined: on every sampled allocation's path. */
static inline __attribute__((always_inline)) int own_frames(const uintptr_t *buf, int n)
{
    int i = 0;
    while (i < n && skipped(buf[i]))
        i++;
    return i;
}

/* Copies a raw stack of n frames, less its top cprof frames, into out, up
 * to max_depth of them. */
static int trim(const uintptr_t *buf, int n, int top, uintptr_t *out)
{
    int depth = n - top < max_depth ? n - top : max_depth;
    memcpy(out, buf + top, (size_t)depth * sizeof(*out));
    return depth;
}

/* The reference unwind of CPROF_UNWIND_CHECK: libunwind's step by step
 * walk, not unw_backtrace's cached fast path. */
static __attribute__((noinline)) int slow_walk(uintptr_t *buf, int max)
{
#ifdef CPROF_NO_LIBUNWIND
    (void)buf, (void)max;
    return 0; /* not called: unwfds_ok_sigsafe is false */
#else
    unw_context_t uc;
    unw_cursor_t c;
    int n = 0;
    if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        buf[n++] = ip;
    } while (n < max && unw_step(&c) > 0);
    return n;
#endif
}

static void warn_stack(const char *what, const uintptr_t *pcs, int depth)
{
    char line[400];
    size_t len = 0;
    for (int i = 0; i < depth && len + 20 < sizeof(line); i++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, " %#lx", (unsigned long)pcs[i]);
    rt_warn("  %s (%d frames):%s", what, depth, line);
}

/* Compares a captured stack (and its hash, if given) with the slow
 * unwind from the same frame. */
static void check_stack(const uintptr_t *got, int depth, const uint64_t *hash)
{
    uintptr_t buf[UNWIND_MAX_DEPTH + UNWIND_SLACK], want[UNWIND_MAX_DEPTH];
    rt_self.unwinding = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int raw = unwfds_ok_sigsafe() ? slow_walk(buf, max_depth + UNWIND_SLACK) : -1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rt_self.unwinding = 0;
    if (raw < 0)
        return; /* no reference to compare with */
    int n = trim(buf, raw, own_frames(buf, raw), want);
    __atomic_fetch_add(&checked, 1, __ATOMIC_RELAXED);
    if (depth <= n && memcmp(want, got, (size_t)depth * sizeof(*got)) == 0 &&
        (!hash || *hash == hash_pcs(got, (size_t)depth))) {
        /* The frame-pointer walk ends at the first frame without one (the
         * C library's start code, at least): a true but shorter stack. */
        if (depth < n && unwinder == UNWIND_FP)
            __atomic_fetch_add(&truncated, 1, __ATOMIC_RELAXED);
        if (depth == n || unwinder == UNWIND_FP)
            return;
    }
    /* The first few are printed: enough to see what went wrong. */
    if (__atomic_fetch_add(&mismatched, 1, __ATOMIC_RELAXED) < 5) {
        rt_warn("unwind check: stack (or its hash) differs from the full unwind");
        warn_stack("captured", got, depth);
        warn_stack("full unwind", want, n);
    }
}

__attribute__((destructor)) static void check_report(void)
{
    if (unwind_check)
        rt_warn("unwind check: %llu stacks compared, %llu mismatches, %llu truncated, "
                "%llu cfi walks, %llu fallbacks, %llu reused, %llu from the memo",
                (unsigned long long)__atomic_load_n(&checked, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&mismatched, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&truncated, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&cfi_walked, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&cfi_fell_back, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&cfi_reused, __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&memo_found, __ATOMIC_RELAXED));
}

void unwind_check_bucket(const unwind_stack_t *st, bool memo, bool same)
{
    if (memo)
        __atomic_fetch_add(&memo_found, 1, __ATOMIC_RELAXED);
    if (!same && __atomic_fetch_add(&mismatched, 1, __ATOMIC_RELAXED) < 5) {
        rt_warn("unwind check: the stack's bucket is not the table's%s", memo ? " (memo)" : "");
        warn_stack("captured", st->pcs, st->depth);
    }
}

/* The stack's raw walk, cprof's frames (*top of them) still on top, into
 * *raw: buf (room for max_depth + UNWIND_SLACK frames), or the cfi walk's
 * own arrays, held (kept->held, cfi_release) until the caller is done with
 * them (*kept: the cfi walk's own out, else nothing held and no tags);
 * the hash of the stack from frame *top out into *hash if the walk gave
 * it (not if the depth cut the stack), else *hash is left alone.
 * With a frame (unwind_capture_hash), the cfi and frame-pointer walks
 * start at its caller. Inlined: one call less on every sampled
 * allocation. */
static inline __attribute__((always_inline)) int walk_raw(const void *frame, uintptr_t *buf,
                                                          const uintptr_t **raw, int *top,
                                                          uint64_t *hash, bool *hashed,
                                                          cfi_stack_t *kept)
{
    uint64_t hashes[UNWIND_MAX_DEPTH + UNWIND_SLACK];
    /* From a hook's frame, fewer than UNWIND_SLACK cprof frames are on top
     * on x86-64, but a walk cut at max_depth + 4 (walked again if it met
     * more) cost more than it saved: stacks 68 to 80 deep became cut
     * walks, hashed again here (scale 0.2: jq +3 M, sqlite3 +7 M). */
    int want = max_depth + UNWIND_SLACK, n = -1;
    *hashed = false;
    *raw = buf;
    *kept = (cfi_stack_t){.held = NULL};
    rt_thread_t *t = &rt_self;
    if (unwinder == UNWIND_FP) {
        n = frame ? (stackbounds_get(t) ? fp_chain(t, (uintptr_t)frame, buf, want) : 0)
                  : fp_walk(buf, want);
    } else {
        /* The walk writes *kept itself, nothing held or tagged if it
         * fails: no copy of its out on every sampled allocation. */
        if (unwinder == UNWIND_CFI && stackbounds_get(t))
            n = frame ? cfi_walk_frame(frame, buf, hashes, want, t->stack_lo, t->stack_hi, kept)
                      : cfi_walk(buf, hashes, want, t->stack_lo, t->stack_hi, kept);
        bool walked = n >= 0;
        if (RT_UNLIKELY(unwind_check) && unwinder == UNWIND_CFI) {
            __atomic_fetch_add(walked ? &cfi_walked : &cfi_fell_back, 1, __ATOMIC_RELAXED);
            if (kept->reused)
                __atomic_fetch_add(&cfi_reused, 1, __ATOMIC_RELAXED);
        }
        if (walked) {
            *raw = kept->pcs;
            int i = *top = own_frames(kept->pcs, n);
            /* The walk's hashes run to the stack's end: the one at the
             * first frame kept is the stack's unless the depth cuts it
             * (or no frame is kept). */
            if (kept->hashes && i < n && n - i <= max_depth) {
                *hash = kept->hashes[i];
                *hashed = true;
            }
            return n;
        }
        if (!unwfds_ok_sigsafe()) {
            /* libunwind's pipe is the program's now (unwfds.h): the
             * frame-pointer chain, as far as it goes. */
            n = fp_walk(buf, want);
        } else {
            /* Flagged: a CPU-profile signal arriving now must not re-enter
             * libunwind on this thread (cpuring.h). */
#ifndef CPROF_NO_LIBUNWIND
            t->unwinding = 1;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            n = unwind_backtrace_sigsafe(buf, want);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            t->unwinding = 0;
#endif
        }
    }
    *top = own_frames(buf, n);
    return n < 0 ? 0 : n;
}

__attribute__((noinline)) int unwind_capture(uintptr_t *out)
{
    uintptr_t buf[UNWIND_MAX_DEPTH + UNWIND_SLACK];
    const uintptr_t *raw;
    uint64_t hash;
    bool hashed;
    cfi_stack_t kept;
    int top, n = walk_raw(NULL, buf, &raw, &top, &hash, &hashed, &kept);
    int depth = trim(raw, n, top, out);
    cfi_release(kept.held);
    if (RT_UNLIKELY(unwind_check))
        check_stack(out, depth, NULL);
    return depth;
}

__attribute__((noinline)) void unwind_capture_hash(const void *frame, uintptr_t *buf,
                                                   unwind_stack_t *st)
{
    bool hashed;
    cfi_stack_t kept;
    int top, n = walk_raw(frame, buf, &st->pcs, &top, &st->hash, &hashed, &kept);
    /* Read where the walk left it: cprof's frames (operator new's, or all
     * of them for a walk not from a frame) skipped, the depth cut. */
    st->pcs += top;
    st->depth = n - top < max_depth ? n - top : max_depth;
    st->held = kept.held;
    bool whole = kept.tags && st->depth == n - top;
    st->tags = whole ? kept.tags + top : NULL;
    /* A cut stack, kept by the walk, finds its bucket in the memo too:
     * by its whole content (buckets.c). */
    st->memo = st->depth ? kept.memo : NULL;
    /* cprof's frames are among those walked anew, but for a walk joined
     * inside them (one not from a hook's frame). */
    st->fresh = n - kept.reused > top ? n - kept.reused - top : 0;
    /* A cut stack's hash only if its bucket is not in the memo. */
    if (!hashed)
        st->hash = st->memo && !whole && !unwind_check ? 0 : hash_pcs(st->pcs, (size_t)st->depth);
    if (RT_UNLIKELY(unwind_check))
        check_stack(st->pcs, st->depth, &st->hash);
}
