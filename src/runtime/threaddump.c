/* threaddump.c — other threads' stacks through a signal (see threaddump.h).
 *
 * A request is a slot (arena memory, never unmapped) tagged with the
 * collection's generation and a state:
 *
 *   IDLE --collector--> PENDING --handler--> WRITING --handler--> DONE
 *                          \--collector, deadline--> IDLE
 *
 * The handler wins PENDING -> WRITING with a compare-and-swap on the whole
 * tag (generation included), so an answer that arrives after the collector
 * gave up, or to an older generation, finds nothing to win and writes
 * nothing. A slot some handler is still WRITING is skipped by the next
 * collections until it is DONE. */
#include "threaddump.h"

#include "arena.h"
#include "labels.h"
#include "procmaps.h"
#include "rt.h"
#include "unwind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifndef CPROF_NO_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

enum { IDLE, PENDING, WRITING, DONE };

#define SLOT_DEPTH UNWIND_MAX_DEPTH
#define CHUNK_SLOTS 64
#define MAX_CHUNKS 1024 /* 65536 threads per collection */
#define IDX_BITS 20     /* sival_ptr = generation << IDX_BITS | slot index */
#define BUSY UINT32_MAX /* slot depth of an answer "ask again later" */
#define MAX_ASKS 50     /* per thread and collection */
#define GRACE_MS 50     /* for a thread that blocks the signal (see below) */

typedef struct {
    uint64_t tag; /* generation << 2 | state */
    uint32_t depth;
    uint32_t labels; /* labels_now() of the answering thread */
    uintptr_t pcs[SLOT_DEPTH];
} slot_t;

static slot_t *chunks[MAX_CHUNKS]; /* published with release */
static uint64_t generation;        /* under collect_lock */
static int want_depth;             /* frames the handler keeps */
static int answers;                /* futex word: bumped by each answer */
static int dump_sig;               /* under collect_lock; read relaxed */
static int in_handler;             /* handlers running now, in any thread */
static rt_lock_t collect_lock = RT_LOCK_INIT;

static inline uint64_t tag_sigsafe(uint64_t gen, int state)
{
    return gen << 2 | (uint64_t)state;
}

/* --- the signal handler -------------------------------------------------- */

/* Unwinds the interrupted context. The first frame is the interrupted
 * instruction itself: stored + 1 so that, like the others, pc - 1 lies in
 * its function. */
