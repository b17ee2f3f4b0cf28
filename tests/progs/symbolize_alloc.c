/* symbolize_alloc.c — C allocations at known places for
 * tests/e2e/symbolize_cli.sh: plain functions, one with an always-inlined
 * helper (an inline frame), and a static one. Results are kept in a global
 * inside the allocating functions so no malloc call becomes a tail call. */
#include <stdlib.h>

static void *keep[256];
static int nkeep;

static inline __attribute__((always_inline)) void *helper_alloc(size_t n)
{
    void *p = malloc(n); /* @helper-alloc */
    keep[nkeep++] = p;
    return p;
}

__attribute__((noinline)) void *via_helper(size_t n)
{
    void *p = helper_alloc(n); /* @via-helper-call */
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) static void *static_alloc(size_t n)
{
    void *p = malloc(n); /* @static-alloc */
    keep[nkeep++] = p;
    return p;
}

__attribute__((noinline)) void *plain_alloc(size_t n)
{
    void *p = calloc(1, n); /* @plain-alloc */
    keep[nkeep++] = p;
    return p;
}

int main(void)
{
    for (int i = 0; i < 8; i++)
        via_helper(1 << 20);
    for (int i = 0; i < 4; i++)
        static_alloc(1 << 18);
    for (int i = 0; i < 2; i++)
        plain_alloc(1 << 16);
    return keep[0] == NULL;
}
