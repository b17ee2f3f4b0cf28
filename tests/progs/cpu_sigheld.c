/* cpu_sigheld.c — a thread that blocks SIGPROF under a running CPU
 * profile, with a SIGPROF of its own held for it (cpu_sigblock.sh;
 * sigmask.h). Linked with libcprof:
 *
 *   cpu_sigheld MS PROFILE   installs its own SIGPROF handler, starts the
 *                            profile, blocks SIGPROF, then:
 *   1. blocked_work: MS ms of CPU (cprof unwinds its samples: libunwind
 *      blocks and restores every signal meanwhile);
 *   2. a thread created now reads SIGPROF blocked, as it inherited it;
 *   3. a SIGPROF sent to itself stays pending, the handler not run;
 *   4. so it stays across a query, a SIG_SETMASK of the same mask and a
 *      SIG_BLOCK and SIG_UNBLOCK of SIGUSR1;
 *   5. held_work: MS ms of CPU, the signal still pending;
 *   6. unblocking SIGPROF runs the handler once.
 *
 * Each work runs a witness timer (ktimer.h) and prints "TRUTH <fn> <CPU ms>
 * <witness ms>"; "held ok" at the end. A failed check prints what it saw
 * on stderr and exits 1. */
#include <cprof.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ktimer.h"

#define PERIOD_NS 10000000L /* cprof's default CPROF_CPU_HZ, 100 */

static volatile double sink;
static volatile sig_atomic_t handled;
static double unit_s;

static void own_handler(int sig)
{
    (void)sig;
    handled++;
}

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* unit_s of this thread's CPU in libm (its frames send cprof's unwinder
 * to libunwind's searches), under the witness; prints its TRUTH line. */
static void spin(const char *fn)
{
    if (ktimer_start(PERIOD_NS) < 0) {
        perror("ktimer_start");
        exit(1);
    }
    double t0 = thread_cpu(), t, x = sink;
    do {
        for (int i = 0; i < 20000; i++)
            x += sin(x);
        sink = x;
    } while ((t = thread_cpu()) - t0 < unit_s);
    ktimer_stop();
    printf("TRUTH %s %.0f %ld\n", fn, (t - t0) * 1000, ktimer_periods * (PERIOD_NS / 1000000));
    ktimer_periods = 0;
}

__attribute__((noinline)) static void blocked_work(void) { spin("blocked_work"); }
__attribute__((noinline)) static void held_work(void) { spin("held_work"); }

static bool reads_blocked(void)
{
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, SIGPROF) == 1;
}

static void *child(void *arg)
{
    *(int *)arg = reads_blocked();
    return NULL;
}

/* Fails unless SIGPROF is pending and handled n times. */
static void expect(const char *when, int pending, int n)
{
    sigset_t pend;
    sigpending(&pend);
    if (sigismember(&pend, SIGPROF) != pending || handled != n) {
        fprintf(stderr, "%s: SIGPROF pending %d (want %d), handled %d (want %d)\n", when,
                sigismember(&pend, SIGPROF), pending, (int)handled, n);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s MS PROFILE\n", argv[0]);
        return 2;
    }
    unit_s = atoi(argv[1]) / 1000.0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = own_handler;
    sigaction(SIGPROF, &sa, NULL); /* cprof's handler goes in front of it */
    int rc = cprof_cpu_start(argv[2]);
    if (rc != 0) {
        fprintf(stderr, "cprof_cpu_start: %s\n", strerror(-rc));
        return 1;
    }
    sigset_t prof, usr1, cur;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    blocked_work();
    int inherited = -1;
    pthread_t t;
    pthread_create(&t, NULL, child, &inherited);
    pthread_join(t, NULL);
    if (inherited != 1) {
        fprintf(stderr, "a new thread reads SIGPROF %s\n", inherited ? "?" : "unblocked");
        return 1;
    }
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF);
    expect("sent while blocked", 1, 0);
    sigprocmask(SIG_BLOCK, NULL, &cur);
    expect("after a query", 1, 0);
    sigprocmask(SIG_SETMASK, &cur, NULL);
    expect("after SIG_SETMASK of the same mask", 1, 0);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);
    expect("after SIGUSR1 blocked and unblocked", 1, 0);
    held_work();
    expect("after held_work", 1, 0);
    if (!reads_blocked()) {
        fprintf(stderr, "the mask reads SIGPROF unblocked\n");
        return 1;
    }
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    expect("unblocked", 0, 1);
    if ((rc = cprof_cpu_stop()) != 0) {
        fprintf(stderr, "cprof_cpu_stop: %s\n", strerror(-rc));
        return 1;
    }
    printf("held ok\n");
    return 0;
}
