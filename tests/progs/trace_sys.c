/* trace_sys.c — a program that waits in system calls and sleeps, each
 * from a function of its own, and measures each wait around the call:
 *   pipe_wait    read(2) of a pipe, until a helper thread writes (200 ms)
 *   accept_wait  accept(2) on a 127.0.0.1 socket, until the helper
 *                connects (200 ms later)
 *   poll_wait    poll(2) of an idle pipe, 150 ms timeout
 *   sleep_wait   nanosleep(2), 150 ms
 * 50 ms of computing after each of the first three,
 * and a read(2) of a bad descriptor, whose errno must come back EBADF.
 * Prints "NAME NS" for each (the measured wait), then "ok"; exits 0, or 2
 * when a call fails.
 * trace_sys signals: for 1 s a SIGALRM every 200 us whose handler
 * write(2)s a byte to a pipe (the self-pipe pattern: traced calls from a
 * handler, interrupting traced calls, locks, allocations, and threads
 * before their start routine and after their end) while main reads the
 * pipe, and another thread creates threads one after another that each
 * lock, allocate and sleep once; prints "signals N" (the bytes read, one
 * per signal handled) and "ok".
 * trace_sys dtor: 20 threads, one after another, each write(2)s in its
 * start routine and in a thread-specific-data destructor (after cprof's
 * own, which ends the thread's goroutine); prints "ok". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int wake_pipe[2], idle_pipe[2], lsock;
static struct sockaddr_in addr;

static int64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void nap_ms(long ms)
{
    struct timespec d = {ms / 1000, ms % 1000 * 1000000};
    while (nanosleep(&d, &d) != 0)
        ;
}

static void *helper(void *arg)
{
    (void)arg;
    nap_ms(200);
    if (write(wake_pipe[1], "x", 1) != 1)
        die("write");
    nap_ms(200);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof(addr)) != 0)
        die("connect");
    close(s);
    return NULL;
}

/* Computes for ms of wall time between the waits: a trace that lost the
 * end of a wait would count this too. */
static void spin_ms(long ms)
{
    volatile uint64_t x = 0;
    int64_t end = now() + ms * 1000000;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x += (uint64_t)i;
}

static __attribute__((noinline)) int64_t pipe_wait(void)
{
    char c;
    int64_t t0 = now();
    if (read(wake_pipe[0], &c, 1) != 1 || c != 'x')
        die("read");
    return now() - t0;
}

static __attribute__((noinline)) int64_t accept_wait(void)
{
    int64_t t0 = now();
    int c = accept(lsock, NULL, NULL);
    int64_t t = now() - t0;
    if (c < 0)
        die("accept");
    close(c);
    return t;
}

static __attribute__((noinline)) int64_t poll_wait(void)
{
    struct pollfd p = {.fd = idle_pipe[0], .events = POLLIN};
    int64_t t0 = now();
    if (poll(&p, 1, 150) != 0)
        die("poll");
    return now() - t0;
}

static __attribute__((noinline)) int64_t sleep_wait(void)
{
    struct timespec d = {0, 150 * 1000000};
    int64_t t0 = now();
    if (nanosleep(&d, NULL) != 0)
        die("nanosleep");
    return now() - t0;
}

static volatile sig_atomic_t done;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void on_alarm(int sig)
{
    (void)sig;
    int e = errno;
    if (write(wake_pipe[1], "s", 1) != 1)
        _exit(3);
    errno = e;
}

static void *once(void *arg)
{
    pthread_mutex_lock(&mu);
    char *p = malloc(64 + (uintptr_t)arg % 512);
    if (!p)
        _exit(2);
    p[0] = (char)(uintptr_t)arg;
    uintptr_t r = (uint8_t)p[0] + 1;
    free(p);
    pthread_mutex_unlock(&mu);
    struct timespec d = {0, 50000};
    nanosleep(&d, NULL);
    return (void *)r;
}

static void *churn(void *arg)
{
    (void)arg;
    uintptr_t sum = 0;
    while (!done) {
        pthread_t t;
        void *r;
        if (pthread_create(&t, NULL, once, (void *)sum))
            _exit(2);
        pthread_join(t, &r);
        sum += (uintptr_t)r;
    }
    return (void *)sum;
}

static pthread_key_t key;
static int null_fd;

static void dtor_write(void *p)
{
    (void)p;
    if (write(null_fd, "d", 1) != 1)
        _exit(2);
}

static void *dtor_thread(void *arg)
{
    pthread_setspecific(key, arg);
    if (write(null_fd, "r", 1) != 1)
        _exit(2);
    return NULL;
}

static int dtor(void)
{
    if ((null_fd = open("/dev/null", O_WRONLY)) < 0 || pthread_key_create(&key, dtor_write))
        die("dtor setup");
    for (int i = 0; i < 20; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, dtor_thread, (void *)1))
            die("pthread_create");
        pthread_join(t, NULL);
    }
    puts("ok");
    return 0;
}

static int signals(void)
{
    if (pipe(wake_pipe))
        die("pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    pthread_t h;
    if (pthread_create(&h, NULL, churn, NULL))
        die("pthread_create");
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    long got = 0;
    int64_t end = now() + 1000000000;
    char buf[64];
    while (now() < end) {
        ssize_t n = read(wake_pipe[0], buf, sizeof(buf));
        if (n < 0 && errno != EINTR)
            die("read");
        got += n > 0 ? n : 0;
        pthread_mutex_lock(&mu);
        pthread_mutex_unlock(&mu);
    }
    memset(&it, 0, sizeof(it));
    setitimer(ITIMER_REAL, &it, NULL);
    done = 1;
    pthread_join(h, NULL);
    printf("signals %ld\nok\n", got);
    return got > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "signals"))
        return signals();
    if (argc > 1 && !strcmp(argv[1], "dtor"))
        return dtor();
    socklen_t len = sizeof(addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (pipe(wake_pipe) || pipe(idle_pipe))
        die("pipe");
    if ((lsock = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) || listen(lsock, 4) ||
        getsockname(lsock, (struct sockaddr *)&addr, &len))
        die("listen");
    pthread_t h;
    if (pthread_create(&h, NULL, helper, NULL))
        die("pthread_create");
    int64_t pw = pipe_wait();
    spin_ms(50);
    int64_t aw = accept_wait();
    spin_ms(50);
    int64_t pl = poll_wait();
    spin_ms(50);
    int64_t sw = sleep_wait();
    pthread_join(h, NULL);
    char c;
    errno = 0;
    if (read(-1, &c, 1) != -1 || errno != EBADF)
        die("read(-1) kept no EBADF");
    printf("pipe_wait %lld\naccept_wait %lld\npoll_wait %lld\nsleep_wait %lld\nok\n",
           (long long)pw, (long long)aw, (long long)pl, (long long)sw);
    return 0;
}
