/* cpuring.c — the SIGPROF handler and the sample ring (see cpuring.h). */
#include "cpuring.h"

#include "arena.h"
#include "cfi.h"
#include "labels.h"
#include "rt.h"
#include "sigmask.h"
#include "stackbounds.h"
#include "unwfds.h"
#include "trace.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#ifdef CPROF_NO_LIBUNWIND
#include "unwind.h"
#else
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define RING_BYTES (2u << 20) /* target size of the ring */
#define MIN_SLOTS 512u
#define MAX_SLOTS 2048u
#define MAX_OVERRUN 100000 /* one signal never stands for more periods */
#define STACK_MAX 256      /* the largest CPROF_DEPTH */

/* A slot: the Vyukov sequence number, then the sample. */
typedef struct {
    uint64_t seq;   /* == position: free for the producer at that position;
                       == position + 1: published for the consumer */
    uint32_t depth;  /* 0: periods spent with SIGPROF blocked, no stack */
    uint32_t count;
    int64_t ts;      /* CLOCK_MONOTONIC ns while a trace runs, else 0 */
    uint64_t thread; /* trace_thread_sigsafe() */
    uint32_t labels; /* labels_now() */
    uintptr_t pcs[];
} slot_t;

static char *slots;      /* nslots slots of `stride` bytes, from the arena */
static size_t stride;
static uint64_t nslots;  /* a power of two */
static int max_depth;

/* Producers' and consumer's positions, on their own cache lines. */
static struct {
    _Alignas(64) uint64_t tail; /* next position to reserve (producers) */
    _Alignas(64) uint64_t head; /* next position to read (consumer) */
    _Alignas(64) uint64_t lost; /* periods dropped: ring full */
    int enabled;                /* record samples */
    int inflight;               /* handlers past the enabled check */
    int wake_seq;               /* futex word of cpuring_wait */
    int wake_sent;              /* a half-full wake is outstanding */
} ring;

static char cookie; /* its address marks cprof's timer signals */
static bool chained;
static struct sigaction prev_action; /* the program's SIGPROF handler */

static __thread uint8_t ignored __attribute__((tls_model("initial-exec")));

/* libunwind keeps per-thread state in its own TLS, which glibc allocates
 * with malloc at a thread's first use when libunwind was dlopened (cprof
 * attach). From the handler, that malloc deadlocks a thread interrupted
 * inside malloc or free (the arena lock is not recursive). So a thread
 * unwinds from the handler only once libunwind ran on it outside a signal
 * (ready), or when its interrupted PC lies outside the code that could
 * hold such a lock: the C library, the loader, the allocator (unsafe). */
static __thread uint8_t unw_ready __attribute__((tls_model("initial-exec")));
#if defined(__aarch64__)
/* The cfi walk's table is mapped (cfi_prepare): walks from the signal's
 * registers are tried first (capture_sigsafe). */
static bool use_cfi;
#endif
#define NUNSAFE 3
static struct {
    uintptr_t lo, hi;
} unsafe[NUNSAFE];

static inline slot_t *slot_at(uint64_t pos)
{
    return (slot_t *)(slots + (size_t)(pos & (nslots - 1)) * stride);
}

/* --- the handler ------------------------------------------------------------- */

