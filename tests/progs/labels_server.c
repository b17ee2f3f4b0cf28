/* labels_server.c — a server-like program for the labels tests: two
 * worker threads (worker_loop_1, worker_loop_2) each handle REQS requests
 * of kind=a and REQS of kind=b, alternately, under cprof_labels_push
 * ("worker", "1"/"2") for the thread's life and ("kind", ...) for each
 * request. A request of kind a does UNITS_A = 3 units of work, kind b one;
 * a unit is:
 *   - CPU_US microseconds of the thread's CPU time (burn),
 *   - TEMPS blocks of TEMP_SIZE bytes allocated and freed (temp_alloc),
 *     one of KEPT_SIZE kept in kept[] (kept_alloc), one of LEAK_SIZE whose
 *     pointer is dropped (leak_alloc),
 *   - one contended pthread_mutex_lock (contend): the worker's holder
 *     thread holds the mutex until the worker waits on it.
 * Meanwhile main allocates MAIN_BLOCKS blocks of MAIN_SIZE (main_churn),
 * with no label, and, when both workers wait in the middle of a kind=a
 * request, writes the threads profile to THREADS.1 (debug=1) and
 * THREADS.pb.gz (debug=0).
 * Each worker also runs a bare kernel timer on its CPU clock at cprof's
 * period (CPROF_CPU_HZ; ktimer.h), whose periods it credits to the kind of
 * the request running: the CPU samples the kernel delivered to each kind.
 * Prints the truth per kind: "TRUTH kind units alloc_objects alloc_space
 * inuse_objects inuse_space leak_objects leak_space contentions", what
 * the kernel delivered: "KERNEL kind periods signals", then "ok SUM".
 * Usage: labels_server REQS CPU_US THREADS */
#define _GNU_SOURCE /* pthread_setname_np */
#include "cprof.h"
#include "ktimer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNITS_A 3
#define UNITS_B 1
#define TEMPS 128
#define TEMP_SIZE 1000
#define KEPT_SIZE 2000
#define LEAK_SIZE 3000
#define MAIN_BLOCKS 1000
#define MAIN_SIZE 4000

static long reqs, cpu_us;
static char **kept;
static long nkept;
static pthread_barrier_t parked, resume;
static long kernel_periods[2][2]; /* per kind (a, b): periods, signals */

