/* early_lib.c — a shared library whose constructor allocates before any
 * constructor of a preloaded profiler would otherwise run (the loader
 * runs a library's constructors before those of objects loaded earlier,
 * LD_PRELOAD's included): 54321 bytes kept, 1000 freed. */
#include <stdlib.h>
#include <string.h>

static char *volatile table; /* volatile: kept and read, never optimized away */

__attribute__((noinline)) static void early_ctor_alloc(void)
{
    char *gone = malloc(1000);
    table = malloc(54321);
    if (!table || !gone)
        abort();
    memset(table, 7, 54321);
    memset(gone, 1, 1000);
    free(gone);
}

__attribute__((constructor)) static void early_ctor(void)
{
    early_ctor_alloc();
}

int early_sum(void)
{
    return table[0] + table[54320];
}
