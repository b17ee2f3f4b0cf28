/* trace_prog.c — a program to trace: lock contention, thread creation, CPU
 * work, allocation and user annotations from known functions.
 *
 * Usage: trace_prog MODE [ARG]
 *   work [SECONDS [ROUNDS]]  for SECONDS (default 1.5) and at least ROUNDS
 *          rounds (default 0) in all: main creates 4 workers (pthread_create in
 *          spawn()); each loops: contend() locks a mutex the others hold
 *          for 200 us (timing its own pthread_mutex_lock calls), spin()
 *          burns CPU, churn() allocates and frees; every round is a task
 *          "round" with a region "phase" and a log message. Then main
 *          joins them and prints "waited_ns N" (the sum of the workers'
 *          measured lock waits) and "threads 4".
 *   serve DIR  (for the HTTP tests) writes DIR/ready, waits for DIR/go,
 *          then does what "work 1" does, writes its output to DIR/out and
 *          waits to be killed.
 *   COUNTFILE  (any other argument) the same forever, writing a growing
 *          round count to COUNTFILE.
 *   fork   traces across a fork: the child works and exits, the parent
 *          waits for it and works too.
 *   storm N  creates N short-lived threads, 50 at a time.
 *   exit   exits from a worker thread while the others run.
 *   api DIR  the C API: three traces (cprof_trace_start(DIR/t.%n.trace),
 *          work for 0.3 s, cprof_trace_stop), printing the return codes
 *          of every call and of the wrong ones between (stop with none
 *          running, a bad pattern, a second start, annotations with no
 *          trace).
 * The annotation API (cprof_trace_*) is found with dlsym: present when
 * libcprof.so is preloaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_llong waited_ns;
static atomic_long rounds;
static volatile double sink;
static double run_for = 1.5;
static long min_rounds;
static int forever;
static const char *countfile;

static uint64_t (*task_begin)(uint64_t, const char *);
static int (*task_end)(uint64_t);
static int (*region_begin)(uint64_t, const char *);
static int (*region_end)(uint64_t, const char *);
static int (*logf_)(uint64_t, const char *, const char *);

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static void contend(void)
{
    int64_t t0 = now_ns();
    pthread_mutex_lock(&mu);
    atomic_fetch_add(&waited_ns, now_ns() - t0);
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void spin(void)
{
    double x = 0;
    for (int i = 0; i < 200000; i++)
        x += (double)i * 0.5;
    sink = x;
}

__attribute__((noinline)) static void churn(void)
{
    void *p[64];
    for (int i = 0; i < 64; i++)
        p[i] = malloc((size_t)(i + 1) * 100);
    for (int i = 0; i < 64; i++)
        free(p[i]);
}

static void *worker(void *arg)
{
    (void)arg;
    int64_t end = now_ns() + (int64_t)(run_for * 1e9);
    while (forever || now_ns() < end || atomic_load(&rounds) < min_rounds) {
        uint64_t task = task_begin ? task_begin(0, "round") : 0;
        if (region_begin)
            region_begin(task, "phase");
        contend();
        spin();
        churn();
        if (region_end)
            region_end(task, "phase");
        if (logf_)
            logf_(task, "worker", "round done");
        if (task_end)
            task_end(task);
        long n = atomic_fetch_add(&rounds, 1) + 1;
        if (countfile && n % 16 == 0) {
            FILE *f = fopen(countfile, "w");
            if (f) {
                fprintf(f, "%ld\n", n);
                fclose(f);
            }
        }
    }
    return NULL;
}

__attribute__((noinline)) static void spawn(pthread_t *th, void *(*fn)(void *))
{
    if (pthread_create(th, NULL, fn, NULL) != 0) {
        perror("pthread_create");
        exit(1);
    }
}

static void work(void)
{
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        spawn(&th[i], worker);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
}

static void *brief(void *arg)
{
    churn();
    return arg;
}

static void *quitter(void *arg)
{
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    printf("exiting\n");
    fflush(stdout);
    exit(0);
    return arg;
}

int main(int argc, char **argv)
{
    *(void **)&task_begin = dlsym(RTLD_DEFAULT, "cprof_trace_task_begin");
    *(void **)&task_end = dlsym(RTLD_DEFAULT, "cprof_trace_task_end");
    *(void **)&region_begin = dlsym(RTLD_DEFAULT, "cprof_trace_region_begin");
    *(void **)&region_end = dlsym(RTLD_DEFAULT, "cprof_trace_region_end");
    *(void **)&logf_ = dlsym(RTLD_DEFAULT, "cprof_trace_log");
    const char *mode = argc > 1 ? argv[1] : "work";
    if (strcmp(mode, "work") == 0) {
        if (argc > 2)
            run_for = atof(argv[2]);
        if (argc > 3)
            min_rounds = atol(argv[3]);
        work();
        printf("waited_ns %lld\nthreads %d\n", (long long)atomic_load(&waited_ns), WORKERS);
    } else if (strcmp(mode, "serve") == 0 && argc > 2) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/ready", argv[2]);
        FILE *r = fopen(path, "w");
        if (!r)
            return 1;
        fputs("ready\n", r);
        fclose(r);
        snprintf(path, sizeof(path), "%s/go", argv[2]);
        struct timespec ts = {0, 10000000};
        while (access(path, F_OK) != 0)
            nanosleep(&ts, NULL);
        run_for = 1;
        work();
        snprintf(path, sizeof(path), "%s/out.tmp", argv[2]);
        FILE *f = fopen(path, "w");
        if (!f)
            return 1;
        fprintf(f, "waited_ns %lld\nthreads %d\n", (long long)atomic_load(&waited_ns), WORKERS);
        fclose(f);
        char done[4096];
        snprintf(done, sizeof(done), "%s/out", argv[2]);
        rename(path, done);
        for (;;)
            pause();
    } else if (strcmp(mode, "api") == 0 && argc > 2) {
        int (*start)(const char *);
        int (*stop)(void);
        *(void **)&start = dlsym(RTLD_DEFAULT, "cprof_trace_start");
        *(void **)&stop = dlsym(RTLD_DEFAULT, "cprof_trace_stop");
        if (!start || !stop || !task_begin || !region_begin || !logf_)
            return 1;
        char pat[4096];
        snprintf(pat, sizeof(pat), "%s/t.%%n.trace", argv[2]);
        printf("idle: stop %d task %llu region %d log %d\n", stop(),
               (unsigned long long)task_begin(0, "x"), region_begin(0, "x"), logf_(0, "a", "b"));
        printf("bad pattern: %d\n", start("x%q"));
        run_for = 0.3;
        for (int i = 0; i < 3; i++) {
            int a = start(pat), b = start(pat);
            work();
            int c = stop(), d = stop();
            printf("trace %d: start %d again %d stop %d again %d\n", i, a, b, c, d);
        }
    } else if (strcmp(mode, "fork") == 0) {
        run_for = 0.3;
        pid_t pid = fork();
        if (pid == 0) {
            work();
            _exit(0);
        }
        work();
        int st;
        waitpid(pid, &st, 0);
        printf("forked %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (strcmp(mode, "storm") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 300;
        pthread_t th[50];
        for (int done = 0; done < n; done += 50) {
            int k = n - done < 50 ? n - done : 50;
            for (int i = 0; i < k; i++)
                spawn(&th[i], brief);
            for (int i = 0; i < k; i++)
                pthread_join(th[i], NULL);
        }
        printf("storm %d\n", n);
    } else if (strcmp(mode, "exit") == 0) {
        forever = 1;
        pthread_t th[WORKERS], q;
        for (int i = 0; i < WORKERS; i++)
            spawn(&th[i], worker);
        spawn(&q, quitter);
        pthread_join(q, NULL);
    } else {
        forever = 1;
        countfile = mode;
        work();
    }
    return 0;
}
