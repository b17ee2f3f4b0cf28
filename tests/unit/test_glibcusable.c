// links: src/runtime/rt.c -ldl
/* test_glibcusable.c — the hooks' fast path reads a glibc block's usable
 * size from its chunk header (rt_glibc_usable, rt.h) instead of calling
 * malloc_usable_size: on this machine's glibc (x86-64, and aarch64 under
 * qemu in arm64_units.sh) the two agree for blocks of every kind the hooks
 * see — small, large (mmapped), zeroed, grown and shrunk, aligned — in the
 * main arena and in a thread's; and that header never has the bit that
 * marks cprof's own blocks (RT_CPROF_BLOCK). The C library's own functions, found in
 * libc.so.6 itself: under ASan the program's malloc is ASan's. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/rt.h"

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*valloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    void (*free)(void *);
} c;

static void same(void *p)
{
    assert_non_null(p);
    assert_int_equal(rt_glibc_usable(p), c.malloc_usable_size(p));
    /* free's fast path takes a block with this bit for cprof's own */
    assert_int_equal(((const size_t *)p)[-1] & RT_CPROF_BLOCK, 0);
    c.free(p);
}

static void *every_kind(void *arg)
{
    (void)arg;
    static const size_t sizes[] = {0, 1, 8, 24, 25, 100, 1000, 4096, 70000, 200000, 1u << 22};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t s = sizes[i];
        same(c.malloc(s));
        same(c.calloc(3, s + 1));
        same(c.realloc(c.malloc(s + 1), 2 * s + 10));
        same(c.realloc(c.malloc(2 * s + 10), s + 1));
        same(c.memalign(64, s + 1));
        same(c.aligned_alloc(4096, 4096 * (s / 4096 + 1)));
        void *p = NULL;
        assert_int_equal(c.posix_memalign(&p, 256, s + 1), 0);
        same(p);
        same(c.valloc(s + 1));
    }
    return NULL;
}

static void test_main_arena(void **state)
{
    (void)state;
    every_kind(NULL);
}

static void test_thread_arena(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, every_kind, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!libc)
        return 1;
    *(void **)&c.malloc = dlsym(libc, "malloc");
    *(void **)&c.calloc = dlsym(libc, "calloc");
    *(void **)&c.realloc = dlsym(libc, "realloc");
    *(void **)&c.memalign = dlsym(libc, "memalign");
    *(void **)&c.aligned_alloc = dlsym(libc, "aligned_alloc");
    *(void **)&c.posix_memalign = dlsym(libc, "posix_memalign");
    *(void **)&c.valloc = dlsym(libc, "valloc");
    *(void **)&c.malloc_usable_size = dlsym(libc, "malloc_usable_size");
    *(void **)&c.free = dlsym(libc, "free");
    if (!c.malloc || !c.calloc || !c.realloc || !c.memalign || !c.aligned_alloc ||
        !c.posix_memalign || !c.valloc || !c.malloc_usable_size || !c.free)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_arena),
        cmocka_unit_test(test_thread_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
