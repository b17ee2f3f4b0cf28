/* ktimer.h — a bare kernel CPU-time timer on the calling thread, for test
 * programs: the witness of what the kernel itself delivers, with no cprof
 * involved. The kernel notices a CPU timer's expiry only at a clock tick
 * that finds the thread running, so under load one signal stands for
 * several periods (si_overrun), and the expiries still unnoticed when the
 * thread stops running for good are lost — to cprof's timers and to this
 * one alike. A test compares cprof's samples with this witness, not with
 * an ideal that the kernel cannot deliver.
 *
 *   ktimer_start(period_ns)  a timer on this thread's CPU clock, its
 *                            signal (KTIMER_SIG) directed at this thread
 *   ktimer_stop()            deletes it
 *   ktimer_signals           signals delivered to this thread
 *   ktimer_periods           periods they stood for (1 + si_overrun each)
 *   ktimer_credit            if set, [0] also gets each signal's periods
 *                            and [1] counts the signals: a test points it
 *                            at the counters of the work the thread does
 */
#ifndef KTIMER_H
#define KTIMER_H

#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KTIMER_SIG SIGUSR2

static __thread volatile long ktimer_signals, ktimer_periods;
static __thread timer_t ktimer_id;
static __thread volatile long *volatile ktimer_credit;

static void ktimer_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    long periods = 1 + (si->si_overrun > 0 ? si->si_overrun : 0);
    ktimer_signals++;
    ktimer_periods += periods;
    if (ktimer_credit) {
        ktimer_credit[0] += periods;
        ktimer_credit[1]++;
    }
}

/* 0, or -1 with errno. */
static int ktimer_start(long period_ns)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = ktimer_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    /* Both timers expire at the same tick: with SIGPROF blocked here, a
     * profiler's signal waits for this handler's return and stops the
     * program where it was, not at this handler's first instruction. */
    sigfillset(&sa.sa_mask);
    if (sigaction(KTIMER_SIG, &sa, NULL) < 0)
        return -1;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = KTIMER_SIG;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &ktimer_id) < 0)
        return -1;
    struct itimerspec its = {{0, period_ns}, {0, period_ns}};
    return timer_settime(ktimer_id, 0, &its, NULL);
}

static void ktimer_stop(void)
{
    timer_delete(ktimer_id);
}

#endif
