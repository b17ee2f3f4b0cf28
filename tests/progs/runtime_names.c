/* runtime_names.c — a static function allocating 4 MiB and a C library
 * function (strdup) allocating 13 bytes, for tests/e2e/runtime_names.sh:
 * the runtime's profiles name them from the symbol tables. The pointers
 * are summed and printed so no allocation is optimized away. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[8];

__attribute__((noinline, noclone)) static void *static_alloc(size_t n)
{
    void *p = malloc(n); /* @static-alloc */
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(void)
{
    for (int i = 0; i < 4; i++)
        keep[i] = static_alloc(1 << 20);
    keep[4] = strdup("hello, world");
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= keep[i] != NULL;
    printf("allocated %s\n", ok ? "all" : "not all");
    return !ok;
}
