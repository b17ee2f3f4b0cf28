/* dumpsig.c — the dump signal (see dumpsig.h). */
#include "dumpsig.h"

#include "dump.h"
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static sigaction_fn next_sigaction;
static int dump_sig;                  /* 0 until installed */
static struct sigaction slots[2];     /* the program's action: written into */
static struct sigaction *prog;        /*   the slot prog does not point to */
static const struct sigaction default_action; /* SIG_DFL: after SA_RESETHAND */

static sigaction_fn next(void)
{
    sigaction_fn f = __atomic_load_n(&next_sigaction, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&next_sigaction, f, __ATOMIC_RELEASE);
    }
    return f;
}

void dumpsig_resolve(void)
{
    next();
}

static void handler_sigsafe(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    dump_trigger_sigsafe(DUMP_SIGNAL);
    errno = saved;
    const struct sigaction *a = __atomic_load_n(&prog, __ATOMIC_ACQUIRE);
    if (a->sa_flags & SA_RESETHAND) /* one-shot: the program's action is the default again */
        __atomic_store_n(&prog, (struct sigaction *)&default_action, __ATOMIC_RELEASE);
    if (a->sa_flags & SA_SIGINFO) {
        if (a->sa_sigaction)
            a->sa_sigaction(sig, info, uc);
    } else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN) {
        a->sa_handler(sig);
    }
}

/* The kernel's action for the program's: cprof's handler with the
 * program's mask and flags. Without a handler of the program's, the
 * signal restarts what it interrupts: the program expects no EINTR from
 * a signal it does not handle. */
static int set_kernel(const struct sigaction *program)
{
    struct sigaction sa = *program;
    sa.sa_sigaction = handler_sigsafe;
    sa.sa_flags = (program->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    if (!(program->sa_flags & SA_SIGINFO) &&
        (program->sa_handler == SIG_DFL || program->sa_handler == SIG_IGN))
        sa.sa_flags |= SA_RESTART;
    return next()(dump_sig, &sa, NULL);
}

/* Publishes act as the program's action (into the free slot). */
static void set_program(const struct sigaction *act)
{
    struct sigaction *cur = __atomic_load_n(&prog, __ATOMIC_ACQUIRE);
    struct sigaction *slot = cur == &slots[0] ? &slots[1] : &slots[0];
    *slot = *act;
    __atomic_store_n(&prog, slot, __ATOMIC_RELEASE);
}

int dumpsig_install(int sig)
{
    struct sigaction old;
    if (!next() || next()(sig, NULL, &old) < 0)
        return -errno;
    set_program(&old);
    dump_sig = sig;
    if (set_kernel(&old) < 0) {
        dump_sig = 0;
        return -errno;
    }
    return 0;
}

RT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = next();
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (sig == 0 || sig != __atomic_load_n(&dump_sig, __ATOMIC_RELAXED))
        return f(sig, act, old);
    struct sigaction mine = *__atomic_load_n(&prog, __ATOMIC_ACQUIRE);
    if (act) {
        if (set_kernel(act) < 0)
            return -1;
        set_program(act);
    }
    if (old)
        *old = mine;
    return 0;
}

/* glibc's signal calls its own sigaction, not the interposed one. BSD
 * semantics, as glibc's: restart, the signal blocked in its handler. */
typedef void (*handler_fn)(int);

RT_EXPORT handler_fn signal(int sig, handler_fn handler)
{
    struct sigaction act = {0}, old;
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (sig > 0 && sig < NSIG && sigaddset(&act.sa_mask, sig) < 0)
        return SIG_ERR;
    if (sigaction(sig, &act, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}
