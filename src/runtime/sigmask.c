/* sigmask.c — the program's signal masks with SIGPROF kept deliverable
 * (see sigmask.h).
 *
 * Per thread: `want`, whether the program blocks SIGPROF (what it reads
 * back), and `open`, whether the real mask is known to let SIGPROF
 * through. Until a thread's first interposed call after sigmask_enable,
 * its real mask is the program's own: its SIGPROF bit counts in the wish
 * (`want` || real), read with a query before the call. Every interposed
 * call leaves SIGPROF deliverable: SIG_BLOCK and SIG_SETMASK drop it from
 * the set, SIG_UNBLOCK and a query add it to the unblocked ones. A thread
 * whose real mask blocked SIGPROF may have cprof's timer signal pending,
 * standing for every period since (si_overrun): it arrives as the call
 * returns, and `catchup` tells the handler that its stack is not where
 * that time was spent.
 *
 * A program's own SIGPROF reaching a thread whose program blocks it is
 * held here (`held`, `held_info`), not in the kernel: holding it there
 * would block SIGPROF for real and drop the thread out of the CPU profile
 * until the program unblocks. The call that unblocks it queues it again;
 * the interposed sigpending shows it meanwhile. Calls cprof makes itself
 * (guard set) change none of this. */
#include "sigmask.h"

#include "rt.h"
#include "threadhook.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);

typedef int (*pending_fn)(sigset_t *);

/* The next definitions, resolved by sigmask_resolve (or at a first call
 * that comes before it). */
static void *next_pthread_sigmask, *next_sigprocmask, *next_sigpending;
static int enabled;

/* What a held signal keeps of its siginfo_t: the header and the union's
 * first 16 bytes, which kill, sigqueue and timers fill (the sender's pid
 * and uid or the timer's id and overrun, then si_value). Kept short: a
 * libcprof.so dlopened late (attach.h) takes its TLS from glibc's small
 * static surplus. */
#define HELD_BYTES (offsetof(siginfo_t, si_value) + sizeof(union sigval))

static __thread struct {
    uint8_t want;    /* the program blocks SIGPROF */
    uint8_t open;    /* the real mask lets SIGPROF through */
    uint8_t catchup; /* inside the call that may open it */
    uint8_t held;    /* a program's SIGPROF waits in held_info */
    unsigned char held_info[HELD_BYTES];
} self __attribute__((tls_model("initial-exec")));

static void *resolve(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (RT_LIKELY(f != NULL))
        return f;
    uint32_t g = rt_guard_enter();
    f = dlsym(RTLD_NEXT, name);
    rt_guard_leave(g);
    if (!f) {
        rt_warn("cannot find the next %s; aborting", name);
        abort();
    }
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

/* The program's wish for SIGPROF once (how, set) applies to a thread
 * that wished `was`. */
static bool wish_after(bool was, int how, const sigset_t *set)
{
    if (!set)
        return was;
    if (how == SIG_SETMASK)
        return sigismember(set, SIGPROF) == 1;
    if (sigismember(set, SIGPROF) == 1)
        return how == SIG_BLOCK;
    return was;
}

/* The held SIGPROF, once the program no longer blocks it: queued again
 * on this thread, it arrives now (its real mask lets SIGPROF through)
 * and goes to the program's handler, as the kernel would have sent it. */
static void release_held(void)
{
    if (!self.held)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    memcpy(&si, self.held_info, HELD_BYTES);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self.held = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int saved = errno;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF, &si);
    errno = saved;
}

/* The program's (how, set, old) through next, with SIGPROF deliverable.
 * ok(rc) says whether next succeeded (the two functions report errors
 * differently). The new wish is in `want` before the real call: a
 * program's SIGPROF pending from before (the real mask blocked it) that
 * the call lets through reaches the redirect during the call, and must
 * meet the wish the program has just set. */
