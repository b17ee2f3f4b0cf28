/* mutex_stress.c — many threads through every pthread lock call cprof
 * hooks, with every mutex type, checking that the program still computes
 * what it should and never deadlocks.
 *
 * Usage: mutex_stress [THREADS [ITERS]]   (default 8 threads, 3000 iterations)
 * Each thread, ITERS times: a normal mutex (lock, and trylock), a
 * recursive one (locked twice), an error-checking one (relock -> EDEADLK,
 * second unlock -> EPERM), timedlock and clocklock, an rwlock (rdlock,
 * wrlock, timedwrlock, clock variants), and a hand-off through a condition
 * variable (pthread_cond_wait / timedwait) with its neighbour. Once at
 * start, a robust mutex whose owner died (EOWNERDEAD, then consistent).
 * Prints "ok" and exits 0 when every counter is right, else says which.
 * Built with -DLINKED (and -lcprof), a monitor thread also takes the
 * threads profile every few milliseconds while the others run, so the
 * profile's signal lands in the middle of lock calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif

static int nthreads = 8, iters = 3000;
static pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t recursive, errorcheck, robust;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long c_normal, c_try, c_recursive, c_errorcheck, c_timed, c_clock, c_write, c_read,
    c_rwtimed;
static volatile int stop_monitor;
static int failures;

/* Hand-off ring: thread i passes a token to thread i+1 through slot i+1. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long tokens;
} slot_t;
static slot_t *slots;
static long c_handoff;

#define CHECK(cond, what)                                                                       \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "FAIL: %s (line %d, errno-like %d)\n", what, __LINE__, rc);          \
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                                 \
        }                                                                                       \
    } while (0)

static struct timespec soon(clockid_t clk, long ns)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_nsec += ns;
    while (ts.tv_nsec >= 1000000000) {
        ts.tv_nsec -= 1000000000;
        ts.tv_sec++;
    }
    return ts;
}

static void *worker(void *arg)
{
    int me = (int)(long)arg, rc = 0;
    slot_t *in = &slots[me], *out = &slots[(me + 1) % nthreads];
    for (int i = 0; i < iters; i++) {
        rc = pthread_mutex_lock(&normal);
        CHECK(rc == 0, "lock");
        c_normal++;
        pthread_mutex_unlock(&normal);

        rc = pthread_mutex_trylock(&normal);
        CHECK(rc == 0 || rc == EBUSY, "trylock");
        if (rc == 0) {
            c_try++;
            pthread_mutex_unlock(&normal);
        }

        rc = pthread_mutex_lock(&recursive);
        CHECK(rc == 0, "recursive lock");
        rc = pthread_mutex_lock(&recursive);
        CHECK(rc == 0, "recursive relock");
        c_recursive++;
        pthread_mutex_unlock(&recursive);
        pthread_mutex_unlock(&recursive);

        rc = pthread_mutex_lock(&errorcheck);
        CHECK(rc == 0, "errorcheck lock");
        rc = pthread_mutex_lock(&errorcheck);
        CHECK(rc == EDEADLK, "errorcheck relock must be EDEADLK");
        c_errorcheck++;
        rc = pthread_mutex_unlock(&errorcheck);
        CHECK(rc == 0, "errorcheck unlock");
        rc = pthread_mutex_unlock(&errorcheck);
        CHECK(rc == EPERM, "errorcheck second unlock must be EPERM");

        struct timespec ts = soon(CLOCK_REALTIME, 200000000);
        rc = pthread_mutex_timedlock(&normal, &ts);
        CHECK(rc == 0, "timedlock");
        if (rc == 0) {
            c_timed++;
            pthread_mutex_unlock(&normal);
        }
        ts = soon(CLOCK_MONOTONIC, 200000000);
        rc = pthread_mutex_clocklock(&normal, CLOCK_MONOTONIC, &ts);
        CHECK(rc == 0, "clocklock");
        if (rc == 0) {
            c_clock++;
            pthread_mutex_unlock(&normal);
        }

        rc = pthread_rwlock_rdlock(&rw);
        CHECK(rc == 0, "rdlock");
        __atomic_add_fetch(&c_read, 1, __ATOMIC_RELAXED);
        pthread_rwlock_unlock(&rw);
        rc = pthread_rwlock_wrlock(&rw);
        CHECK(rc == 0, "wrlock");
        c_write++;
        pthread_rwlock_unlock(&rw);
        ts = soon(CLOCK_REALTIME, 200000000);
        rc = pthread_rwlock_timedwrlock(&rw, &ts);
        CHECK(rc == 0, "timedwrlock");
        if (rc == 0) {
            c_rwtimed++;
            pthread_rwlock_unlock(&rw);
        }
        ts = soon(CLOCK_MONOTONIC, 200000000);
        rc = pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &ts);
        CHECK(rc == 0, "clockrdlock");
        if (rc == 0)
            pthread_rwlock_unlock(&rw);
        ts = soon(CLOCK_MONOTONIC, 200000000);
        rc = pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &ts);
        CHECK(rc == 0, "clockwrlock");
        if (rc == 0)
            pthread_rwlock_unlock(&rw);

        /* Pass a token on, then wait for one from behind. */
        pthread_mutex_lock(&out->mu);
        out->tokens++;
        pthread_cond_signal(&out->cv);
        pthread_mutex_unlock(&out->mu);
        pthread_mutex_lock(&in->mu);
        while (in->tokens == 0) {
            if (i % 2) {
                rc = pthread_cond_wait(&in->cv, &in->mu);
                CHECK(rc == 0, "cond_wait");
            } else {
                ts = soon(CLOCK_REALTIME, 1000000);
                rc = pthread_cond_timedwait(&in->cv, &in->mu, &ts);
                CHECK(rc == 0 || rc == ETIMEDOUT, "cond_timedwait");
            }
        }
        in->tokens--;
        __atomic_add_fetch(&c_handoff, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&in->mu);
    }
    return NULL;
}

