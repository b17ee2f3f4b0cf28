/* cpu_misc.c — the CPU profile's corner cases, one per mode:
 *
 *   cpu_misc fork [HZ]     parent_burn, then a fork child runs child_burn
 *                          and exits; the parent waits and runs
 *                          parent_after (preloaded, CPROF_CPU_PROFILE);
 *                          with HZ, a bare timer of HZ on the parent's CPU
 *                          clock (ktimer.h) runs meanwhile and it prints
 *                          "witness <ms>": what the kernel delivered
 *   cpu_misc distinct HZ   CPU spread over a great many distinct stacks
 *                          (random recursion through two functions), to
 *                          grow the profiler's stack table: runs until a
 *                          bare timer of HZ on its CPU clock (ktimer.h)
 *                          got 250 signals and 1 s passed, and prints
 *                          "signals <n> periods <n> cpu <ms>"
 *   cpu_misc chain PROF    (linked) the program's own SIGPROF handler and
 *                          setitimer(ITIMER_PROF) run before and during
 *                          cprof_cpu_start(PROF)...cprof_cpu_stop(): prints
 *                          "own <n> timer <m> witness <ms>": its handler's
 *                          calls, how many of them carried cprof's
 *                          SI_TIMER, and what a bare 100 Hz timer on its
 *                          CPU clock got meanwhile
 *   cpu_misc replace PROF  (linked) the program installs a SIGPROF handler
 *                          while cprof's profile runs
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif
#include "ktimer.h"

static volatile unsigned long sink;

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void spin(double seconds)
{
    double t0 = thread_cpu();
    unsigned long x = sink;
    do {
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        sink = x;
    } while (thread_cpu() - t0 < seconds);
}

__attribute__((noinline)) static void parent_burn(void) { spin(0.3); }
__attribute__((noinline)) static void parent_after(void) { spin(0.2); }
__attribute__((noinline)) static void child_burn(void) { spin(0.3); }

static int do_fork(int hz)
{
    if (hz > 0 && ktimer_start(1000000000L / hz) < 0) {
        perror("ktimer_start");
        return 1;
    }
    parent_burn();
    pid_t pid = fork();
    if (pid == 0) {
        child_burn();
        exit(0); /* a normal exit: destructors run in the child */
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed\n");
        return 1;
    }
    parent_after();
    if (hz > 0) {
        ktimer_stop();
        printf("witness %ld\n", ktimer_periods * 1000 / hz);
    }
    return 0;
}

/* --- distinct stacks ------------------------------------------------------------- */

static unsigned long rng = 88172645463325252ul;
__attribute__((noinline)) static void left(int n);
__attribute__((noinline)) static void right(int n);

static void next(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    if (n == 0) {
        unsigned long x = sink;
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ul + 1;
        sink = x;
    } else if (rng & 1) {
        left(n - 1);
    } else {
        right(n - 1);
    }
}

__attribute__((noinline)) static void left(int n)
{
    next(n);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void right(int n)
{
    next(n);
    __asm__ volatile("" ::: "memory");
}

/* Every cprof timer signal makes one distinct stack, and the kernel
 * delivers it at the same ticks as the witness's: counting the witness's
 * signals, not seconds, makes the number of stacks known on a loaded
 * machine too (where one signal stands for several periods). */
static int distinct(int hz)
{
    double t0 = thread_cpu(), t;
    if (hz <= 0 || ktimer_start(1000000000L / hz) < 0) {
        perror("ktimer_start");
        return 1;
    }
    do {
        left(250);
        t = thread_cpu();
    } while (ktimer_signals < 250 || t - t0 < 1.0);
    ktimer_stop();
    printf("signals %ld periods %ld cpu %.0f\n", ktimer_signals, ktimer_periods, (t - t0) * 1000);
    return 0;
}

/* --- the program's own SIGPROF ------------------------------------------------------ */

#ifdef LINKED
__attribute__((noinline)) static void chained_burn(void) { spin(1.0); }

static volatile sig_atomic_t own, timer;

static void own_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    own++;
    if (info->si_code == SI_TIMER)
        timer++;
}

static void install_own(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
}

static int chain(const char *prof)
{
    install_own();
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    int rc = cprof_cpu_start(prof);
    if (rc != 0) {
        fprintf(stderr, "cprof_cpu_start: %s\n", strerror(-rc));
        return 1;
    }
    if (ktimer_start(10000000L) < 0) {
        perror("ktimer_start");
        return 1;
    }
    chained_burn();
    ktimer_stop();
    rc = cprof_cpu_stop();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    if (rc != 0) {
        fprintf(stderr, "cprof_cpu_stop: %s\n", strerror(-rc));
        return 1;
    }
    printf("own %d timer %d witness %ld\n", (int)own, (int)timer, ktimer_periods * 10);
    return 0;
}

static int replace(const char *prof)
{
    int rc = cprof_cpu_start(prof);
    if (rc != 0)
        return 1;
    spin(0.2);
    install_own();
    spin(0.3);
    rc = cprof_cpu_stop();
    printf("stop %d own %d timer %d\n", rc, (int)own, (int)timer);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "fork") == 0)
        return do_fork(argc == 3 ? atoi(argv[2]) : 0);
    if (argc == 3 && strcmp(argv[1], "distinct") == 0)
        return distinct(atoi(argv[2]));
#ifdef LINKED
    if (argc == 3 && strcmp(argv[1], "chain") == 0)
        return chain(argv[2]);
    if (argc == 3 && strcmp(argv[1], "replace") == 0)
        return replace(argv[2]);
#endif
    fprintf(stderr, "usage: %s fork [HZ] | distinct HZ | chain PROFILE | replace PROFILE\n", argv[0]);
    return 2;
}
