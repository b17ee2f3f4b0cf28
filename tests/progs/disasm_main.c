/* disasm_main.c — CPU and allocations in known functions of the main
 * executable and of a shared library (disasm_lib.c), for tool_disasm.sh.
 * noipa keeps every call: a pure function would be hoisted out of a loop. */
#include <stdlib.h>

double lib_work(int n);
void *lib_grab(size_t n);

volatile double sink;

__attribute__((noipa)) double work(int n)
{
    double s = 0;
    for (int i = 1; i < n; i++)
        s += (double)i / (i + 3) * (i % 7);
    return s;
}

__attribute__((noipa)) double spin(int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += work(1500) + lib_work(1500);
    return s;
}

__attribute__((noipa)) void *grab(size_t n)
{
    return malloc(n);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 40000;
    for (int i = 0; i < 3000; i++) {
        void *p = i % 2 ? grab(1000 + (size_t)i) : lib_grab(100 + (size_t)i % 50);
        if (i % 3)
            free(p);
    }
    sink = spin(rounds);
    return 0;
}
