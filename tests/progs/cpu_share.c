/* cpu_share.c — CPU-bound threads with known shares, for the CPU profile
 * tests. Each function measures the CPU time it used on its own thread's
 * CPU clock, and the program prints it as the truth, with what a bare
 * kernel timer of 100 Hz on that clock delivered meanwhile (ktimer.h: the
 * periods of its signals, in ms), which is all a CPU-timer profiler can see:
 *
 *   TRUTH hot_three <ms> <kernel ms>   thread A: 3 units of CPU
 *   TRUTH cold_one <ms> <kernel ms>    thread B: 1 unit, then the thread exits
 *   TRUTH late_half <ms> <kernel ms>   thread C, created after profiling
 *                                      started: half a unit
 *   RUSAGE <ms>              the process's user + system CPU time
 *
 *   cpu_share UNIT_MS              (preloaded, CPROF_CPU_PROFILE)
 *   cpu_share UNIT_MS PROFILE      (built with -DLINKED: threads A and B
 *                                   exist before cprof_cpu_start(PROFILE),
 *                                   cprof_cpu_stop() at the end)
 *   cpu_share COUNTER_FILE         (not a number) forever: serve_hot and
 *                                  serve_cold (3:1) on one thread, and a
 *                                  counter written to the file every 20 ms
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif
#include "ktimer.h"

#define KTIMER_PERIOD_NS 10000000L /* cprof's default CPROF_CPU_HZ, 100 */

static volatile unsigned long sink;
static double unit_s;
static double truth[3];
static long kernel_periods[3];
static pthread_barrier_t ready;

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The work: about a millisecond of arithmetic per round, then a look at
 * the clock, until `seconds` of this thread's CPU are used; the witness
 * timer runs meanwhile. */
#define SPIN(seconds, slot)                                                     \
    do {                                                                        \
        if (ktimer_start(KTIMER_PERIOD_NS) < 0) {                               \
            perror("ktimer_start");                                             \
            exit(1);                                                            \
        }                                                                       \
        double t0_ = thread_cpu(), t_;                                          \
        unsigned long x_ = sink;                                                \
        do {                                                                    \
            for (int i_ = 0; i_ < 300000; i_++)                                 \
                x_ = x_ * 6364136223846793005ul + 1442695040888963407ul;        \
            sink = x_;                                                          \
        } while ((t_ = thread_cpu()) - t0_ < (seconds));                        \
        ktimer_stop();                                                          \
        truth[slot] = t_ - t0_;                                                 \
        kernel_periods[slot] = ktimer_periods;                                  \
    } while (0)

__attribute__((noinline)) static void hot_three(void)
{
    SPIN(3 * unit_s, 0);
}

__attribute__((noinline)) static void cold_one(void)
{
    SPIN(unit_s, 1);
}

__attribute__((noinline)) static void late_half(void)
{
    SPIN(unit_s / 2, 2);
}

static void *thread_a(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&ready);
    hot_three();
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&ready);
    cold_one();
    return NULL; /* exits long before the profile ends */
}

static void *thread_c(void *arg)
{
    (void)arg;
    late_half();
    return NULL;
}

__attribute__((noinline)) static void serve_hot(long n)
{
    unsigned long x = sink;
    for (long i = 0; i < 3 * n; i++)
        x = x * 6364136223846793005ul + 1;
    sink = x;
}

__attribute__((noinline)) static void serve_cold(long n)
{
    unsigned long x = sink;
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1;
    sink = x;
}

/* Rounds of random length (well under the kernel's 4 ms tick, at which
 * the CPU timer's signals arrive): a fixed round near the tick would be
 * sampled at the same phase again and again, and the 3:1 split would
 * come out as whatever that phase says. */
static void *serve_worker(void *arg)
{
    (void)arg;
    unsigned long rng = 88172645463325252ul;
    for (;;) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        long n = 20000 + (long)(rng % 60000);
        serve_hot(n);
        serve_cold(n);
    }
    return NULL;
}

__attribute__((noreturn)) static void serve(const char *counter)
{
    pthread_t t;
    pthread_create(&t, NULL, serve_worker, NULL);
    for (unsigned long n = 0;; n++) {
        char tmp[4200];
        snprintf(tmp, sizeof(tmp), "%s.tmp", counter);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%lu\n", n);
            fclose(f);
            rename(tmp, counter);
        }
        usleep(20000);
    }
}

static double rusage_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strspn(argv[1], "0123456789") != strlen(argv[1]))
        serve(argv[1]);
    if (argc < 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s UNIT_MS [PROFILE] | COUNTER_FILE\n", argv[0]);
        return 2;
    }
    unit_s = atoi(argv[1]) / 1000.0;
    pthread_t a, b, c;
    pthread_barrier_init(&ready, NULL, 3);
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
#ifdef LINKED
    /* A and B exist already: the start must find them in /proc/self/task. */
    if (argc != 3) {
        fprintf(stderr, "linked: PROFILE expected\n");
        return 2;
    }
    int rc = cprof_cpu_start(argv[2]);
    if (rc != 0) {
        fprintf(stderr, "cprof_cpu_start: %s\n", strerror(-rc));
        return 1;
    }
    if ((rc = cprof_cpu_start(argv[2])) != -EBUSY) {
        fprintf(stderr, "second cprof_cpu_start: %d, want -EBUSY\n", rc);
        return 1;
    }
#endif
    pthread_barrier_wait(&ready);
    pthread_join(b, NULL);
    /* Created after the start; runs alone after B is gone. */
    pthread_create(&c, NULL, thread_c, NULL);
    pthread_join(c, NULL);
    pthread_join(a, NULL);
    double cpu = rusage_s();
#ifdef LINKED
    if ((rc = cprof_cpu_stop()) != 0) {
        fprintf(stderr, "cprof_cpu_stop: %s\n", strerror(-rc));
        return 1;
    }
    if ((rc = cprof_cpu_stop()) != -ENOTCONN) {
        fprintf(stderr, "second cprof_cpu_stop: %d, want -ENOTCONN\n", rc);
        return 1;
    }
#endif
    static const char *const names[3] = {"hot_three", "cold_one", "late_half"};
    for (int i = 0; i < 3; i++)
        printf("TRUTH %s %.0f %ld\n", names[i], truth[i] * 1000,
               kernel_periods[i] * (KTIMER_PERIOD_NS / 1000000));
    printf("RUSAGE %.0f\n", cpu * 1000);
    return 0;
}
