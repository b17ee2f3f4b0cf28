/* memory_arenas.c — glibc's arenas for the memory profile's free bytes
 * (tests/e2e/memory_arenas.sh): a worker allocates 80 MiB of small blocks
 * (its arena needs a second heap), then another a little, each frees every
 * other block and keeps a 1 MiB mmapped chunk. Then main reads mallinfo2,
 * writes the memory profile as text (debug=1) to argv[1] and prints "FORDBLKS bytes" and
 * "CPROF_CALLS before after", the mallinfo2 calls libcprof.so made
 * (counted by tests/progs/mallinfo_count.c, preloaded after it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    size_t bytes;
    void **blocks;
    size_t n;
    void *big;
} work_t;

static void *work(void *arg)
{
    work_t *w = arg;
    w->n = w->bytes / 256;
    w->blocks = malloc(w->n * sizeof(*w->blocks));
    for (size_t i = 0; i < w->n; i++) {
        w->blocks[i] = malloc(64 + (i % 7) * 64); /* 256 on average */
        *(volatile char *)w->blocks[i] = (char)i;
    }
    for (size_t i = 0; i < w->n; i += 2) {
        free(w->blocks[i]);
        w->blocks[i] = NULL;
    }
    w->big = malloc(1 << 20); /* above the mmap threshold: its own chunk */
    *(volatile char *)w->big = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int (*write_mem)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_memory_profile_write_fd");
    int (*calls)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mallinfo_count_cprof");
    if (!write_mem || !calls)
        return 3;
    work_t w[2] = {{.bytes = 80u << 20}, {.bytes = 4u << 20}};
    pthread_t t[2];
    /* one after the other: the second heap follows the first at once, so
     * the kernel merges the two (and the second worker reuses the arena) */
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, work, &w[i]) || pthread_join(t[i], NULL))
            return 4;
    int before = calls();
    struct mallinfo2 mi = mallinfo2();
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_mem(fd, 1) != 0 || close(fd) != 0)
        return 5;
    int after = calls();
    size_t kept = 0;
    for (int i = 0; i < 2; i++)
        for (size_t k = 1; k < w[i].n; k += 2)
            kept += *(volatile char *)w[i].blocks[k] == (char)k;
    printf("FORDBLKS %zu\nCPROF_CALLS %d %d\nKEPT %zu\n", mi.fordblks, before, after, kept);
    return 0;
}
