/* unwind_deep_nofp.c — the part of unwind_deep built -fomit-frame-pointer:
 * mutual recursion and variable-size frames without a frame pointer. */
#include <alloca.h>
#include <stdlib.h>
#include <string.h>

void nofp_ping(int n, void (*leaf)(int));
void nofp_pong(int n, void (*leaf)(int));
int nofp_varframe(int n);

__attribute__((noinline)) void nofp_ping(int n, void (*leaf)(int))
{
    if (n > 0)
        nofp_pong(n - 1, leaf);
    leaf(n);
}

__attribute__((noinline)) void nofp_pong(int n, void (*leaf)(int))
{
    void *p = malloc((size_t)n * 3 + 5);
    if (n > 0)
        nofp_ping(n - 1, leaf);
    free(p);
}

/* alloca in a function built without frame pointers: gcc then keeps one
 * anyway (rbp-based CFA) for this frame only. */
__attribute__((noinline)) int nofp_varframe(int n)
{
    char *buf = alloca((size_t)n * 8 + 8);
    memset(buf, 1, (size_t)n * 8 + 8);
    char *p = malloc((size_t)n + 1);
    int r = buf[n] + (p != NULL);
    free(p);
    return n > 0 ? r + nofp_varframe(n / 2) : r;
}
