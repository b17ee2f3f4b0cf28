/* trace_compute.c — a thread that only computes, for tests/e2e/
 * trace_compute.sh: compute() spins with no lock, allocation or system
 * call; once it runs, main starts a trace (cprof_trace_start(ARGV[1]),
 * found with dlsym), waits until compute's thread has used 0.5 s of CPU
 * time since (its own CPU clock); then compute's thread blocks once on a
 * mutex main holds (until /proc says it sleeps), main joins it, stops
 * the trace, and prints
 * "rounds N stop 0 tid T sleeper S" (N > 0, T compute's thread id, S
 * that of a thread that waits in read() from before the trace until main
 * wakes it, and ends, before the trace stops). Run with a CPU profile (CPROF_CPU_PROFILE), whose samples the
 * trace shows, or without. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int done, locking;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long rounds;
static atomic_int tid, sleeper_tid;
static int wake_pipe[2];
static volatile double sink;

__attribute__((noinline)) static void compute(void)
{
    while (!atomic_load_explicit(&done, memory_order_relaxed)) {
        double x = 1;
        for (int i = 1; i < 100000; i++)
            x = x * 1.0000001 + 1.0 / i;
        sink = x;
        atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    atomic_store(&tid, (int)gettid());
    compute();
    /* Then one wait, on a mutex main holds: its first traced event. */
    atomic_store(&locking, 1);
    pthread_mutex_lock(&mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* Waits in read() on a pipe from before the trace to after it. */
static void *sleeper(void *arg)
{
    (void)arg;
    atomic_store(&sleeper_tid, (int)gettid());
    char c;
    return read(wake_pipe[0], &c, 1) == 1 ? NULL : arg;
}

static double cpu_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether thread tid sleeps (state S in /proc: blocked on the mutex). */
static int sleeping(int tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *e = strrchr(buf, ')');
    return e && e[1] == ' ' && e[2] == 'S';
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trace_compute TRACE\n");
        return 2;
    }
    int (*start)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "cprof_trace_start");
    int (*stop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cprof_trace_stop");
    if (!start || !stop) {
        fprintf(stderr, "not under libcprof.so\n");
        return 2;
    }
    pthread_t t, z;
    if (pipe(wake_pipe) < 0)
        return 2;
    pthread_create(&z, NULL, sleeper, NULL);
    while (!atomic_load(&sleeper_tid) || !sleeping(atomic_load(&sleeper_tid)))
        usleep(1000);
    pthread_create(&t, NULL, worker, NULL);
    clockid_t c;
    pthread_getcpuclockid(t, &c);
    while (atomic_load(&rounds) == 0) /* it runs before the trace starts */
        usleep(1000);
    int rc = start(argv[1]);
    if (rc != 0) {
        fprintf(stderr, "cprof_trace_start: %d\n", rc);
        return 1;
    }
    double t0 = cpu_s(c);
    while (cpu_s(c) - t0 < 0.5)
        usleep(10000);
    pthread_mutex_lock(&mu);
    atomic_store(&done, 1);
    while (!atomic_load(&locking) || !sleeping(atomic_load(&tid)))
        usleep(1000);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    if (write(wake_pipe[1], "x", 1) != 1)
        return 2;
    pthread_join(z, NULL);
    rc = stop();
    printf("rounds %ld stop %d tid %d sleeper %d\n", atomic_load(&rounds), rc, atomic_load(&tid),
           atomic_load(&sleeper_tid));
    return rc == 0 ? 0 : 1;
}
