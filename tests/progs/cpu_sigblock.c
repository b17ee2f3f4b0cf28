/* cpu_sigblock.c — threads that block every signal and compute, as
 * liblzma's workers do, for the CPU profile's test (cpu_sigblock.sh).
 *
 *   cpu_sigblock MS          (preloaded, CPROF_CPU_PROFILE) two threads
 *                            created while their creator blocks every
 *                            signal (they inherit the mask) run
 *                            inherit_work, then two threads that block
 *                            every signal themselves run self_work, MS ms
 *                            of CPU each
 *   cpu_sigblock MS main     (preloaded) the main thread runs main_work,
 *                            MS ms of CPU, with the mask it inherited
 *                            (the test's parent blocks SIGPROF and SIGINT),
 *                            making no mask call before it
 *   cpu_sigblock MS PROFILE  (built with -DLINKED) the program's own
 *                            SIGPROF handler, then two such threads made
 *                            before cprof_cpu_start(PROFILE) run
 *                            early_work without setting a mask after the
 *                            start (cprof cannot reach them), the first
 *                            exiting before the profile stops, the
 *                            second after; then, the profile still running,
 *                            a SIGPROF sent to the main thread while it
 *                            blocks SIGPROF stays pending (seen by
 *                            sigpending, the handler not run) until the
 *                            thread unblocks it; cprof_cpu_stop() at the end
 *
 * Every worker checks that its mask, as it reads it, blocks SIGPROF; it
 * lets the witness timer's signal through (ktimer.h) and prints per
 * function "TRUTH <fn> <CPU ms> <witness ms>" (sums over its two threads),
 * then "RUSAGE <ms>" (the process's CPU time), and when linked "pending ok".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif
#include "ktimer.h"

#define PERIOD_NS 10000000L /* cprof's default CPROF_CPU_HZ, 100 */

static volatile unsigned long sink;
static double unit_s;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double cpu_ms[4];
static long witness_ms[4];

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The program's view of its mask must be what it set: SIGPROF blocked. */
static void check_view(void)
{
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    if (sigismember(&cur, SIGPROF) != 1 || sigismember(&cur, SIGINT) != 1) {
        fprintf(stderr, "a worker's mask does not block SIGPROF and SIGINT\n");
        exit(1);
    }
}

/* Checks the view, and lets the witness's signal (only) through. */
static void prepare(void)
{
    check_view();
    sigset_t w;
    sigemptyset(&w);
    sigaddset(&w, KTIMER_SIG);
    pthread_sigmask(SIG_UNBLOCK, &w, NULL);
}

/* Runs the witness for unit_s of this thread's CPU, and adds CPU and
 * witness to slot. */
static void spin(int slot)
{
    if (ktimer_start(PERIOD_NS) < 0) {
        perror("ktimer_start");
        exit(1);
    }
    double t0 = thread_cpu(), t;
    unsigned long x = sink;
    do {
        for (int i = 0; i < 300000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        sink = x;
    } while ((t = thread_cpu()) - t0 < unit_s);
    ktimer_stop();
    pthread_mutex_lock(&mu);
    cpu_ms[slot] += (t - t0) * 1000;
    witness_ms[slot] += ktimer_periods * (PERIOD_NS / 1000000);
    pthread_mutex_unlock(&mu);
}

#ifndef LINKED
__attribute__((noinline)) static void inherit_work(void) { prepare(); spin(0); }
__attribute__((noinline)) static void self_work(void) { prepare(); spin(1); }
/* No mask call before the work: the witness's signal is not blocked here,
 * and cprof must reach this thread without one. */
__attribute__((noinline)) static void main_work(void) { spin(3); check_view(); }
#else
__attribute__((noinline)) static void early_work(void) { spin(2); }
#endif

#ifndef LINKED
static void *inherit_main(void *arg)
{
    (void)arg;
    inherit_work();
    return NULL;
}

static void *self_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    self_work();
    return NULL;
}

#else
static pthread_barrier_t ready, go, done, leave;

/* The first exits before the profile stops, the second after. */
static void *early_main(void *arg)
{
    prepare(); /* its last mask call: it blocks SIGPROF as the profile starts */
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&go);
    early_work();
    if (arg) {
        pthread_barrier_wait(&done);
        pthread_barrier_wait(&leave);
    }
    return NULL;
}
#endif

/* Two threads running fn (the second with a non-null argument), created
 * as liblzma does: every signal blocked around pthread_create, the
 * creator's mask restored after. */
static void pair(void *(*fn)(void *), pthread_t t[2])
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, fn, i ? t : NULL) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#ifdef LINKED
static volatile sig_atomic_t handled;

static void own_handler(int sig)
{
    (void)sig;
    handled++;
}

/* A SIGPROF of the program's own, sent while the thread blocks SIGPROF:
 * pending, not handled, until unblocked; then handled once. */
static int pending_check(void)
{
    sigset_t prof, pend;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF);
    sigpending(&pend);
    if (handled != 0 || sigismember(&pend, SIGPROF) != 1) {
        fprintf(stderr, "blocked SIGPROF: handled %d, pending %d\n", (int)handled,
                sigismember(&pend, SIGPROF));
        return 1;
    }
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    if (handled != 1) {
        fprintf(stderr, "unblocked SIGPROF: handled %d times\n", (int)handled);
        return 1;
    }
    return 0;
}
#endif

static double rusage_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

int main(int argc, char **argv)
{
    if (argc < 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s MS [PROFILE]\n", argv[0]);
        return 2;
    }
    unit_s = atoi(argv[1]) / 1000.0;
    pthread_t t[2];
#ifdef LINKED
    if (argc != 3) {
        fprintf(stderr, "linked: PROFILE expected\n");
        return 2;
    }
    /* Installed first: cprof's handler goes in front of it and passes it
     * the signals that are not cprof's. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = own_handler;
    sigaction(SIGPROF, &sa, NULL);
    pthread_barrier_init(&ready, NULL, 3);
    pthread_barrier_init(&go, NULL, 3);
    pthread_barrier_init(&done, NULL, 2);
    pthread_barrier_init(&leave, NULL, 2);
    pair(early_main, t);
    pthread_barrier_wait(&ready);
    int rc = cprof_cpu_start(argv[2]);
    if (rc != 0) {
        fprintf(stderr, "cprof_cpu_start: %s\n", strerror(-rc));
        return 1;
    }
    pthread_barrier_wait(&go);
    pthread_join(t[0], NULL);
    pthread_barrier_wait(&done);
    if (pending_check() != 0)
        return 1;
    double cpu = rusage_ms();
    if ((rc = cprof_cpu_stop()) != 0) {
        fprintf(stderr, "cprof_cpu_stop: %s\n", strerror(-rc));
        return 1;
    }
    pthread_barrier_wait(&leave);
    pthread_join(t[1], NULL);
    printf("TRUTH early_work %.0f %ld\n", cpu_ms[2], witness_ms[2]);
    printf("RUSAGE %.0f\n", cpu);
    printf("pending ok\n");
#else
    if (argc == 3 && strcmp(argv[2], "main") == 0) {
        main_work();
        printf("TRUTH main_work %.0f %ld\n", cpu_ms[3], witness_ms[3]);
        printf("RUSAGE %.0f\n", rusage_ms());
        return 0;
    }
    pair(inherit_main, t);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, self_main, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    double cpu = rusage_ms();
    printf("TRUTH inherit_work %.0f %ld\n", cpu_ms[0], witness_ms[0]);
    printf("TRUTH self_work %.0f %ld\n", cpu_ms[1], witness_ms[1]);
    printf("RUSAGE %.0f\n", cpu);
#endif
    return 0;
}