/* Blocks are used through this: the compiler cannot drop them. */
static void use(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static void burn(void)
{
    int64_t end = thread_cpu_ns() + cpu_us * 1000;
    while (thread_cpu_ns() < end)
        for (volatile int i = 0; i < 1000; i++)
            ;
}

__attribute__((noinline)) static void temp_alloc(void)
{
    for (int i = 0; i < TEMPS; i++) {
        char *p = malloc(TEMP_SIZE);
        if (!p)
            abort();
        memset(p, i, TEMP_SIZE);
        use(p);
        free(p);
    }
}

__attribute__((noinline)) static void kept_alloc(void)
{
    char *p = malloc(KEPT_SIZE);
    if (!p)
        abort();
    memset(p, 1, KEPT_SIZE);
    kept[__atomic_fetch_add(&nkept, 1, __ATOMIC_RELAXED)] = p;
}

__attribute__((noinline)) static void leak_alloc(void)
{
    char *p = malloc(LEAK_SIZE);
    if (!p)
        abort();
    memset(p, 2, LEAK_SIZE);
    use(p);
}

/* One worker's mutex and its holder thread. */
typedef struct {
    pthread_mutex_t m;
    long go, held; /* event numbers: asked of the holder, taken by it */
    pthread_t holder;
} pair_t;

static void *holder_main(void *arg)
{
    pair_t *pr = arg;
    for (long i = 1;; i++) {
        long go;
        while ((go = __atomic_load_n(&pr->go, __ATOMIC_ACQUIRE)) >= 0 && go < i)
            sched_yield();
        if (go < 0)
            return NULL;
        pthread_mutex_lock(&pr->m);
        __atomic_store_n(&pr->held, i, __ATOMIC_RELEASE);
        /* glibc marks the lock word 2 once a thread waits on it: the
         * worker's lock call found it taken (a contention). */
        while (__atomic_load_n(&pr->m.__data.__lock, __ATOMIC_ACQUIRE) != 2)
            sched_yield();
        pthread_mutex_unlock(&pr->m);
    }
}

__attribute__((noinline)) static void contend(pair_t *pr, long *n)
{
    long i = ++*n;
    __atomic_store_n(&pr->go, i, __ATOMIC_RELEASE);
    while (__atomic_load_n(&pr->held, __ATOMIC_ACQUIRE) < i)
        sched_yield();
    pthread_mutex_lock(&pr->m);
    pthread_mutex_unlock(&pr->m);
}

static void unit(pair_t *pr, long *n)
{
    burn();
    temp_alloc();
    kept_alloc();
    leak_alloc();
    contend(pr, n);
}

/* Clears the dead part of the stack, where a leaked block's address may
 * linger for the leak scan. */
__attribute__((noinline)) static void scrub(void)
{
    volatile char buf[64 << 10];
    memset((char *)buf, 0, sizeof(buf));
}

static void serve(int worker)
{
    pair_t pr = {.m = PTHREAD_MUTEX_INITIALIZER};
    if (pthread_create(&pr.holder, NULL, holder_main, &pr))
        abort();
    long events = 0;
    char w[2] = {(char)('0' + worker), 0};
    char name[16];
    snprintf(name, sizeof(name), "worker%d", worker);
    pthread_setname_np(pthread_self(), name);
    if (cprof_labels_push("worker", w))
        abort();
    const char *hz = getenv("CPROF_CPU_HZ");
    if (ktimer_start(1000000000L / (hz ? atol(hz) : 100)) < 0)
        abort();
    static __thread volatile long credit[2][2];
    for (long r = 0; r < 2 * reqs; r++) {
        int a = r % 2 == 0;
        ktimer_credit = credit[a ? 0 : 1];
        if (cprof_labels_push("kind", a ? "a" : "b"))
            abort();
        for (int u = 0; u < (a ? UNITS_A : UNITS_B); u++)
            unit(&pr, &events);
        if (r == 2 * (reqs / 2)) { /* parked mid-request for the threads profile */
            pthread_barrier_wait(&parked);
            pthread_barrier_wait(&resume);
        }
        if (cprof_labels_pop())
            abort();
        ktimer_credit = NULL;
    }
    ktimer_stop();
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            __atomic_add_fetch(&kernel_periods[k][i], credit[k][i], __ATOMIC_RELAXED);
    if (cprof_labels_pop() || cprof_labels_pop() != -ENOENT)
        abort();
    __atomic_store_n(&pr.go, -1, __ATOMIC_RELEASE);
    pthread_join(pr.holder, NULL);
    scrub();
}

__attribute__((noinline)) static void *worker_loop_1(void *arg)
{
    (void)arg;
    serve(1);
    return NULL;
}

__attribute__((noinline)) static void *worker_loop_2(void *arg)
{
    (void)arg;
    serve(2);
    return NULL;
}

__attribute__((noinline)) static void main_churn(char **blocks)
{
    for (int i = 0; i < MAIN_BLOCKS; i++) {
        blocks[i] = malloc(MAIN_SIZE);
        if (!blocks[i])
            abort();
        memset(blocks[i], 3, MAIN_SIZE);
    }
}

static int write_threads(const char *path, int debug)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    int rc = cprof_threads_profile_write_fd(fd, debug);
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    reqs = atol(argv[1]);
    cpu_us = atol(argv[2]);
    long units = 2 * reqs * (UNITS_A + UNITS_B);
    kept = calloc((size_t)units, sizeof(*kept));
    char **blocks = calloc(MAIN_BLOCKS, sizeof(*blocks));
    if (!kept || !blocks)
        return 1;
    pthread_barrier_init(&parked, NULL, 3);
    pthread_barrier_init(&resume, NULL, 3);
    pthread_t t1, t2;
    if (pthread_create(&t1, NULL, worker_loop_1, NULL) ||
        pthread_create(&t2, NULL, worker_loop_2, NULL))
        return 1;
    main_churn(blocks);
    pthread_barrier_wait(&parked);
    char path[4096];
    snprintf(path, sizeof(path), "%s.1", argv[3]);
    int rc1 = write_threads(path, 1);
    snprintf(path, sizeof(path), "%s.pb.gz", argv[3]);
    int rc0 = write_threads(path, 0);
    pthread_barrier_wait(&resume);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    if (rc1 || rc0) {
        fprintf(stderr, "threads profile: %d %d\n", rc1, rc0);
        return 1;
    }
    long sum = 0;
    for (long i = 0; i < nkept; i++)
        sum += kept[i][i % KEPT_SIZE];
    for (int i = 0; i < MAIN_BLOCKS; i++)
        sum += blocks[i][i];
    static const struct {
        const char *kind;
        int units;
    } kinds[] = {{"a", UNITS_A}, {"b", UNITS_B}};
    for (int k = 0; k < 2; k++) {
        long u = 2 * reqs * kinds[k].units;
        printf("TRUTH %s %ld %ld %ld %ld %ld %ld %ld %ld\n", kinds[k].kind, u, u * (TEMPS + 2),
               u * (TEMPS * TEMP_SIZE + KEPT_SIZE + LEAK_SIZE), u * 2, u * (KEPT_SIZE + LEAK_SIZE),
               u, u * LEAK_SIZE, u);
    }
    for (int k = 0; k < 2; k++)
        printf("KERNEL %s %ld %ld\n", kinds[k].kind, kernel_periods[k][0], kernel_periods[k][1]);
    printf("ok %ld\n", sum);
    return nkept == units ? 0 : 1;
}
