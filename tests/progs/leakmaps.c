// leakmaps.c — anonymous mappings the leak scan must read with care, each
// keeping blocks beside a few truly dropped (the leaks). Usage: leakmaps MODE
//   guard    a 1 MiB mapping with a guard region (MADV_GUARD_INSTALL,
//            Linux 6.13) in its middle, whose reading faults; a block kept
//            on each side of it. Prints "guard: unsupported" and exits 0
//            if the kernel has no guard regions.
//   reserve  a 16 GiB MAP_NORESERVE reservation of which only two pages
//            were ever touched, each keeping a block
// Prints "MODE: kept K, dropped D" and exits 0; the dropped blocks are
// DROP_N blocks of DROP_SIZE bytes, allocated in drop_blocks.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define DROP_N 5
#define DROP_SIZE 3000

static inline void *escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void drop_blocks(void)
{
    for (int i = 0; i < DROP_N; i++)
        escape(memset(malloc(DROP_SIZE), i, DROP_SIZE));
}

/* The dead stack below main keeps what malloc's callers left there (as in
 * leakroots.c): clear it, or a dropped block looks reachable. */
__attribute__((noinline)) static void scrub_stack(void)
{
    char dead[1 << 16];
    explicit_bzero(dead, sizeof(dead));
    escape(dead);
}

/* Keeps a block of 64 bytes at m + off; the only pointer to it. */
__attribute__((noinline)) static void keep_at(char *m, size_t off)
{
    void *volatile *slot = (void *volatile *)(m + off);
    *slot = escape(malloc(64));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    size_t len;
    if (strcmp(mode, "guard") == 0)
        len = (size_t)1 << 20;
    else if (strcmp(mode, "reserve") == 0)
        len = (size_t)16 << 30;
    else {
        fprintf(stderr, "usage: leakmaps guard|reserve\n");
        return 2;
    }
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    keep_at(m, 64);
    keep_at(m, len - 4096 + 64);
    if (strcmp(mode, "guard") == 0 && madvise(m + len / 2, 4096, MADV_GUARD_INSTALL) != 0) {
        if (errno != EINVAL) {
            perror("madvise");
            return 1;
        }
        printf("guard: unsupported\n");
        return 0;
    }
    drop_blocks();
    scrub_stack();
    printf("%s: kept 2, dropped %d\n", mode, DROP_N);
    return 0; /* the leak profile is written at exit, m still mapped */
}
