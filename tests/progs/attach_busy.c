/* attach_busy.c — a program for cprof attach whose main thread (the one the
 * attach holds) is always busy in one way:
 *   attach_busy DIR MODE [LIB]
 * MODE malloc: mallocs and frees blocks of up to 256 KiB (mmap, munmap,
 * brk and the arena lock all the time; a second thread does the same);
 * sleep: nanosleep; poll: poll on a pipe; futex: waits on a condition
 * variable another thread signals; segv: nanosleep, while another thread
 * sends it SIGSEGV (tgkill) every 1 ms, which a handler counts; dlslow
 * LIB: nanosleep, while another thread dlopens LIB, whose constructor
 * (attach_slowlib.c) writes DIR/inctor and holds the loader's lock 20 s.
 * Writes DIR/ready, runs until DIR/finish appears, prints "ok MODE", exits 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static volatile int done;
static volatile sig_atomic_t segvs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void churn(unsigned *seed)
{
    size_t n = 1 + (size_t)rand_r(seed) % (256 * 1024);
    volatile char *p = malloc(n);
    if (!p)
        abort();
    for (size_t i = 0; i < n; i += 512) /* time spent outside the C library */
        p[i] = (char)i;
    free((void *)p);
}

static void *other(void *arg)
{
    const char *mode = arg;
    unsigned seed = 2;
    pid_t pid = getpid();
    struct timespec ts = {0, 20000};
    if (strcmp(mode, "dlslow") == 0 && !dlopen(getenv("BUSY_LIB"), RTLD_NOW))
        abort();
    while (!done) {
        if (strcmp(mode, "malloc") == 0) {
            churn(&seed);
        } else if (strcmp(mode, "futex") == 0) {
            pthread_mutex_lock(&lock);
            pthread_cond_signal(&cond);
            pthread_mutex_unlock(&lock);
            nanosleep(&ts, NULL);
        } else if (strcmp(mode, "segv") == 0) {
            struct timespec ms = {0, 1000000};
            syscall(SYS_tgkill, pid, pid, SIGSEGV);
            nanosleep(&ms, NULL);
        } else {
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void on_segv(int sig)
{
    (void)sig;
    segvs++;
}

static int exists(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    dir = argv[1];
    const char *mode = argv[2];
    if (argc > 3) {
        setenv("BUSY_LIB", argv[3], 1);
        setenv("BUSY_DIR", dir, 1);
    }
    signal(SIGSEGV, on_segv);
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    pthread_t th;
    pthread_create(&th, NULL, other, (void *)mode);
    char path[4096];
    snprintf(path, sizeof(path), "%s/ready", dir);
    fclose(fopen(path, "w"));
    unsigned seed = 1;
    struct timespec ts = {0, 1000000};
    for (unsigned long i = 0; !(i % 64 == 0 && exists("finish")); i++) {
        if (strcmp(mode, "malloc") == 0) {
            churn(&seed);
        } else if (strcmp(mode, "poll") == 0) {
            struct pollfd p = {fds[0], POLLIN, 0};
            poll(&p, 1, 1);
        } else if (strcmp(mode, "futex") == 0) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec++;
            pthread_mutex_lock(&lock);
            pthread_cond_timedwait(&cond, &lock, &until);
            pthread_mutex_unlock(&lock);
        } else {
            nanosleep(&ts, NULL);
        }
    }
    done = 1;
    pthread_join(th, NULL);
    printf("ok %s\n", mode);
    return 0;
}
