/* attach_hostile.c — a target that cprof attach must refuse without harm:
 *   attach_hostile DIR sigblock   blocks every signal (cprof never finds a
 *                                 safe point and gives up)
 *   attach_hostile DIR seccomp    a seccomp filter kills the process on
 *                                 mmap(PROT_EXEC), as dlopen does
 *   attach_hostile DIR late       the same filter installed only once
 *                                 DIR/go appears (after an attach), then
 *                                 DIR/filtered written: detach must work
 * It writes DIR/ready, then computes the same floating-point sums (double
 * on SSE, long double on x87) round after round until DIR/finish appears,
 * and prints the first round's sums and how many rounds differed from it:
 * the same output with and without an attempted attach, exit 0. A lost
 * MXCSR (exceptions unmasked) kills it with SIGFPE; a lost x87 control word
 * changes the long double sum. */
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "phases.h"

#define TERMS 200000


/* Inexact at every term: traps as soon as MXCSR unmasks it. */
static double sse_sum(void)
{
    volatile double s = 0;
    for (int i = 1; i <= TERMS; i++)
        s += 1.0 / (double)i;
    return s;
}

/* Rounded at 64 bits of mantissa only under the x87 control word the
 * program started with. */
static long double x87_sum(void)
{
    volatile long double s = 0;
    for (int i = 1; i <= TERMS; i++)
        s += 1.0L / (long double)i;
    return s;
}

static void kill_exec_mmap(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: attach_hostile DIR sigblock|seccomp|late\n");
        return 2;
    }
    phase_dir = argv[1];
    if (strcmp(argv[2], "sigblock") == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
    } else if (strcmp(argv[2], "seccomp") == 0) {
        kill_exec_mmap();
    } else if (strcmp(argv[2], "late") != 0) {
        fprintf(stderr, "unknown mode %s\n", argv[2]);
        return 2;
    }
    double d0 = sse_sum();
    long double l0 = x87_sum();
    touch("ready");
    if (strcmp(argv[2], "late") == 0) {
        while (!exists("go"))
            usleep(10000);
        kill_exec_mmap();
        touch("filtered");
    }
    long bad = 0;
    do {
        if (sse_sum() != d0 || x87_sum() != l0)
            bad++;
    } while (!exists("finish"));
    printf("sse %.17g x87 %.21Lg differing rounds %ld\n", d0, l0, bad);
    return 0;
}