static int unwind_sigsafe(void *uc, uintptr_t *pcs, int max)
{
#ifdef CPROF_NO_LIBUNWIND /* the musl runtime: frame pointers (unwind.h) */
    return unwind_fp_context_sigsafe(uc, pcs, max);
#else
    unw_cursor_t c;
    if (max <= 0 || unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    int n = 0;
    do {
        unw_word_t ip = 0;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        pcs[n] = n == 0 ? ip + 1 : ip;
        n++;
    } while (n < max && unw_step(&c) > 0);
    return n;
#endif
}

static slot_t *slot_at_sigsafe(uint64_t idx)
{
    if (idx >= (uint64_t)MAX_CHUNKS * CHUNK_SLOTS)
        return NULL;
    slot_t *c = __atomic_load_n(&chunks[idx / CHUNK_SLOTS], __ATOMIC_ACQUIRE);
    return c ? &c[idx % CHUNK_SLOTS] : NULL;
}

static void handler_sigsafe(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    __atomic_add_fetch(&in_handler, 1, __ATOMIC_ACQ_REL);
    /* Only requests this process queued: a stray kill of this signal
     * number from elsewhere is ignored. */
    if (si->si_code == SI_QUEUE && si->si_pid == getpid()) {
        uint64_t v = (uintptr_t)si->si_value.sival_ptr;
        slot_t *s = slot_at_sigsafe(v & ((1u << IDX_BITS) - 1));
        uint64_t expect = tag_sigsafe(v >> IDX_BITS, PENDING);
        if (s && __atomic_compare_exchange_n(&s->tag, &expect, tag_sigsafe(v >> IDX_BITS, WRITING), false,
                                             __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            rt_thread_t *t = &rt_self;
            s->labels = labels_now();
            if (t->unwinding) {
                /* Interrupted inside libunwind (a heap sample, a CPU
                 * sample): its per-thread state may be half updated.
                 * Answer "busy"; the collector asks again. */
                s->depth = BUSY;
            } else {
                /* Guarded too: libunwind may lock a pthread mutex (with
                 * signals blocked), which the lock hooks must forward
                 * untouched. */
                t->unwinding = 1;
                t->guard++;
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                s->depth = (uint32_t)unwind_sigsafe(uc, s->pcs,
                                                    __atomic_load_n(&want_depth, __ATOMIC_RELAXED));
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                t->guard--;
                t->unwinding = 0;
            }
            __atomic_store_n(&s->tag, tag_sigsafe(v >> IDX_BITS, DONE), __ATOMIC_RELEASE);
            __atomic_add_fetch(&answers, 1, __ATOMIC_RELEASE);
            rt_futex_wake(&answers, 1);
        }
    }
    __atomic_sub_fetch(&in_handler, 1, __ATOMIC_RELEASE);
    errno = saved_errno;
}

/* --- the collecting side ----------------------------------------------------- */

/* libcprof.so's executable segments, for threaddump_self. */
static struct {
    uintptr_t lo, hi;
} self_text[4];
static int nself_text = -1;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || me < lo || me >= lo + ph->p_memsz)
            continue;
        int n = 0;
        for (int j = 0; j < info->dlpi_phnum && n < 4; j++) {
            const ElfW(Phdr) *x = &info->dlpi_phdr[j];
            if (x->p_type == PT_LOAD && (x->p_flags & PF_X)) {
                self_text[n].lo = info->dlpi_addr + x->p_vaddr;
                self_text[n++].hi = info->dlpi_addr + x->p_vaddr + x->p_memsz;
            }
        }
        nself_text = n;
        return 1;
    }
    return 0;
}

static bool in_self(uintptr_t pc)
{
    for (int i = 0; i < nself_text; i++)
        if (pc >= self_text[i].lo && pc < self_text[i].hi)
            return true;
    return false;
}

int threaddump_self(uintptr_t *pcs, int max_depth)
{
    if (nself_text < 0)
        rt_iterate_phdr(find_text, (void *)(uintptr_t)threaddump_self);
    uintptr_t buf[SLOT_DEPTH + 16];
    int want = (max_depth < SLOT_DEPTH ? max_depth : SLOT_DEPTH) + 16;
#ifdef CPROF_NO_LIBUNWIND /* the musl runtime: the heap sampler's walk */
    uintptr_t all[UNWIND_MAX_DEPTH];
    int n = unwind_capture(all);
    n = n < want ? n : want;
    memcpy(buf, all, (size_t)n * sizeof(*buf));
#else
    rt_self.unwinding = 1; /* a CPU-profile signal must not re-enter libunwind */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int n = unwind_backtrace_sigsafe(buf, want);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rt_self.unwinding = 0;
#endif
    int i = 0;
    while (i < n && in_self(buf[i]))
        i++;
    int d = n - i < max_depth ? n - i : max_depth;
    memcpy(pcs, buf + i, (size_t)(d > 0 ? d : 0) * sizeof(*pcs));
    return d > 0 ? d : 0;
}

int threaddump_signal(void)
{
    return __atomic_load_n(&dump_sig, __ATOMIC_RELAXED);
}

/* The signal, installed if needed: the current one while the handler is
 * still ours, else the highest free one from SIGRTMAX-3 down. */
