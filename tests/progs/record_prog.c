/* record_prog.c — a program with known allocations for the cprof tool's
 * tests (tool_record.sh, tool_fetch.sh):
 *   keep_a   10 x 1000 bytes, kept
 *   keep_b    5 x 4096 bytes, kept
 *   churn   100 x 64 bytes, each freed at once
 * Then it prints "hello from record_prog" on stdout and ends as told:
 *   record_prog [N]          exit(N) (default 0)
 *   record_prog signal N     raise(N) (no exit-time profile)
 *   record_prog fork         a forked child allocates (child_alloc: 3 x
 *                            777 bytes) and exits; the parent waits, exits 0
 *   record_prog _exit        _exit(0): no exit-time profile either */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *kept[64];
static int nkept;

/* Every pointer escapes, so no allocation is optimized away. */
static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

NOINLINE void keep_a(void)
{
    for (int i = 0; i < 10; i++)
        kept[nkept++] = E(malloc(1000));
}

NOINLINE void keep_b(void)
{
    for (int i = 0; i < 5; i++)
        kept[nkept++] = E(malloc(4096));
}

NOINLINE void churn(void)
{
    for (int i = 0; i < 100; i++)
        free(E(malloc(64)));
}

NOINLINE void child_alloc(void)
{
    for (int i = 0; i < 3; i++)
        kept[nkept++] = E(malloc(777));
}

int main(int argc, char **argv)
{
    keep_a();
    keep_b();
    churn();
    printf("hello from record_prog\n");
    fflush(stdout);
    if (argc > 2 && strcmp(argv[1], "signal") == 0) {
        signal(atoi(argv[2]), SIG_DFL);
        raise(atoi(argv[2]));
        return 99;
    }
    if (argc > 1 && strcmp(argv[1], "_exit") == 0)
        _exit(0);
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            child_alloc();
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        return 0;
    }
    return argc > 1 ? atoi(argv[1]) : 0;
}
