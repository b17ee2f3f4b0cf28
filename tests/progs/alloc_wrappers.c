/* alloc_wrappers.c — allocations through wrappers, for alloc_wrappers.sh:
 * caller_a allocates 10 x 1000 bytes through xmalloc (on the built-in
 * list of CPROF_ALLOC_WRAPPERS), caller_b 20 x 700 through my_pool_alloc
 * (not on it); all stay live. Prints "TRUTH caller_a 10000" and
 * "TRUTH caller_b 14000". */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[30];

__attribute__((noinline)) void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

__attribute__((noinline)) void *my_pool_alloc(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory"); /* no tail call: a frame of its own */
    return p;
}

__attribute__((noinline)) void caller_a(void)
{
    for (int i = 0; i < 10; i++)
        keep[i] = xmalloc(1000);
}

__attribute__((noinline)) void caller_b(void)
{
    for (int i = 0; i < 20; i++)
        keep[10 + i] = my_pool_alloc(700);
}

int main(void)
{
    caller_a();
    caller_b();
    printf("TRUTH caller_a 10000\nTRUTH caller_b 14000\n");
    return 0;
}