static int install_locked(void)
{
    struct sigaction cur;
    if (dump_sig && sigaction(dump_sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == handler_sigsafe)
        return dump_sig;
    for (int s = SIGRTMAX - 3; s >= SIGRTMIN + 3; s--) {
        if (s == dump_sig || sigaction(s, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
            (cur.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = handler_sigsafe;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGPROF); /* no CPU sample inside this unwind */
        if (sigaction(s, &sa, NULL) == 0) {
            if (dump_sig)
                rt_warn("signal %d has another handler now; thread stacks use signal %d", dump_sig,
                        s);
            rt_loader_block(s); /* its handler unwinds (rt.h) */
            __atomic_store_n(&dump_sig, s, __ATOMIC_RELAXED);
            return s;
        }
    }
    return -EAGAIN;
}

static slot_t *slot_get(size_t idx)
{
    slot_t **c = &chunks[idx / CHUNK_SLOTS];
    if (!*c) {
        slot_t *m = arena_map(CHUNK_SLOTS * sizeof(slot_t));
        if (!m)
            return NULL;
        __atomic_store_n(c, m, __ATOMIC_RELEASE);
    }
    return &(*c)[idx % CHUNK_SLOTS];
}

/* Queues the request for slot idx to tid; 0 or -errno. */
static int ask(pid_t pid, uid_t uid, pid_t tid, int sig, uint64_t gen, size_t idx)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = pid;
    si.si_uid = uid;
    si.si_value.sival_ptr = (void *)(uintptr_t)(gen << IDX_BITS | idx);
    return syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &si) == 0 ? 0 : -errno;
}

void threaddump_settle(void)
{
    for (int i = 0; i < 500 && __atomic_load_n(&in_handler, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    sched_yield(); /* the threads it woke go back to sleep */
}

int threaddump_collect(td_thread_t *th, size_t n, int max_depth, int timeout_ms)
{
    for (size_t i = 0; i < n; i++) {
        th[i].status = TD_NO_SIGNAL;
        th[i].depth = 0;
        th[i].labels = 0;
    }
    size_t *slot_of = malloc((n ? n : 1) * sizeof(*slot_of));
    int *asks = calloc(n ? n : 1, sizeof(*asks));
    bool *graced = calloc(n ? n : 1, sizeof(*graced));
    if (!slot_of || !asks || !graced) {
        free(slot_of);
        free(asks);
        free(graced);
        return -ENOMEM;
    }
    rt_lock(&collect_lock);
    int sig = install_locked();
    if (sig < 0) {
        rt_unlock(&collect_lock);
        free(slot_of);
        free(asks);
        free(graced);
        return sig;
    }
    /* A thread still in the handler of an earlier collection blocks the
     * signal for those few instructions: let them finish first. */
    threaddump_settle();
    uint64_t gen = ++generation;
    want_depth = max_depth < SLOT_DEPTH ? max_depth : SLOT_DEPTH;
    int start_answers = __atomic_load_n(&answers, __ATOMIC_ACQUIRE);
    pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
    uid_t uid = getuid();
    size_t next = 0, expected = 0, ngraced = 0;
    int64_t start_ms = rt_now_ns() / 1000000;
    for (size_t i = 0; i < n; i++) {
        if (th[i].tid == self)
            continue;
        /* A thread that blocks the signal: if one is pending already, it
         * is blocked for good (or busy in a handler of its own) and is
         * not asked again, so that at most one request waits in each
         * such thread. Otherwise it may only be passing through a signal
         * handler: it is asked, with GRACE_MS to answer. */
        int m = procmaps_task_signal(th[i].tid, sig);
        if (m < 0 || (m & PROCMAPS_SIG_PENDING)) {
            th[i].status = m < 0 ? TD_GONE : TD_BLOCKED;
            continue;
        }
        /* A free slot: any but one a late handler is still writing. */
        slot_t *s = NULL;
        while (next < (size_t)MAX_CHUNKS * CHUNK_SLOTS && (s = slot_get(next)) &&
               (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) & 3) == WRITING)
            next++;
        if (!s || next == (size_t)MAX_CHUNKS * CHUNK_SLOTS)
            continue; /* TD_NO_SIGNAL */
        size_t idx = next++;
        s->depth = 0;
        __atomic_store_n(&s->tag, tag_sigsafe(gen, PENDING), __ATOMIC_RELEASE);
        int rc = ask(pid, uid, th[i].tid, sig, gen, idx);
        if (rc < 0) {
            th[i].status = rc == -ESRCH ? TD_GONE : TD_NO_SIGNAL;
            uint64_t expect = tag_sigsafe(gen, PENDING);
            __atomic_compare_exchange_n(&s->tag, &expect, tag_sigsafe(gen, IDLE), false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED);
            continue;
        }
        th[i].status = TD_NO_ANSWER;
        slot_of[i] = idx;
        asks[i] = 1;
        expected++;
        if (m & PROCMAPS_SIG_BLOCKED) {
            graced[i] = true;
            ngraced++;
        }
    }

    /* Wait for the answers, or the deadline; ask again whoever was busy. */
    int64_t deadline = start_ms + timeout_ms;
    for (;;) {
        int seen = __atomic_load_n(&answers, __ATOMIC_ACQUIRE);
        if ((size_t)(seen - start_answers) + ngraced >= expected) {
            size_t open_ = 0, open_graced = 0;
            for (size_t i = 0; i < n; i++) {
                if (th[i].status != TD_NO_ANSWER)
                    continue;
                slot_t *s = slot_get(slot_of[i]);
                if (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) != tag_sigsafe(gen, DONE)) {
                    open_++;
                    open_graced += graced[i];
                } else if (s->depth == BUSY && asks[i] < MAX_ASKS) {
                    __atomic_store_n(&s->tag, tag_sigsafe(gen, PENDING), __ATOMIC_RELEASE);
                    if (ask(pid, uid, th[i].tid, sig, gen, slot_of[i]) == 0) {
                        asks[i]++;
                        expected++;
                        open_++;
                    } else {
                        th[i].status = TD_GONE;
                        __atomic_store_n(&s->tag, tag_sigsafe(gen, IDLE), __ATOMIC_RELEASE);
                    }
                }
            }
            if (open_ == 0)
                break;
            /* Only threads that block the signal are left: their grace. */
            if (open_ == open_graced && deadline > start_ms + GRACE_MS)
                deadline = start_ms + GRACE_MS;
        }
        int64_t left = deadline - rt_now_ns() / 1000000;
        if (left <= 0)
            break;
        rt_futex_wait(&answers, (uint32_t)seen, (left < 10 ? left : 10) * 1000000L);
    }

    /* Take the answers; withdraw the requests still pending. */
    for (size_t i = 0; i < n; i++) {
        if (th[i].status != TD_NO_ANSWER)
            continue;
        slot_t *s = slot_get(slot_of[i]);
        uint64_t expect = tag_sigsafe(gen, PENDING);
        if (__atomic_compare_exchange_n(&s->tag, &expect, tag_sigsafe(gen, IDLE), false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            if (graced[i])
                th[i].status = TD_BLOCKED; /* never answered: blocked for good */
            continue;
        }
        /* Answered, or being answered right now: that takes microseconds. */
        for (int spin = 0; spin < 1000 && __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) != tag_sigsafe(gen, DONE);
             spin++) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        if (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) != tag_sigsafe(gen, DONE) || s->depth == BUSY)
            continue;
        uint32_t d = s->depth < (uint32_t)max_depth ? s->depth : (uint32_t)max_depth;
        memcpy(th[i].pcs, s->pcs, d * sizeof(uintptr_t));
        th[i].depth = d;
        th[i].labels = s->labels;
        th[i].status = TD_OK;
    }
    rt_unlock(&collect_lock);
    free(slot_of);
    free(asks);
    free(graced);
    return 0;
}
