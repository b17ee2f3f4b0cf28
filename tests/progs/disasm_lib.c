/* disasm_lib.c — the shared library half of disasm_main.c. */
#include <stdlib.h>

__attribute__((noipa)) double lib_work(int n)
{
    double s = 0;
    for (int i = 1; i < n; i++)
        s += (double)i / (i + 5) * (i % 11);
    return s;
}

__attribute__((noipa)) void *lib_grab(size_t n)
{
    return malloc(n);
}
