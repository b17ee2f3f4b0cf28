/* overflowrate.c — fills the heap profile's bucket table (run it with a
 * small CPROF_MEMORY_LIMIT): 2^17 distinct stacks (rec's path of ra and rb
 * calls) each allocate and free 8 blocks of 64 bytes; the samples past the
 * table count into the overflow bucket. Then it writes the heap profile
 * to argv[1], sets the rate to 0 (cprof_set_rate) and writes it again to
 * argv[2]: nothing was sampled in between, so both must say the same.
 * Prints "ok" and exits 0. Usage: overflowrate A B */
#include <cprof.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LEVELS 17

static void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void rec(int d, unsigned bits);
__attribute__((noinline)) static void ra(int d, unsigned bits)
{
    rec(d, bits);
    E(0); /* no tail call: the frame stays on the stack */
}
__attribute__((noinline)) static void rb(int d, unsigned bits)
{
    rec(d, bits);
    E(0);
}
__attribute__((noinline)) static void rec(int d, unsigned bits)
{
    if (d == 0) {
        for (int i = 0; i < 8; i++)
            free(E(malloc(64)));
        return;
    }
    if (bits & 1)
        ra(d - 1, bits >> 1);
    else
        rb(d - 1, bits >> 1);
    E(0);
}

static int write_to(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return fd < 0 || cprof_heap_profile_write_fd(fd, 0) || close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: overflowrate A B\n");
        return 2;
    }
    for (unsigned b = 0; b < 1u << LEVELS; b++)
        rec(LEVELS, b);
    if (write_to(argv[1]) || cprof_set_rate(0) || write_to(argv[2]))
        return 1;
    printf("ok\n");
    return 0;
}
