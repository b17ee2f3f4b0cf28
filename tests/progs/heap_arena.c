/* heap_arena.c — a bump arena using include/cprof_heap.h, built without
 * -lcprof.
 *
 * site_backing: the arena's one 1 MiB block, from malloc. site_node: 1000
 * objects of 64 bytes carved from it (the first at the block's very start,
 * the address of the block itself), registered as heap "arena". Then
 * site_big mallocs and frees 2 MiB (the heap's high, with all 1000 nodes
 * live), and nodes 1..400 are released. With argv[1] and argv[2], writes
 * the heap profile and the peak profile there (found with dlsym, under
 * LD_PRELOAD=libcprof.so). With a third argument "backing", the arena
 * declares its block as backing memory (cprof_heap_backing). Prints "heap on" or
 * "heap off" (whether cprof_heap_register found cprof), then "ok".
 * Usage: heap_arena [HEAP PEAK [backing]] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cprof_heap.h"

#define NODES 1000
#define NODE 64

typedef struct {
    char *base;
    size_t used, cap;
    cprof_heap_t heap;
} arena_t;

__attribute__((noinline)) static void *site_backing(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *site_big(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static int write_profile(const char *fn, const char *path)
{
    int (*write_fd)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, fn);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return !write_fd || fd < 0 || write_fd(fd, 0) || close(fd);
}

static void *arena_get(arena_t *a, size_t n)
{
    if (a->used + n > a->cap)
        return NULL;
    void *p = a->base + a->used;
    a->used += n;
    cprof_heap_alloc(a->heap, p, n);
    return p;
}

__attribute__((noinline)) static void *site_node(arena_t *a)
{
    void *p = arena_get(a, NODE);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void *nodes[NODES];

int main(int argc, char **argv)
{
    arena_t a = {site_backing(1 << 20), 0, 1 << 20, cprof_heap_register("arena")};
    if (!a.base)
        return 1;
    if (argc > 3)
        cprof_heap_backing(a.heap, a.base);
    for (int i = 0; i < NODES; i++)
        if (!(nodes[i] = site_node(&a)))
            return 1;
    if (nodes[0] != a.base)
        return 1;
    void *big = site_big(2 << 20);
    if (!big)
        return 1;
    free(big);
    for (int i = 1; i <= 400; i++)
        cprof_heap_free(a.heap, nodes[i]);
    if (argc > 2 && (write_profile("cprof_heap_profile_write_fd", argv[1]) ||
                     write_profile("cprof_peak_profile_write_fd", argv[2])))
        return 1;
    printf("heap %s\nok\n", a.heap ? "on" : "off");
    free(a.base);
    return 0;
}
