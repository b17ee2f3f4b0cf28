/* heapsampled.c — sites with known totals for checking the default-rate
 * estimate: each function allocates N objects of one size S and keeps or
 * frees them. Prints "SITE <function> <N> <S> <kept N>" per site. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void site(const char *fn, long n, long s, long kept)
{
    printf("SITE %s %ld %ld %ld\n", fn, n, s, kept);
}

NOINLINE void site_small(void)
{
    for (int i = 0; i < 400000; i++)
        E(malloc(64));
    site(__func__, 400000, 64, 400000);
}

NOINLINE void site_medium(void)
{
    for (int i = 0; i < 20000; i++)
        E(malloc(3000));
    site(__func__, 20000, 3000, 20000);
}

NOINLINE void site_freed(void)
{
    for (int i = 0; i < 100000; i++)
        free(E(malloc(512)));
    site(__func__, 100000, 512, 0);
}

NOINLINE void site_half(void)
{
    static void *p[10000];
    for (int i = 0; i < 10000; i++)
        p[i] = E(malloc(10000));
    for (int i = 0; i < 10000; i += 2)
        free(p[i]);
    site(__func__, 10000, 10000, 5000);
}

/* 64 times the default rate: sampled with probability 1 - e^-64, and the
 * unbiasing scale 1/(1 - e^-64) is exactly 1.0 in double precision. */
NOINLINE void site_huge(void)
{
    E(malloc(32 << 20));
    site(__func__, 1, 32 << 20, 1);
}

int main(void)
{
    site_small();
    site_medium();
    site_freed();
    site_half();
    site_huge();
    return 0;
}
