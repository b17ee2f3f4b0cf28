/* arm64_unwind.c — stack shapes for the unwinder check on aarch64
 * (tests/e2e/arm64_unwind.sh, CPROF_UNWIND_CHECK): allocations under
 * recursion, a call through a function pointer, alloca (the CFA then
 * follows x29), a frame of several KiB (x29 and x30 saved far below the
 * CFA) and a thread. Built with and without frame pointers and with
 * pointer authentication (return addresses signed on the stack). Prints
 * "done <allocations>". */
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3 /* allocations per shape: each checked stack is slow under qemu */

static int count;

static void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) void alloc_some(void)
{
    for (int i = 0; i < N; i++, count++)
        free(E(malloc(100 + (size_t)i)));
}

__attribute__((noinline)) int recurse(int d)
{
    if (d)
        recurse(d - 1);
    else
        alloc_some();
    __asm__ volatile("" ::: "memory");
    return d;
}

__attribute__((noinline)) void by_pointer(void (*volatile fn)(void))
{
    fn();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void with_alloca(size_t n)
{
    char *buf = alloca(n);
    memset(E(buf), 1, n);
    alloc_some();
    E(buf);
}

__attribute__((noinline)) void big_frame(void)
{
    char buf[6000];
    memset(E(buf), 2, sizeof(buf));
    alloc_some();
    E(buf);
}

static void *thread_main(void *arg)
{
    recurse(3);
    return arg;
}

int main(int argc, char **argv)
{
    recurse(6);
    by_pointer(alloc_some);
    with_alloca(argc > 100 ? 1 : 300 + (size_t)argc);
    big_frame();
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) == 0)
        pthread_join(t, NULL);
    (void)argv;
    printf("done %d\n", count);
    return 0;
}
