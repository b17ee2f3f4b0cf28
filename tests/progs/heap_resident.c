/* heap_resident.c — a touched and an untouched large block, for the heap
 * profile's resident_space.
 *
 * site_touched: 16 MiB from malloc, every byte written; site_untouched:
 * 16 MiB from malloc, never written (glibc maps it: only its header's page
 * is ever resident, or the huge page holding it under THP). Writes the heap
 * profile to PROFILE (cprof_heap_profile_write_fd, found with dlsym: no-op
 * without cprof), then writes DIR/ready and waits for DIR/stop (a test
 * reads /debug/pprof/heap meanwhile), up to 60 s. Prints the sum of the
 * touched block's bytes (so its writes are used) and "ok".
 * Usage: heap_resident PROFILE DIR */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIZE (16 << 20)

static void *volatile keep[2];

__attribute__((noinline)) static void *site_touched(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *site_untouched(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static int exists(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (!(keep[0] = site_touched(SIZE)) || !(keep[1] = site_untouched(SIZE)))
        return 1;
    int (*write_fd)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_heap_profile_write_fd");
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (write_fd && write_fd(fd, 0)) || close(fd))
        return 1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/ready", argv[2]);
    int rfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rfd < 0 || write(rfd, "1\n", 2) != 2 || close(rfd))
        return 1;
    for (int i = 0; i < 6000 && !exists(argv[2], "stop"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    long sum = 0;
    for (size_t i = 0; i < SIZE; i += 4096)
        sum += ((volatile char *)keep[0])[i];
    printf("%ld\nok\n", sum);
    free(keep[0]);
    free(keep[1]);
    return 0;
}
