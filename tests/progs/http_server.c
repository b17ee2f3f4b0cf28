/* http_server.c — a long-running program for the /debug/pprof/ tests.
 *
 * At start it keeps known amounts from known functions (keep_small:
 * 100 x 10000 bytes, keep_large: 20 x 50000 bytes); then it loops until
 * killed, calling churn() (allocates and frees 64 blocks of 1000 bytes)
 * and incrementing a counter it writes to COUNTER_FILE, every 2 ms, so a
 * test can see that the program keeps working while clients misbehave.
 *
 *   http_server COUNTER_FILE [ADDR ADDR_FILE]
 *
 * Built with -DLINKED (and -lcprof), it starts the server itself with
 * cprof_http_start(ADDR), writes "127.0.0.1:PORT" to ADDR_FILE from
 * cprof_http_port(), and checks cprof_http_stop/start once on the way. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif

static void *volatile sink;

static void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void keep_small(void **out)
{
    for (int i = 0; i < 100; i++)
        out[i] = E(malloc(10000)); /* LINE:keep_small */
}

__attribute__((noinline)) static void keep_large(void **out)
{
    for (int i = 0; i < 20; i++)
        out[i] = E(malloc(50000)); /* LINE:keep_large */
}

__attribute__((noinline)) static void churn(void)
{
    for (int i = 0; i < 64; i++)
        free(E(malloc(1000))); /* LINE:churn */
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s COUNTER_FILE [ADDR ADDR_FILE]\n", argv[0]);
        return 2;
    }
    static void *small[100], *large[20];
    keep_small(small);
    keep_large(large);
    sink = small;
    sink = large;
#ifdef LINKED
    if (argc == 4) {
        if (cprof_http_port() != -107 /* -ENOTCONN */ || cprof_http_stop() != -107) {
            fprintf(stderr, "http_server: a server runs before cprof_http_start\n");
            return 1;
        }
        int rc = cprof_http_start(argv[2]);
        if (rc == 0 && cprof_http_start(argv[2]) != -114 /* -EALREADY */)
            rc = -1;
        if (rc == 0)
            rc = cprof_http_stop();
        if (rc == 0)
            rc = cprof_http_start(argv[2]);
        if (rc < 0 || cprof_http_port() <= 0) {
            fprintf(stderr, "http_server: cprof_http_start: %s\n", strerror(-rc));
            return 1;
        }
        char tmp[4200];
        snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "127.0.0.1:%d\n", cprof_http_port()) < 0 || fclose(f) != 0 ||
            rename(tmp, argv[3]) != 0)
            return 1;
    }
#endif
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    unsigned long long counter = 0;
    for (;;) {
        churn();
        counter++;
        char line[32];
        int n = snprintf(line, sizeof(line), "%llu\n", counter);
        if (pwrite(fd, line, (size_t)n, 0) != n)
            return 1;
        usleep(2000);
    }
}
