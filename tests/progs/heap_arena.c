/* heap_arena.c — a bump arena using include/cprof_heap.h, built without
 * -lcprof.
 *
 * site_backing: the arena's one 1 MiB block, from malloc. site_node: 1000
 * objects of 64 bytes carved from it (the first at the block's very start,
 * the address of the block itself), registered as heap "arena". Then
 * site_big mallocs and frees 2 MiB (the heap's high, with all 1000 nodes
 * live), and nodes 1..400 are released. site_kept: a chain of 10 objects
 * of the arena that only the static `kept` reaches, through its head
 * (each links the next). site_lost: a chain of 100 objects linked alike
 * whose head nothing keeps: the leak, which the program counts as it
 * makes it. With argv[1..4], writes the heap profile, the peak profile,
 * the leak profile and the memory profile there (found with dlsym, under
 * LD_PRELOAD=libcprof.so). With a fifth argument "backing", the arena
 * declares its block as backing memory (cprof_heap_backing). Prints "heap on" or
 * "heap off" (whether cprof_heap_register found cprof), what it leaked, then "ok".
 * Usage: heap_arena [HEAP PEAK LEAKS MEMORY [backing]] */
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

/* Inlined, so that each site_* is its objects' allocating frame. */
__attribute__((always_inline)) static inline void *arena_get(arena_t *a, size_t n)
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

/* A chain of n objects from site, each linking the next; its head. */
static void **chain(arena_t *a, void *(*site)(arena_t *), int n)
{
    void **head = NULL;
    for (int i = 0; i < n; i++) {
        void **p = site(a);
        if (!p)
            return NULL;
        *p = head;
        head = p;
    }
    return head;
}

__attribute__((noinline)) static void *site_kept(arena_t *a)
{
    void *p = arena_get(a, NODE);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *site_lost(arena_t *a)
{
    void *p = arena_get(a, NODE);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void *nodes[NODES];
static void **volatile kept;
static long lost_objects, lost_bytes;

/* Makes the leak in a frame of its own, gone (and overwritten by the
 * profile writers' frames) before the scan. */
__attribute__((noinline)) static int leak(arena_t *a)
{
    void **volatile head = chain(a, site_lost, 100);
    if (!head)
        return 1;
    lost_objects = 100;
    lost_bytes = 100 * NODE;
    head = NULL;
    return 0;
}

int main(int argc, char **argv)
{
    arena_t a = {site_backing(1 << 20), 0, 1 << 20, cprof_heap_register("arena")};
    if (!a.base)
        return 1;
    if (argc > 5)
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
    if (!(kept = chain(&a, site_kept, 10)) || leak(&a))
        return 1;
    if (argc > 4 && (write_profile("cprof_heap_profile_write_fd", argv[1]) ||
                     write_profile("cprof_peak_profile_write_fd", argv[2]) ||
                     write_profile("cprof_leak_profile_write_fd", argv[3]) ||
                     write_profile("cprof_memory_profile_write_fd", argv[4])))
        return 1;
    printf("heap %s\nleaked %ld objects %ld bytes\nok\n", a.heap ? "on" : "off", lost_objects,
           lost_bytes);
    free(a.base);
    return 0;
}
