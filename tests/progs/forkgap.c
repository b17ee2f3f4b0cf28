/* forkgap.c — where a fork child's first heap sample falls. FORKS times,
 * after some allocation, the program forks; parent and child then allocate
 * the same sequence of 1000-byte blocks and each finds the index of its
 * first sampled one (cprof_stats' sampled_allocs going up). A child that
 * kept the parent's countdown samples at the same index as the parent.
 * The first fork is a warm-up: one side allocates on it (a first fork's own
 * work), so its indices differ either way.
 * Prints "fork K: parent P child C" per fork and "ok"; exits 0.
 * Run under LD_PRELOAD=libcprof.so at the default rate. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cprof.h"

#define FORKS 4
#define BLOCK 1000
#define MAXBLOCKS 20000 /* 20 MB: past the first sample but with ~e^-38 odds */

static int (*stats)(cprof_stats_t *);

static uint64_t sampled(void)
{
    cprof_stats_t st;
    return stats(&st) == 0 ? st.sampled_allocs : 0;
}

/* The index of the first sampled block of a run, or -1. */
static int first_sampled(void)
{
    static void *blocks[MAXBLOCKS];
    int first = -1;
    uint64_t s0 = sampled();
    for (int i = 0; i < MAXBLOCKS && first < 0; i++) {
        blocks[i] = malloc(BLOCK);
        __asm__ volatile("" : : "g"(blocks[i]) : "memory");
        if (sampled() != s0)
            first = i;
    }
    for (int i = 0; i < MAXBLOCKS && blocks[i]; i++) {
        free(blocks[i]);
        blocks[i] = NULL;
    }
    return first;
}

int main(void)
{
    stats = (int (*)(cprof_stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    if (!stats) {
        fprintf(stderr, "forkgap: run it under LD_PRELOAD=libcprof.so\n");
        return 2;
    }
    for (int k = 0; k < FORKS; k++) {
        free(malloc(BLOCK * (k + 1) * 7)); /* somewhere else in the gap */
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            int c = first_sampled();
            _exit(write(fds[1], &c, sizeof(c)) == sizeof(c) ? 0 : 1);
        }
        int p = first_sampled(), c = -2, st = 0;
        if (read(fds[0], &c, sizeof(c)) != sizeof(c) || waitpid(pid, &st, 0) != pid ||
            !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
        close(fds[0]);
        close(fds[1]);
        printf("fork %d: parent %d child %d\n", k, p, c);
    }
    printf("ok\n");
    return 0;
}
