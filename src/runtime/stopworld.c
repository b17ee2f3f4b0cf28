/* stopworld.c — stopping the other threads (see stopworld.h).
 *
 * A slot's states: IDLE -> PENDING (stopper, before the signal) ->
 * WRITING -> STOPPED (handler); the stopper withdraws an unanswered
 * request with PENDING -> IDLE, so a late handler wins nothing. */
#include "stopworld.h"

#include "arena.h"
#include "procmaps.h"
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { IDLE, PENDING, WRITING, STOPPED };

#define IDX_BITS 20 /* sival_ptr = generation << IDX_BITS | slot index */
#define WRITING_WAIT_MS 200

static sw_slot_t *slots; /* published with release; never unmapped */
static size_t nslots;
static uint64_t generation;     /* under stop_lock */
static uint32_t released;       /* futex word: the last generation let go */
static int answers;             /* futex word: bumped by each answer */
static int stop_sig;
static rt_lock_t stop_lock = RT_LOCK_INIT;

static inline uint64_t tag_sigsafe(uint64_t gen, int state)
{
    return gen << 2 | (uint64_t)state;
}

static void save_regs_sigsafe(sw_slot_t *s, const ucontext_t *uc)
{
    const mcontext_t *m = &uc->uc_mcontext;
    size_t n = sizeof(*m) < sizeof(s->regs) ? sizeof(*m) : sizeof(s->regs);
    memcpy(s->regs, m, n);
#if defined(__x86_64__)
    s->sp = (uintptr_t)m->gregs[REG_RSP];
#elif defined(__aarch64__)
    s->sp = (uintptr_t)m->sp;
#else
    s->sp = (uintptr_t)__builtin_frame_address(0);
#endif
}

