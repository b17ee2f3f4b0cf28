/* leak_fds.c — a program that closes every descriptor it inherited, as
 * ssh, sudo and daemons do, and then opens a pipe of its own (argument
 * "reuse") and /dev/null eight times, or nothing (argument "closed"): it
 * gets back the numbers the profiler's unwinder and files had. It leaks one 4321-byte block, allocates 20000
 * more blocks in sites() and frees them, and checks its pipe still holds
 * exactly what it wrote (it is empty at exit); prints a line, exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
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

int main(int argc, char **argv)
{
    int reuse = argc > 1 && strcmp(argv[1], "reuse") == 0;
    leak_block();
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int p[2] = {-1, -1};
    if (reuse && pipe(p) != 0) /* blocking, the lowest free numbers */
        return 3;
    if (reuse && write(p[1], "abc", 3) != 3)
        return 4;
    for (int i = 0; reuse && i < 8; i++) /* the numbers after: the profiler's files had them */
        if (open("/dev/null", O_WRONLY) < 0)
            return 7;
    sites();
    char buf[8];
    if (reuse && (read(p[0], buf, sizeof(buf)) != 3 || memcmp(buf, "abc", 3) != 0))
        return 5;
    printf("%s: done\n", reuse ? "reuse" : "closed");
    return 0;
}
