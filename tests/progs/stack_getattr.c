/* stack_getattr.c — the main thread asks for its own attributes, as Rust's
 * runtime does before main (tests/e2e/heap_getattr.sh). For the main
 * thread glibc's pthread_getattr_np reads /proc/self/maps with fopen,
 * which mallocs, while it holds the thread's lock: a profiler that asks
 * for the same attributes from that malloc waits on itself. */
#define _GNU_SOURCE /* pthread_getattr_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep;

__attribute__((noinline)) static void after_getattr(void)
{
    keep = malloc(1 << 20);
}

int main(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 2;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    after_getattr();
    printf("stack %s, allocated %s\n", size > 0 ? "known" : "unknown", keep ? "yes" : "no");
    return 0;
}