/* Reserves the slot for the next sample; NULL when the ring is full. */
static slot_t *reserve_sigsafe(uint64_t *pos_out)
{
    uint64_t pos = __atomic_load_n(&ring.tail, __ATOMIC_RELAXED);
    for (;;) {
        slot_t *s = slot_at(pos);
        uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        int64_t diff = (int64_t)(seq - pos);
        if (diff == 0) {
            if (__atomic_compare_exchange_n(&ring.tail, &pos, pos + 1, true, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                *pos_out = pos;
                return s;
            }
        } else if (diff < 0) {
            return NULL; /* the consumer has not freed this slot yet: full */
        } else {
            pos = __atomic_load_n(&ring.tail, __ATOMIC_RELAXED);
        }
    }
}

static void publish_sigsafe(slot_t *s, uint64_t pos)
{
    __atomic_store_n(&s->seq, pos + 1, __ATOMIC_RELEASE);
    uint64_t fill = pos + 1 - __atomic_load_n(&ring.head, __ATOMIC_RELAXED);
    if (fill >= nslots / 2 && !__atomic_exchange_n(&ring.wake_sent, 1, __ATOMIC_RELAXED)) {
        __atomic_add_fetch(&ring.wake_seq, 1, __ATOMIC_RELEASE);
        rt_futex_wake(&ring.wake_seq, 1);
    }
}

/* Frames of the handler itself above the interrupted ones: this
 * function, record_sigsafe, handler_sigsafe, the kernel's signal
 * trampoline, with room to spare. */
#define HANDLER_FRAMES 8

/* The interrupted thread's stack, leaf first, into pcs (room for max +
 * HANDLER_FRAMES entries; at most max kept), with libunwind.
 * Always libunwind, also under CPROF_UNWIND=fp: a frame-pointer walk from
 * an arbitrary instruction loses the caller of every leaf function that
 * sets up no frame (gcc omits it in leaves even with
 * -fno-omit-frame-pointer); the DWARF unwind tables are exact at every
 * instruction.
 *
 * Fast path: unw_backtrace from here, through the signal frame, keeping
 * what follows the interrupted PC. It caches each frame's shape per thread
 * (2 µs for 60 frames here, against 130 µs for unw_step from the ucontext,
 * which takes two sigprocmask calls per frame). Its first use on a thread
 * creates that cache: mmap and a pthread_setspecific on a key libunwind
 * made at cprof's start (cpuring_prepare), with an index low enough that
 * glibc stores it in the thread descriptor without allocating. Should the
 * interrupted PC not be among its frames (it gave up and restarted), the
 * walk is redone from the signal's ucontext with unw_step. */
#ifdef CPROF_NO_LIBUNWIND
/* Built without libunwind (the musl runtime, Makefile): the frame-pointer
 * chain from the interrupted context, which loses the caller of a leaf
 * that sets up no frame. */
static int capture_sigsafe(ucontext_t *uc, uintptr_t *pcs, int max)
{
    return unwind_fp_context_sigsafe(uc, pcs, max);
}
#else
static int capture_sigsafe(ucontext_t *uc, uintptr_t *pcs, int max)
{
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
#else
#error "cpuring.c: unsupported architecture"
#endif
    /* +1: the writer decrements every PC to name the call site; the leaf
     * is the interrupted instruction itself (as in Go's CPU profiles). */
    rt_thread_t *t = &rt_self;
#if defined(__aarch64__)
    /* aarch64: the cfi walk from the signal's registers, where it models
     * every frame (x30 holds the return address of a leaf and of a PLT
     * stub, which has no FDE: pltstub.h): libunwind 1.6
     * does not strip pointer-authentication codes, and loses the callers
     * of a pac-ret program. Within the thread's stack bounds (learned
     * here at its first sample: stackbounds.h is signal-safe), not on
     * another stack. */
    if (use_cfi && (t->stack_hi || stackbounds_get(t)) && t->stack_hi > t->stack_lo &&
        !t->stack_once) {
        const mcontext_t *m = &uc->uc_mcontext;
        int n = cfi_walk_context_sigsafe(pc, m->sp, m->regs[29], m->regs[30], pcs, max,
                                         t->stack_lo, t->stack_hi);
        if (n > 0) {
            pcs[0] = pc + 1;
            return n;
        }
    }
#endif
    if (t->unwinding || !unwfds_ok_sigsafe()) {
        pcs[0] = pc + 1;
        return 1; /* libunwind's per-thread state is this signal's victim,
                   * or its pipe the program's (unwfds.h) */
    }
    if (!unw_ready) {
        for (int k = 0; k < NUNSAFE; k++)
            if (pc - unsafe[k].lo < unsafe[k].hi - unsafe[k].lo) {
                pcs[0] = pc + 1;
                return 1; /* its TLS may be malloc'ed below (see unw_ready) */
            }
        unw_ready = 1;
    }
    /* Flagged as the heap sampler's unwinds are, for whatever interrupts
     * this one (the threads profile's signal), and guarded: libunwind may
     * lock a mutex of its own (signals blocked), which cprof's lock hooks
     * must forward untouched. */
    t->unwinding = 1;
    t->guard++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    /* Straight into the slot: the handler's own frames first, then the
     * interrupted PC, then its callers, which move up behind the leaf. */
    int n = 1;
    int m = unwind_backtrace_sigsafe(pcs, max + HANDLER_FRAMES), i = 0;
    while (i < m && i < HANDLER_FRAMES && pcs[i] != pc)
        i++;
    if (i < m && pcs[i] == pc) {
        n = m - i < max ? m - i : max;
        memmove(pcs + 1, pcs + i + 1, (size_t)(n - 1) * sizeof(*pcs));
        pcs[0] = pc + 1;
        goto done;
    }
    pcs[0] = pc + 1;
    unw_cursor_t c;
    if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        while (n < max && unw_step(&c) > 0) {
            unw_word_t ip;
            if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
                break;
            pcs[n++] = (uintptr_t)ip;
        }
    }
done:
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->guard--;
    t->unwinding = 0;
    return n;
}
#endif

