/* symbolize_lld.c — allocations at known functions placed more than a page
 * into the text, for tests/e2e/symbolize_lld.sh. Linked with lld, whose
 * executable segment starts inside the read-only segment's last file page:
 * a symbolizer that takes the read-only segment for the r-xp mapping names
 * every frame after code one page lower, which here is pad(). */
#include <stdio.h>
#include <stdlib.h>

static void *keep[16];
static int nkeep;

/* Two pages of code before the allocating functions (same section, emitted
 * first). Never called; `used` keeps it. */
__attribute__((noinline, used)) static void pad(void)
{
    __asm__ volatile(".skip 8192, 0x90");
}

__attribute__((noinline)) void *alloc_a(size_t n)
{
    void *p = malloc(n); /* @alloc-a */
    keep[nkeep++] = p;
    return p;
}

__attribute__((noinline)) void *alloc_b(size_t n)
{
    void *p = malloc(n); /* @alloc-b */
    keep[nkeep++] = p;
    return p;
}

int main(void)
{
    for (int i = 0; i < 4; i++)
        alloc_a(1 << 20);
    for (int i = 0; i < 2; i++)
        alloc_b(1 << 20);
    int ok = 1;
    for (int i = 0; i < nkeep; i++)
        ok &= keep[i] != NULL;
    printf("allocated %d\n", nkeep);
    return !ok;
}