static void *dies_holding(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&robust);
    return NULL; /* ends with the robust mutex held */
}

#ifdef LINKED
static void *monitor(void *arg)
{
    (void)arg;
    int fd = open("/dev/null", O_WRONLY);
    long n = 0;
    while (!__atomic_load_n(&stop_monitor, __ATOMIC_RELAXED)) {
        if (cprof_threads_profile_write_fd(fd, n % 3) != 0)
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        n++;
        usleep(2000);
    }
    close(fd);
    fprintf(stderr, "monitor: %ld threads profiles\n", n);
    return NULL;
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nthreads < 2 || iters < 1)
        return 2;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&recursive, &a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&errorcheck, &a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&robust, &a);

    int rc = 0;
    pthread_t t;
    pthread_create(&t, NULL, dies_holding, NULL);
    pthread_join(t, NULL);
    rc = pthread_mutex_lock(&robust);
    CHECK(rc == EOWNERDEAD, "robust lock after the owner died must be EOWNERDEAD");
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&robust);
        pthread_mutex_unlock(&robust);
        rc = pthread_mutex_lock(&robust);
        CHECK(rc == 0, "robust lock once consistent");
        pthread_mutex_unlock(&robust);
    }

    slots = calloc((size_t)nthreads, sizeof(*slots));
    for (int i = 0; i < nthreads; i++) {
        pthread_mutex_init(&slots[i].mu, NULL);
        pthread_cond_init(&slots[i].cv, NULL);
    }
#ifdef LINKED
    pthread_t mon;
    pthread_create(&mon, NULL, monitor, NULL);
#endif
    pthread_t *ts = calloc((size_t)nthreads, sizeof(*ts));
    for (long i = 0; i < nthreads; i++)
        pthread_create(&ts[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(ts[i], NULL);
#ifdef LINKED
    stop_monitor = 1;
    pthread_join(mon, NULL);
#endif
    long want = (long)nthreads * iters;
    struct {
        const char *name;
        long got, want;
    } c[] = {
        {"lock", c_normal, want},         {"recursive", c_recursive, want},
        {"errorcheck", c_errorcheck, want}, {"timedlock", c_timed, want},
        {"clocklock", c_clock, want},     {"wrlock", c_write, want},
        {"rdlock", c_read, want},         {"timedwrlock", c_rwtimed, want},
        {"handoff", c_handoff, want},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        if (c[i].got != c[i].want) {
            fprintf(stderr, "FAIL: %s counted %ld, want %ld\n", c[i].name, c[i].got, c[i].want);
            failures++;
        }
    }
    if (c_try > want)
        failures++;
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