static void record_sigsafe(const siginfo_t *info, ucontext_t *uc)
{
    uint32_t count = 1;
    if (info->si_overrun > 0)
        count += info->si_overrun < MAX_OVERRUN ? (uint32_t)info->si_overrun : MAX_OVERRUN;
    uint64_t pos;
    slot_t *s = reserve_sigsafe(&pos);
    if (!s) {
        __atomic_add_fetch(&ring.lost, count, __ATOMIC_RELAXED);
        return;
    }
    s->count = count;
    s->labels = labels_now();
    s->ts = 0;
    s->thread = 0;
    if (trace_on()) { /* the execution trace shows the sample too */
        s->ts = rt_now_ns();
        s->thread = trace_thread_sigsafe();
    }
    /* A signal held back while the thread blocked SIGPROF arrives as the
     * program unblocks it: here is not where its periods were spent. */
    s->depth = sigmask_catchup_sigsafe() ? 0 : (uint32_t)capture_sigsafe(uc, s->pcs, max_depth);
    publish_sigsafe(s, pos);
}

/* A SIGPROF that is not cprof's: to the program's handler, if it had one. */
static void chain_sigsafe(int sig, siginfo_t *info, void *uc)
{
    if (prev_action.sa_flags & SA_SIGINFO) {
        if (prev_action.sa_sigaction)
            prev_action.sa_sigaction(sig, info, uc);
    } else if (prev_action.sa_handler != SIG_DFL && prev_action.sa_handler != SIG_IGN &&
               prev_action.sa_handler) {
        prev_action.sa_handler(sig);
    }
}

static void handler_sigsafe(int sig, siginfo_t *info, void *uc)
{
    if (!info || info->si_code != SI_TIMER || info->si_value.sival_ptr != &cookie) {
        /* The program's own SIGPROF, on a thread that blocks it in all but
         * cprof's reality: pending until unblocked, as without cprof. */
        int saved = errno;
        bool held = info && sigmask_redirect_sigsafe(info);
        errno = saved;
        if (!held)
            chain_sigsafe(sig, info, uc);
        return;
    }
    int saved = errno;
    __atomic_add_fetch(&ring.inflight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ring.enabled, __ATOMIC_SEQ_CST) && !ignored)
        record_sigsafe(info, uc);
    __atomic_sub_fetch(&ring.inflight, 1, __ATOMIC_RELEASE);
    errno = saved;
}

/* --- control ------------------------------------------------------------------ */

/* The span of the module holding addr (first PT_LOAD to last). */
static int module_span(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t *r = arg, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (r[0] - lo >= hi - lo)
        return 0;
    r[1] = lo;
    r[2] = hi;
    return 1;
}

void cpuring_prepare(void)
{
    /* Resolved in the global scope, as the loader's own malloc is. */
    static const char *const names[NUNSAFE] = {"gnu_get_libc_version", "__tls_get_addr", "malloc"};
    for (int k = 0; k < NUNSAFE; k++) {
        uintptr_t r[3] = {(uintptr_t)dlsym(RTLD_DEFAULT, names[k]), 0, 0};
        if (r[0] && rt_iterate_phdr(module_span, r)) {
            unsafe[k].lo = r[1];
            unsafe[k].hi = r[2];
        }
    }
    cpuring_thread_ready();
}