static int opened(mask_fn next, bool (*ok)(int), int how, const sigset_t *set, sigset_t *old)
{
    if (set && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return next(how, set, old); /* EINVAL, as the program asked */
    sigset_t real_old, use, prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    bool real_blocks = false; /* the real mask blocks SIGPROF now */
    if (!self.open) {
        int rc = next(SIG_BLOCK, NULL, &real_old);
        if (!ok(rc))
            return rc;
        real_blocks = sigismember(&real_old, SIGPROF) == 1;
    }
    bool was = self.want || real_blocks;
    int use_how = how;
    if (set) {
        use = *set;
        if (how == SIG_UNBLOCK)
            sigaddset(&use, SIGPROF);
        else
            sigdelset(&use, SIGPROF);
    } else {
        use = prof; /* a query also makes SIGPROF deliverable, invisibly */
        use_how = SIG_UNBLOCK;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self.want = wish_after(was, how, set);
    self.catchup = real_blocks;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int rc = next(use_how, &use, &real_old);
    /* SIG_BLOCK cannot unblock what the real mask blocked already. */
    if (ok(rc) && real_blocks && use_how == SIG_BLOCK)
        next(SIG_UNBLOCK, &prof, NULL);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self.catchup = 0;
    if (ok(rc))
        self.open = 1;
    else
        self.want = was;
    if (!self.want)
        release_held();
    if (ok(rc) && old) {
        *old = real_old;
        if (was)
            sigaddset(old, SIGPROF);
        else
            sigdelset(old, SIGPROF);
    }
    return rc;
}

/* The interposed call: cprof's own calls (guard set: its threads block
 * SIGPROF; libunwind blocks every signal around its searches, then
 * restores) go through as they are and leave the record of the
 * program's mask alone; every call before the first CPU profile (or in a
 * fork child) goes through too, and then the real mask is the program's
 * own. */
static int masked(mask_fn next, bool (*ok)(int), int how, const sigset_t *set, sigset_t *old)
{
    if (rt_self.guard)
        return next(how, set, old);
    if (!__atomic_load_n(&enabled, __ATOMIC_RELAXED)) {
        int rc = next(how, set, old);
        if (ok(rc) && set) {
            self.open = 0;
            self.want = 0;
        }
        return rc;
    }
    return opened(next, ok, how, set, old);
}

static bool ok_errnum(int rc)
{
    return rc == 0;
}

static bool ok_minus1(int rc)
{
    return rc >= 0;
}

RT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return masked((mask_fn)resolve(&next_pthread_sigmask, "pthread_sigmask"), ok_errnum, how, set, old);
}

RT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    return masked((mask_fn)resolve(&next_sigprocmask, "sigprocmask"), ok_minus1, how, set, old);
}

/* A held SIGPROF is pending, as the program sees it. */
RT_EXPORT int sigpending(sigset_t *set)
{
    int rc = ((pending_fn)resolve(&next_sigpending, "sigpending"))(set);
    if (rc == 0 && self.held)
        sigaddset(set, SIGPROF);
    return rc;
}

void sigmask_open_self(void)
{
    if (self.open)
        return;
    opened((mask_fn)resolve(&next_pthread_sigmask, "pthread_sigmask"), ok_errnum, SIG_BLOCK, NULL, NULL);
}

bool sigmask_catchup_sigsafe(void)
{
    return self.catchup != 0;
}

bool sigmask_redirect_sigsafe(const siginfo_t *info)
{
    if (!self.want)
        return false;
    /* One SIGPROF pending at most, as the kernel keeps a standard
     * signal: a second one while the first waits is merged into it. */
    if (!self.held) {
        memcpy(self.held_info, info, HELD_BYTES);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        self.held = 1;
    }
    return true;
}

/* --- threads (threadhook.h) -------------------------------------------------- */

/* In the creator: whether its program blocks SIGPROF, which the new
 * thread inherits (its real mask lets SIGPROF through). */
static void *on_create(bool internal)
{
    (void)internal;
    return (void *)(uintptr_t)(self.want ? 2 : 1);
}

static void on_start(void *cookie, bool internal)
{
    if (internal || !__atomic_load_n(&enabled, __ATOMIC_ACQUIRE))
        return;
    self.want = (uintptr_t)cookie == 2;
    self.open = 0; /* the inherited real mask's SIGPROF bit counts too */
    sigmask_open_self(); /* before the thread's CPU timer fires */
}

static const threadhook_client_t client = {
    .on_create = on_create,
    .on_start = on_start,
};

/* A fork child profiles nothing (cpuprof.h) and may exec: its mask
 * becomes the program's own again, SIGPROF included, until a profile of
 * its own starts. */
static void fork_child(void)
{
    __atomic_store_n(&enabled, 0, __ATOMIC_RELAXED);
    self.held = 0; /* a fork child starts with nothing pending */
    if (self.open && self.want) {
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        ((mask_fn)next_pthread_sigmask)(SIG_BLOCK, &prof, NULL);
        self.open = 0;
    }
}

void sigmask_resolve(void)
{
    resolve(&next_pthread_sigmask, "pthread_sigmask");
    resolve(&next_sigprocmask, "sigprocmask");
    resolve(&next_sigpending, "sigpending");
}

int sigmask_init(void)
{
    sigmask_resolve();
    int rc = threadhook_register(&client);
    if (rc == 0 && pthread_atfork(NULL, NULL, fork_child) != 0)
        rc = -ENOMEM;
    return rc;
}

void sigmask_enable(void)
{
    __atomic_store_n(&enabled, 1, __ATOMIC_RELEASE);
}