static void handler_sigsafe(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    if (si->si_code == SI_QUEUE && si->si_pid == getpid()) {
        uint64_t v = (uintptr_t)si->si_value.sival_ptr;
        uint64_t gen = v >> IDX_BITS, idx = v & ((1u << IDX_BITS) - 1);
        sw_slot_t *all = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
        uint64_t expect = tag_sigsafe(gen, PENDING);
        if (all && idx < __atomic_load_n(&nslots, __ATOMIC_ACQUIRE) &&
            __atomic_compare_exchange_n(&all[idx].tag, &expect, tag_sigsafe(gen, WRITING), false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            sw_slot_t *s = &all[idx];
            save_regs_sigsafe(s, uc);
            s->tp = (uintptr_t)pthread_self();
            __atomic_store_n(&s->tag, tag_sigsafe(gen, STOPPED), __ATOMIC_RELEASE);
            __atomic_add_fetch(&answers, 1, __ATOMIC_RELEASE);
            rt_futex_wake(&answers, 1);
            uint32_t r;
            while ((int32_t)((r = __atomic_load_n(&released, __ATOMIC_ACQUIRE)) - (uint32_t)gen) < 0)
                rt_futex_wait(&released, r, -1);
        }
    }
    errno = saved_errno;
}

/* The signal, installed if needed (as threaddump.c chooses its own). */
static int install_locked(void)
{
    struct sigaction cur;
    if (stop_sig && sigaction(stop_sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == handler_sigsafe)
        return stop_sig;
    for (int s = SIGRTMAX - 4; s >= SIGRTMIN + 3; s--) {
        if (sigaction(s, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = handler_sigsafe;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask); /* nothing else runs in a stopped thread */
        if (sigaction(s, &sa, NULL) == 0)
            return stop_sig = s;
    }
    return -EAGAIN;
}

/* Room for n slots; a bigger table replaces the old one, which stays
 * mapped for any late handler. */
static int reserve_locked(size_t n)
{
    if (n <= nslots)
        return 0;
    if (n >= (1u << IDX_BITS))
        return -E2BIG;
    size_t want = nslots ? nslots : 64;
    while (want < n)
        want *= 2;
    sw_slot_t *m = arena_map(want * sizeof(sw_slot_t));
    if (!m)
        return -ENOMEM;
    __atomic_store_n(&slots, m, __ATOMIC_RELEASE);
    __atomic_store_n(&nslots, want, __ATOMIC_RELEASE);
    return 0;
}

int stopworld_stop(const pid_t *tids, size_t n, int timeout_ms)
{
    pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
    size_t others = 0;
    for (size_t i = 0; i < n; i++)
        others += tids[i] != self;
    rt_lock(&stop_lock);
    /* Alone, the caller needs no signal: a program that handles every
     * real-time signal can still be scanned while it has one thread. */
    int sig = others ? install_locked() : 0;
    int rc = sig < 0 ? sig : reserve_locked(n);
    if (rc < 0) {
        rt_unlock(&stop_lock);
        return rc;
    }
    uint64_t gen = ++generation;
    int start = __atomic_load_n(&answers, __ATOMIC_ACQUIRE);
    int expected = 0;
    for (size_t i = 0; i < n; i++) {
        sw_slot_t *s = &slots[i];
        __atomic_store_n(&s->tag, tag_sigsafe(gen, IDLE), __ATOMIC_RELEASE);
        /* A thread that blocks the signal would only be waited for. */
        if (tids[i] == self || procmaps_task_signal(tids[i], sig) != 0)
            continue;
        __atomic_store_n(&s->tag, tag_sigsafe(gen, PENDING), __ATOMIC_RELEASE);
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        si.si_signo = sig;
        si.si_code = SI_QUEUE;
        si.si_pid = pid;
        si.si_uid = getuid();
        si.si_value.sival_ptr = (void *)(uintptr_t)(gen << IDX_BITS | i);
        if (syscall(SYS_rt_tgsigqueueinfo, pid, tids[i], sig, &si) == 0)
            expected++;
        else
            __atomic_store_n(&s->tag, tag_sigsafe(gen, IDLE), __ATOMIC_RELEASE);
    }
    int64_t deadline = rt_now_ns() / 1000000 + timeout_ms;
    for (;;) {
        int seen = __atomic_load_n(&answers, __ATOMIC_ACQUIRE);
        int64_t left = deadline - rt_now_ns() / 1000000;
        if (seen - start >= expected || left <= 0)
            break;
        rt_futex_wait(&answers, (uint32_t)seen, (left < 10 ? left : 10) * 1000000L);
    }
    /* Withdraw the requests still pending; a handler caught writing
     * finishes in microseconds unless preempted: waited for a bounded
     * time, then left to finish alone (its answer counts if it lands before
     * stopworld_slot is asked; resume releases it either way). */
    int stopped = 0;
    int64_t give_up = rt_now_ns() / 1000000 + WRITING_WAIT_MS;
    for (size_t i = 0; i < n; i++) {
        sw_slot_t *s = &slots[i];
        uint64_t expect = tag_sigsafe(gen, PENDING);
        if (__atomic_compare_exchange_n(&s->tag, &expect, tag_sigsafe(gen, IDLE), false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        while (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) == tag_sigsafe(gen, WRITING) &&
               rt_now_ns() / 1000000 < give_up)
            sched_yield();
        stopped += __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) == tag_sigsafe(gen, STOPPED);
    }
    return stopped;
}

const sw_slot_t *stopworld_slot(size_t i)
{
    const sw_slot_t *s = &slots[i];
    return __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) == tag_sigsafe(generation, STOPPED) ? s : NULL;
}

void stopworld_resume(void)
{
    __atomic_store_n(&released, (uint32_t)generation, __ATOMIC_RELEASE);
    rt_futex_wake(&released, INT32_MAX);
    rt_unlock(&stop_lock);
}

void stopworld_fork_child(void)
{
    stop_lock = (rt_lock_t)RT_LOCK_INIT;
}
