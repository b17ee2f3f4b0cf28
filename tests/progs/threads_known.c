/* threads_known.c — named threads blocked in known functions, created from
 * known functions, for the threads and threadcreate profiles.
 *
 *   spawn_readers  3 threads "reader-0".."reader-2", blocked in block_in_read
 *   spawn_waiters  2 threads "waiter-0", "waiter-1", in block_in_cond
 *   spawn_others   "spinner" (busy in spin_forever) and "masked" (blocks
 *                  every signal, in block_masked)
 *   spawn_brief    1 thread that has ended before any profile is taken
 *
 * Usage: threads_known DIR       (linked with -lcprof -DLINKED) writes
 *          DIR/threads.{pb.gz,txt,dump} and DIR/threadcreate.{pb.gz,txt}
 *          through the API and exits;
 *        threads_known COUNTFILE (preloaded with CPROF_HTTP) writes "1" to
 *          COUNTFILE once every thread is in place, then waits to be killed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif

static int pipe_fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int never, in_wait;
static pthread_barrier_t ready;
static volatile unsigned long spins;

__attribute__((noinline)) void block_in_read(void)
{
    char c;
    pthread_barrier_wait(&ready);
    for (;;)
        if (read(pipe_fds[0], &c, 1) == 1)
            break;
}

__attribute__((noinline)) void block_in_cond(void)
{
    pthread_mutex_lock(&mu);
    in_wait++; /* seen by main under mu: then this thread is in the wait */
    while (!never)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void spin_forever(void)
{
    pthread_barrier_wait(&ready);
    for (;;)
        spins++;
}

__attribute__((noinline)) void block_masked(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_barrier_wait(&ready);
    char c;
    for (;;)
        if (read(pipe_fds[0], &c, 1) == 1)
            break;
}

static void *reader_main(void *arg)
{
    char name[16];
    snprintf(name, sizeof(name), "reader-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    block_in_read();
    return NULL;
}

static void *waiter_main(void *arg)
{
    char name[16];
    snprintf(name, sizeof(name), "waiter-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    block_in_cond();
    return NULL;
}

static void *spinner_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "spinner");
    spin_forever();
    return NULL;
}

static void *masked_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "masked");
    block_masked();
    return NULL;
}

static void *brief_main(void *arg)
{
    (void)arg;
    return NULL;
}

/* A macro, not a function: the function calling pthread_create is the
 * spawn_* (also for symbolizers that report inlined frames). */
#define start(fn, arg)                                                                          \
    do {                                                                                        \
        pthread_t t_;                                                                           \
        if (pthread_create(&t_, NULL, fn, (void *)(long)(arg)) != 0) {                          \
            perror("pthread_create");                                                           \
            exit(1);                                                                            \
        }                                                                                       \
        pthread_detach(t_);                                                                     \
    } while (0)

__attribute__((noinline)) void spawn_readers(void)
{
    for (long i = 0; i < 3; i++)
        start(reader_main, i);
}

__attribute__((noinline)) void spawn_waiters(void)
{
    for (long i = 0; i < 2; i++)
        start(waiter_main, i);
}

__attribute__((noinline)) void spawn_others(void)
{
    start(spinner_main, 0);
    start(masked_main, 0);
}

__attribute__((noinline)) void spawn_brief(void)
{
    pthread_t t;
    pthread_create(&t, NULL, brief_main, NULL);
    pthread_join(t, NULL);
}

#ifdef LINKED
static void write_one(const char *dir, const char *file, int (*fn)(int, int), int debug)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = fd < 0 ? -1 : fn(fd, debug);
    if (rc != 0) {
        fprintf(stderr, "%s: %d\n", file, rc);
        exit(1);
    }
    close(fd);
}
#endif

__attribute__((noinline)) void main_waits(const char *arg)
{
#ifdef LINKED
    write_one(arg, "threads.pb.gz", cprof_threads_profile_write_fd, 0);
    write_one(arg, "threads.txt", cprof_threads_profile_write_fd, 1);
    write_one(arg, "threads.dump", cprof_threads_profile_write_fd, 2);
    write_one(arg, "threadcreate.pb.gz", cprof_threadcreate_profile_write_fd, 0);
    write_one(arg, "threadcreate.txt", cprof_threadcreate_profile_write_fd, 1);
    exit(0);
#else
    FILE *f = fopen(arg, "w");
    if (!f || fprintf(f, "1\n") < 0 || fclose(f) != 0)
        exit(1);
    for (;;)
        pause();
#endif
}

int main(int argc, char **argv)
{
    if (argc != 2 || pipe(pipe_fds) != 0) {
        fprintf(stderr, "usage: threads_known DIR|COUNTFILE\n");
        return 2;
    }
    pthread_barrier_init(&ready, NULL, 3 + 2 + 1); /* readers, others, main */
    spawn_brief();
    spawn_readers();
    spawn_waiters();
    spawn_others();
    pthread_barrier_wait(&ready);
    for (int n = 0; n < 2; usleep(1000)) {
        pthread_mutex_lock(&mu);
        n = in_wait;
        pthread_mutex_unlock(&mu);
    }
    usleep(50000); /* the readers reach read() */
    main_waits(argv[1]);
    return 0;
}
