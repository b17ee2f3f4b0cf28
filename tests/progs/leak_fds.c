/* leak_fds.c — a program that closes every descriptor it inherited, as
 * ssh, sudo and daemons do, and then opens a pipe of its own (argument
 * "reuse") and /dev/null eight times, or nothing (argument "closed"): it
 * gets back the numbers the profiler's unwinder and files had. It leaks one 4321-byte block, allocates 20000
 * more blocks in sites() and frees them, and checks its pipe still holds
 * exactly what it wrote (it is empty at exit); prints a line, exits 0.
 * Argument "daemon": closes 0 and 2 as well (a daemon's idiom), and a
 * second thread re-opens /dev/null at 0 again and again while sites()
 * runs; each open must get 0 (exit 6 otherwise): nothing else may hold
 * the lowest free number, even for a moment. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void leak_block(void)
{
    char *p = malloc(4321);
    if (!p)
        exit(2);
    memset(p, 1, 4321);
    sink = p;
    sink = NULL; /* the only pointer is gone: a leak */
}

__attribute__((noinline)) static void sites(void)
{
    for (int i = 0; i < 20000; i++) {
        sink = malloc(64 + i % 100);
        free(sink);
    }
}

static int sites_done;
static long reopens, misses;

/* The daemon idiom `close(0); open("/dev/null")`, which needs 0 free. */
static void *null_stdin(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&sites_done, __ATOMIC_ACQUIRE)) {
        close(0);
        int fd = open("/dev/null", O_RDONLY);
        if (fd != 0) {
            misses++;
            if (fd > 0)
                close(fd);
        }
        __atomic_add_fetch(&reopens, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int reuse = argc > 1 && strcmp(argv[1], "reuse") == 0;
    int daemon = argc > 1 && strcmp(argv[1], "daemon") == 0;
    leak_block();
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    pthread_t t;
    if (daemon) {
        close(0);
        close(2);
        if (pthread_create(&t, NULL, null_stdin, NULL) != 0)
            return 8;
        while (__atomic_load_n(&reopens, __ATOMIC_RELAXED) == 0) /* it runs before sites() */
            sched_yield();
    }
    int p[2] = {-1, -1};
    if (reuse && pipe(p) != 0) /* blocking, the lowest free numbers */
        return 3;
    if (reuse && write(p[1], "abc", 3) != 3)
        return 4;
    for (int i = 0; reuse && i < 8; i++) /* the numbers after: the profiler's files had them */
        if (open("/dev/null", O_WRONLY) < 0)
            return 7;
    sites();
    if (daemon) {
        __atomic_store_n(&sites_done, 1, __ATOMIC_RELEASE);
        pthread_join(t, NULL);
        if (misses)
            return 6;
    }
    char buf[8];
    if (reuse && (read(p[0], buf, sizeof(buf)) != 3 || memcmp(buf, "abc", 3) != 0))
        return 5;
    printf("%s: done\n", argc > 1 ? argv[1] : "closed");
    return 0;
}
