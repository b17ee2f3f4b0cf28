/* freesized.c — C23's free_sized and free_aligned_sized, which glibc 2.36
 * does not export: under cprof they must reach free's hook, so that the
 * blocks they free leave the heap profile.
 *
 * site_sized: 100 blocks of 1000 bytes from malloc; 60 freed by
 * free_sized, 40 kept. site_aligned: 100 blocks of 4096 bytes from
 * aligned_alloc(64); 70 freed by free_aligned_sized, 30 kept. Writes the
 * heap profile to argv[1] and prints "ok".
 * Usage: freesized FILE (under LD_PRELOAD=libcprof.so) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Weak: resolved from the preloaded cprof (or a glibc that has them). */
extern void free_sized(void *p, size_t size) __attribute__((weak));
extern void free_aligned_sized(void *p, size_t align, size_t size) __attribute__((weak));

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *site_sized(size_t n) { return E(malloc(n)); }
__attribute__((noinline)) static void *site_aligned(size_t n) { return E(aligned_alloc(64, n)); }

static void *a[100], *b[100];

int main(int argc, char **argv)
{
    int (*write_fd)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_heap_profile_write_fd");
    if (argc != 2 || !write_fd || !free_sized || !free_aligned_sized) {
        fprintf(stderr, "usage: freesized FILE (under LD_PRELOAD=libcprof.so, which exports free_sized)\n");
        return 2;
    }
    for (int i = 0; i < 100; i++) {
        a[i] = site_sized(1000);
        b[i] = site_aligned(4096);
        if (!a[i] || !b[i])
            return 1;
    }
    for (int i = 0; i < 60; i++)
        free_sized(a[i], 1000);
    for (int i = 0; i < 70; i++)
        free_aligned_sized(b[i], 64, 4096);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_fd(fd, 0) || close(fd))
        return 1;
    printf("ok\n");
    for (int i = 60; i < 100; i++)
        free(a[i]);
    for (int i = 70; i < 100; i++)
        free(b[i]);
    return 0;
}
