/* sigmask.c — the program's signal masks with SIGPROF kept deliverable
 * (see sigmask.h).
 *
 * Per thread: `want`, whether the program blocks SIGPROF (what it reads
 * back), and `open`, whether the real mask is known to let SIGPROF
 * through. Until a thread's first interposed call after sigmask_enable,
 * its real mask is the program's own: its SIGPROF bit is the wish. Every
 * interposed call leaves SIGPROF deliverable: SIG_BLOCK and SIG_SETMASK
 * drop it from the set, SIG_UNBLOCK and a query add it to the unblocked
 * ones. A thread whose real mask blocked SIGPROF may have cprof's timer
 * signal pending, standing for every period since (si_overrun): it
 * arrives as the call returns, and `catchup` tells the handler that its
 * stack is not where that time was spent. */
#include "sigmask.h"

#include "rt.h"
#include "threadhook.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);

static mask_fn next_pthread_sigmask, next_sigprocmask;
static int enabled;

static __thread struct {
    uint8_t want;    /* the program blocks SIGPROF */
    uint8_t open;    /* the real mask lets SIGPROF through */
    uint8_t catchup; /* inside the call that may open it */
} self __attribute__((tls_model("initial-exec")));

static mask_fn resolve(mask_fn *slot, const char *name)
{
    mask_fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (RT_LIKELY(f != NULL))
        return f;
    uint32_t g = rt_guard_enter();
    f = (mask_fn)dlsym(RTLD_NEXT, name);
    rt_guard_leave(g);
    if (!f) {
        rt_warn("cannot find the next %s; aborting", name);
        abort();
    }
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

/* The program's (how, set, old) with SIGPROF left deliverable, through
 * next. ok(rc) says whether next succeeded (the two functions report
 * errors differently). */
static int opened(mask_fn next, bool (*ok)(int), int how, const sigset_t *set, sigset_t *old)
{
    sigset_t use;
    int use_how = how;
    if (set) {
        use = *set;
        if (how == SIG_BLOCK || how == SIG_SETMASK)
            sigdelset(&use, SIGPROF);
        else if (how == SIG_UNBLOCK)
            sigaddset(&use, SIGPROF);
        else
            return next(how, set, old); /* EINVAL, as the program asked */
    } else {
        /* A query: also makes SIGPROF deliverable, invisibly. */
        sigemptyset(&use);
        sigaddset(&use, SIGPROF);
        use_how = SIG_UNBLOCK;
    }
    sigset_t real_old;
    self.catchup = !self.open;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int rc = next(use_how, &use, &real_old);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self.catchup = 0;
    if (!ok(rc))
        return rc;
    bool was = self.open ? self.want : (self.want || sigismember(&real_old, SIGPROF) == 1);
    bool want = was;
    if (set && how == SIG_SETMASK)
        want = sigismember(set, SIGPROF) == 1;
    else if (set && sigismember(set, SIGPROF) == 1)
        want = how == SIG_BLOCK;
    self.want = want;
    self.open = 1;
    if (old) {
        *old = real_old;
        if (was)
            sigaddset(old, SIGPROF);
        else
            sigdelset(old, SIGPROF);
    }
    return rc;
}

/* The interposed call: cprof's own calls (guard set: its threads block
 * SIGPROF) and every call before the first CPU profile (or in a fork
 * child) go through as they are; one that may block SIGPROF leaves the
 * thread's state unknown. */
static int masked(mask_fn next, bool (*ok)(int), int how, const sigset_t *set, sigset_t *old)
{
    if (!__atomic_load_n(&enabled, __ATOMIC_RELAXED) || rt_self.guard) {
        int rc = next(how, set, old);
        if (ok(rc) && set && how != SIG_UNBLOCK && sigismember(set, SIGPROF) == 1)
            self.open = 0;
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
    return masked(resolve(&next_pthread_sigmask, "pthread_sigmask"), ok_errnum, how, set, old);
}

RT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    return masked(resolve(&next_sigprocmask, "sigprocmask"), ok_minus1, how, set, old);
}

void sigmask_open_self(void)
{
    if (self.open)
        return;
    opened(resolve(&next_pthread_sigmask, "pthread_sigmask"), ok_errnum, SIG_BLOCK, NULL, NULL);
}

bool sigmask_catchup_sigsafe(void)
{
    return self.catchup != 0;
}

bool sigmask_redirect_sigsafe(const siginfo_t *info, void *uc)
{
    if (!self.open || !self.want || !uc)
        return false;
    /* The kernel restores uc_sigmask as the handler returns: SIGPROF is
     * then blocked, as the program wished, and the signal queued again
     * now stays pending until the program unblocks it. */
    sigaddset(&((ucontext_t *)uc)->uc_sigmask, SIGPROF);
    self.open = 0;
    siginfo_t si = *info;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF, &si);
    return true;
}

/* --- threads (threadhook.h) -------------------------------------------------- */

/* In the creator: whether its program blocks SIGPROF, which the new
 * thread inherits (its real mask lets SIGPROF through). */
static void *on_create(bool internal)
{
    (void)internal;
    return (void *)(uintptr_t)(self.open && self.want ? 2 : 1);
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
    if (self.open && self.want) {
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        next_pthread_sigmask(SIG_BLOCK, &prof, NULL);
        self.open = 0;
    }
}

int sigmask_init(void)
{
    resolve(&next_pthread_sigmask, "pthread_sigmask");
    resolve(&next_sigprocmask, "sigprocmask");
    int rc = threadhook_register(&client);
    if (rc == 0 && pthread_atfork(NULL, NULL, fork_child) != 0)
        rc = -ENOMEM;
    return rc;
}

void sigmask_enable(void)
{
    __atomic_store_n(&enabled, 1, __ATOMIC_RELEASE);
}
