/* trace_stream.c — a busy program for the streamed trace (tests/e2e/
 * trace_stream.sh): writes DIR/ready, then until DIR/stop appears two
 * threads take turns on a mutex (block events) and log() writes
 * cprof_trace_log messages of 1000 bytes, two per millisecond while a
 * trace runs (about 2 MB of trace a second, never more), found with dlsym as the
 * preloaded libcprof.so has them. At the end it prints "rounds N logs M"
 * (both > 0) and exits 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int done;
static atomic_long rounds, logs;
static volatile long shared;
static char stopfile[4096];

static int (*log_)(uint64_t, const char *, const char *);

static void *turns(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        pthread_mutex_lock(&mu);
        for (int i = 0; i < 20000; i++) /* ~20 us: blocks at a bounded rate */
            shared = shared + i;
        pthread_mutex_unlock(&mu);
        atomic_fetch_add(&rounds, 1);
    }
    return NULL;
}

static void *logger(void *arg)
{
    (void)arg;
    char msg[1001];
    memset(msg, 'x', 1000);
    msg[1000] = '\0';
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&done)) {
        for (int i = 0; i < 2; i++)
            if (log_ && log_(0, "busy", msg) == 0)
                atomic_fetch_add(&logs, 1);
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        /* Late (a loaded machine): no burst to catch up. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - next.tv_sec) * 1000000000L + now.tv_nsec - next.tv_nsec > 10000000L)
            next = now;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trace_stream DIR\n");
        return 2;
    }
    *(void **)&log_ = dlsym(RTLD_DEFAULT, "cprof_trace_log");
    snprintf(stopfile, sizeof(stopfile), "%s/stop", argv[1]);
    pthread_t t[3];
    pthread_create(&t[0], NULL, turns, NULL);
    pthread_create(&t[1], NULL, turns, NULL);
    pthread_create(&t[2], NULL, logger, NULL);
    char ready[4096];
    snprintf(ready, sizeof(ready), "%s/ready", argv[1]);
    FILE *f = fopen(ready, "w");
    if (f) {
        fputs("ready\n", f);
        fclose(f);
    }
    while (access(stopfile, F_OK) != 0)
        usleep(20000);
    atomic_store(&done, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("rounds %ld logs %ld\n", atomic_load(&rounds), atomic_load(&logs));
    return atomic_load(&rounds) > 0 && atomic_load(&logs) > 0 ? 0 : 1;
}
