/* dlopen_lib.c — a small shared library for dlopen_storm.c: allocates in
 * its constructor, frees in its destructor, has thread-local storage (its
 * dynamic TLS block is allocated by the loader on first use), and exports
 * a function that allocates and frees. */
#include <stdlib.h>
#include <string.h>

static char *ctor_block;
static __thread char tls_buf[256];
static __thread int tls_count;

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((constructor)) static void lib_init(void)
{
    ctor_block = E(malloc(100));
    memset(ctor_block, 1, 100);
}

__attribute__((destructor)) static void lib_fini(void)
{
    free(ctor_block);
}

__attribute__((noinline)) int dlopen_lib_work(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        char *p = E(malloc(32 + (size_t)i));
        p[0] = (char)i;
        tls_buf[i % 256] = p[0];
        sum += p[0] + tls_buf[(i + 1) % 256];
        free(p);
    }
    tls_count++;
    return sum + tls_count;
}
