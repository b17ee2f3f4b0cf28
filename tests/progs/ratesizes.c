/* ratesizes.c — one call site allocating many distinct sizes, for the
 * bucket table at CPROF_RATE=1 (every allocation sampled, scale 1).
 *
 * site_many: one malloc call allocates and frees NSIZES objects, of sizes
 * 1 to NSIZES. site_kept: then 1000 objects of 100 to 1099 bytes, kept.
 * Writes the heap profile (found with dlsym: the program runs preloaded)
 * to the file argv[1]; prints "buckets N" (cprof_stats' stack_buckets)
 * and "ok". Usage: ratesizes FILE */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cprof.h"

#define NSIZES 300000

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *site_many(size_t n) { return E(malloc(n)); }
__attribute__((noinline)) static void *site_kept(size_t n) { return E(malloc(n)); }

static void *kept[1000];

int main(int argc, char **argv)
{
    int (*stats)(cprof_stats_t *) = (int (*)(cprof_stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    int (*write_fd)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_heap_profile_write_fd");
    if (argc != 2 || !stats || !write_fd) {
        fprintf(stderr, "usage: ratesizes FILE (under LD_PRELOAD=libcprof.so)\n");
        return 2;
    }
    for (size_t s = 1; s <= NSIZES; s++)
        free(site_many(s));
    for (int i = 0; i < 1000; i++)
        kept[i] = site_kept(100 + (size_t)i);
    cprof_stats_t st;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || stats(&st) || write_fd(fd, 0) || close(fd))
        return 1;
    printf("buckets %llu\nok\n", (unsigned long long)st.stack_buckets);
    for (int i = 0; i < 1000; i++)
        free(kept[i]);
    return 0;
}
