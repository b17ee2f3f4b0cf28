/* pages.c — mapping a block's pages written. */
#include <stdint.h>
#include <sys/mman.h>

#include "base/pages.h"

#define STEP 4096 /* the smallest page: every page of any size is written */

/* A write that keeps the byte: faults the page in written. */
static void rewrite(uintptr_t at)
{
    volatile unsigned char *b = (volatile unsigned char *)at;
    *b = *b;
}

void pages_populate(void *p, size_t size)
{
    if (!size)
        return;
    uintptr_t lo = (uintptr_t)p, hi = lo + size;
    uintptr_t a = (lo + STEP - 1) & ~(uintptr_t)(STEP - 1), e = hi & ~(uintptr_t)(STEP - 1);
#ifdef MADV_POPULATE_WRITE
    if (e > a && madvise((void *)a, e - a, MADV_POPULATE_WRITE) == 0)
        a = e;
#endif
    for (uintptr_t q = a; q < e; q += STEP)
        rewrite(q);
    rewrite(lo); /* the first and last pages, the block's in part */
    rewrite(hi - 1);
}
