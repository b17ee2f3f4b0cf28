/* profio_c — a C program for gperftools' profilers (tcmalloc HEAPPROFILE,
 * libprofiler CPUPROFILE), whose legacy outputs tests/e2e/profile_legacy.sh
 * parses with the format library and with go tool pprof. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Not static: the compiler must not drop the stores (and the mallocs). */
void *keep[1024];
int nkeep;
static volatile unsigned long sink;

__attribute__((noinline)) static void alloc_large(void)
{
    for (int i = 0; i < 8; i++) {
        keep[nkeep] = malloc(1 << 20);
        memset(keep[nkeep++], 1, 1 << 20);
    }
}

__attribute__((noinline)) static void alloc_medium(void)
{
    for (int i = 0; i < 64; i++) {
        char *p = malloc(64 << 10);
        p[0] = 1;
        if (i % 2)
            keep[nkeep++] = p;
        else
            free(p);
    }
}

__attribute__((noinline)) static void alloc_small(void)
{
    for (int i = 0; i < 10000; i++) {
        char *p = malloc(128);
        p[0] = (char)i;
        sink += (unsigned long)p[0];
        free(p);
    }
}

__attribute__((noinline)) static void *nested_helper(void)
{
    return calloc(1, 4096);
}

__attribute__((noinline)) static void alloc_nested(void)
{
    for (int i = 0; i < 200; i++)
        keep[nkeep++] = nested_helper();
}

__attribute__((noinline)) static void spin(double secs)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i * (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
    alloc_large();
    alloc_medium();
    alloc_small();
    alloc_nested();
    if (argc > 1)
        spin(atof(argv[1]));
    printf("%d blocks kept\n", nkeep);
    return 0;
}