void cpuring_thread_ready(void)
{
#ifdef CPROF_NO_LIBUNWIND
    unw_ready = 1; /* no libunwind to prepare */
#else
    if (unw_ready || !unwfds_ok_sigsafe())
        return;
    rt_thread_t *t = &rt_self;
    void *one[1];
    t->unwinding = 1; /* a signal now records the leaf alone */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    unw_backtrace(one, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->unwinding = 0;
    unw_ready = 1;
#endif
}

int cpuring_init(int depth)
{
    if (depth > STACK_MAX)
        depth = STACK_MAX;
    if (!slots) {
#if defined(__aarch64__)
        use_cfi = cfi_prepare();
#endif
        max_depth = depth;
        stride = (offsetof(slot_t, pcs) + (size_t)(depth + HANDLER_FRAMES) * sizeof(uintptr_t) +
                  63) & ~(size_t)63;
        uint64_t n = MAX_SLOTS;
        while (n > MIN_SLOTS && n * stride > RING_BYTES)
            n /= 2;
        char *mem = arena_map((size_t)n * stride);
        if (!mem)
            return -ENOMEM;
        nslots = n;
        slots = mem;
        cpuring_reset();
    }
    if (!cpuring_handler_intact()) {
        /* First start, or the program installed a handler of its own
         * since: (re)install ours in front of it. */
        struct sigaction sa, prev;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = handler_sigsafe;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        /* Nothing the program or cprof catches runs inside this handler
         * (another unwinder could find libunwind's per-thread state half
         * updated), except the synchronous faults, whose handlers must. */
        sigfillset(&sa.sa_mask);
        sigdelset(&sa.sa_mask, SIGSEGV);
        sigdelset(&sa.sa_mask, SIGBUS);
        sigdelset(&sa.sa_mask, SIGILL);
        sigdelset(&sa.sa_mask, SIGFPE);
        sigdelset(&sa.sa_mask, SIGTRAP);
        if (sigaction(SIGPROF, &sa, &prev) < 0)
            return -errno;
        prev_action = prev;
        chained = (prev.sa_flags & SA_SIGINFO)
                      ? prev.sa_sigaction != NULL
                      : prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN;
    }
    return 0;
}

bool cpuring_handler_intact(void)
{
    struct sigaction cur;
    return sigaction(SIGPROF, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
           cur.sa_sigaction == handler_sigsafe;
}

void *cpuring_cookie(void)
{
    return &cookie;
}

bool cpuring_chained(void)
{
    return chained;
}

void cpuring_enable(bool on)
{
    __atomic_store_n(&ring.enabled, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

void cpuring_quiesce(void)
{
    /* A handler that saw `enabled` counted itself first (both seq_cst), so
     * once this reads 0 after disabling, no handler writes any more. */
    while (__atomic_load_n(&ring.inflight, __ATOMIC_SEQ_CST) != 0)
        sched_yield();
}

void cpuring_reset(void)
{
    for (uint64_t i = 0; i < nslots; i++)
        __atomic_store_n(&slot_at(i)->seq, i, __ATOMIC_RELAXED);
    ring.head = ring.tail = 0;
    ring.lost = 0;
    ring.wake_sent = 0;
    /* Not `inflight`: a SIGPROF queued before the last stop may still be
     * passing through the handler (it records nothing while disabled). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void cpuring_fork_child(void)
{
    ring.enabled = 0;
    ring.inflight = 0; /* handlers of threads that are not in the child */
    if (slots)
        cpuring_reset();
}

void cpuring_ignore_this_thread(void)
{
    ignored = 1;
}

bool cpuring_peek(cpuring_sample_t *out)
{
    slot_t *s = slot_at(ring.head);
    if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != ring.head + 1)
        return false;
    out->pcs = s->pcs;
    out->depth = s->depth;
    out->count = s->count;
    out->ts = s->ts;
    out->thread = s->thread;
    out->labels = s->labels;
    return true;
}

void cpuring_release(void)
{
    uint64_t pos = ring.head;
    __atomic_store_n(&slot_at(pos)->seq, pos + nslots, __ATOMIC_RELEASE);
    __atomic_store_n(&ring.head, pos + 1, __ATOMIC_RELAXED);
}

uint64_t cpuring_take_lost(void)
{
    return __atomic_exchange_n(&ring.lost, 0, __ATOMIC_RELAXED);
}

void cpuring_wait(int timeout_ms)
{
    int seq = __atomic_load_n(&ring.wake_seq, __ATOMIC_ACQUIRE);
    __atomic_store_n(&ring.wake_sent, 0, __ATOMIC_RELAXED);
    uint64_t fill = __atomic_load_n(&ring.tail, __ATOMIC_RELAXED) - ring.head;
    if (fill >= nslots / 2)
        return;
    rt_futex_wait(&ring.wake_seq, (uint32_t)seq, (int64_t)timeout_ms * 1000000);
}

bool cpuring_empty(void)
{
    return __atomic_load_n(&ring.tail, __ATOMIC_ACQUIRE) == ring.head;
}

void cpuring_wake(void)
{
    __atomic_add_fetch(&ring.wake_seq, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&ring.wake_seq, 1);
}
