/* memprof.c — for bench/memory_profile.sh. "pairs N": N mmap/munmap pairs
 * of 64 KiB, prints the process's CPU ns per pair. "write MIB N PATH":
 * maps and touches MIB MiB, keeps N touched 1000-byte blocks live, then
 * times cprof_memory_profile_write(PATH) and cprof_heap_profile_write
 * (PATH.heap: its resident_space reads pagemap too) and prints both wall
 * ms. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "pairs") == 0) {
        long n = atol(argv[2]);
        double t0 = ns(CLOCK_PROCESS_CPUTIME_ID);
        for (long i = 0; i < n; i++) {
            void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED || munmap(p, 65536))
                return 1;
        }
        printf("%.0f\n", (ns(CLOCK_PROCESS_CPUTIME_ID) - t0) / (double)n);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "write") == 0) {
        size_t mib = (size_t)atol(argv[2]);
        long n = atol(argv[3]);
        char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        memset(p, 1, mib << 20);
        void **v = malloc((size_t)n * sizeof(*v));
        for (long i = 0; i < n; i++) {
            v[i] = malloc(1000);
            memset(v[i], 1, 1000);
        }
        int (*w)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "cprof_memory_profile_write");
        int (*h)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "cprof_heap_profile_write");
        if (!w || !h)
            return 2;
        char heap[4096];
        snprintf(heap, sizeof(heap), "%s.heap", argv[4]);
        double t0 = ns(CLOCK_MONOTONIC);
        if (w(argv[4]))
            return 3;
        double t1 = ns(CLOCK_MONOTONIC);
        if (h(heap))
            return 3;
        printf("%.1f %.1f\n", (t1 - t0) / 1e6, (ns(CLOCK_MONOTONIC) - t1) / 1e6);
        return 0;
    }
    fprintf(stderr, "usage: memprof pairs N | memprof write MIB BLOCKS PATH\n");
    return 2;
}
