/* unwind_deep.c — allocations under stacks that are hard to unwind, for
 * tests/e2e/unwind_exact.sh: deep and mutual recursion, calls through
 * function pointers, alloca and variable-size frames, code with and
 * without frame pointers (unwind_deep_nofp.c), C++ containers
 * (unwind_deep_cxx.cc), allocations in a signal handler, several threads.
 *
 *   unwind_deep all|fp ROUNDS
 *
 * "fp" runs only what a frame-pointer walk can follow: the parts of this
 * file, built with frame pointers, on the main thread. */
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* unwind_deep_nofp.c, built -fomit-frame-pointer */
void nofp_ping(int n, void (*leaf)(int));
int nofp_varframe(int n);
/* unwind_deep_cxx.cc */
void cxx_churn(int n);

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_alloc(int n)
{
    void *p = malloc((size_t)(n % 97) + 1);
    sink += (unsigned long)p;
    free(p);
}

__attribute__((noinline)) static void leaf_calloc(int n)
{
    void *p = calloc((size_t)(n % 13) + 1, 8);
    p = realloc(p, (size_t)(n % 300) + 64);
    sink += (unsigned long)p;
    free(p);
}

/* Deep recursion: every level allocates, so stacks of all depths appear,
 * also deeper than CPROF_DEPTH. */
__attribute__((noinline)) static int deep(int n)
{
    leaf_alloc(n);
    if (n == 0)
        return 0;
    return deep(n - 1) + 1;
}

/* Mutual recursion through a function pointer table. */
static void (*const table[2])(int, int);
__attribute__((noinline)) static void even(int n, int k)
{
    if (n <= 0) {
        leaf_calloc(k);
        return;
    }
    table[n & 1](n - 1, k);
    sink++;
}
__attribute__((noinline)) static void odd(int n, int k)
{
    leaf_alloc(k);
    table[n & 1](n - 1, k);
    sink++;
}
static void (*const table[2])(int, int) = {even, odd};

/* alloca: a frame whose size is only known at run time. */
__attribute__((noinline)) static void varframe(int n)
{
    char *buf = alloca((size_t)(n % 61) * 16 + 8);
    memset(buf, n, 8);
    sink += (unsigned long)buf[0];
    leaf_alloc(n);
    if (n % 5)
        varframe(n - 1);
}

/* A variable-length array, and a call into the frame-pointer-less file. */
__attribute__((noinline)) static void vla(int n)
{
    char buf[(n % 37) + 1];
    memset(buf, 0, sizeof(buf));
    sink += (unsigned long)buf[n % 37];
    leaf_calloc(n);
}

static void on_signal(int sig)
{
    (void)sig;
    /* malloc in a handler is not async-signal-safe in general, but the
     * handler only interrupts this program's own loop (raise). */
    leaf_alloc(7);
    deep(3);
}

static void round_fp(int r)
{
    deep(r % 80);
    even(r % 23, r);
    varframe(r % 40);
    vla(r);
}

static void round_all(int r)
{
    round_fp(r);
    nofp_ping(r % 19, leaf_alloc);
    sink += (unsigned long)nofp_varframe(r % 50);
    cxx_churn(r);
    if (r % 16 == 0)
        raise(SIGUSR1);
}

static int rounds;

static void *worker(void *arg)
{
    for (int r = 0; r < rounds; r++)
        round_all(r + (int)(long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    rounds = atoi(argv[2]);
    if (strcmp(argv[1], "fp") == 0) {
        for (int r = 0; r < rounds; r++)
            round_fp(r);
        return 0;
    }
    signal(SIGUSR1, on_signal);
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    worker(NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
