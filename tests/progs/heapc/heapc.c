/* heapc — a C program with known allocation sites, profiled by the
 * differential tests of cprof (tests/e2e/tool_gperf.sh) under gperftools'
 * heap profiler: alloc_large 8 x 1 MiB kept, alloc_medium 64 x 64 KiB
 * (half kept), alloc_small 20,000 x 128 B freed, nested_helper (through
 * alloc_nested) 300 x 4 KiB kept. Built with -g so both tools can
 * symbolize it from DWARF. */
#include <stdio.h>
#include <stdlib.h>

void *keep[1024]; /* external linkage: the stores (and mallocs) stay */
int nkeep;

__attribute__((noinline)) static void alloc_large(void)
{
    for (int i = 0; i < 8; i++)
        keep[nkeep++] = malloc(1 << 20);
}

__attribute__((noinline)) static void alloc_medium(void)
{
    for (int i = 0; i < 64; i++) {
        void *p = malloc(64 << 10);
        if (i % 2 == 0)
            keep[nkeep++] = p;
        else
            free(p);
    }
}

__attribute__((noinline)) static void alloc_small(void)
{
    for (int i = 0; i < 20000; i++) {
        char *volatile p = malloc(128);
        free(p);
    }
}

__attribute__((noinline)) static void nested_helper(void)
{
    for (int i = 0; i < 300; i++)
        keep[nkeep++] = malloc(4096);
}

__attribute__((noinline)) static void alloc_nested(void)
{
    nested_helper();
}

int main(void)
{
    alloc_large();
    alloc_medium();
    alloc_small();
    alloc_nested();
    printf("kept %d blocks\n", nkeep);
    return 0;
}
