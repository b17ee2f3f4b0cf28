// links: src/runtime/rt.c
/* test_glibcusable.c — the hooks' fast path reads a glibc block's usable
 * size from its chunk header (rt_glibc_usable, rt.h) instead of calling
 * malloc_usable_size: on this machine's glibc (x86-64, and aarch64 under
 * qemu in arm64_units.sh) the two agree for blocks of every kind the hooks
 * see — small, large (mmapped), zeroed, grown and shrunk, aligned — in the
 * main arena and in a thread's. */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/rt.h"

static void same(void *p)
{
    assert_non_null(p);
    assert_int_equal(rt_glibc_usable(p), malloc_usable_size(p));
    free(p);
}

static void *every_kind(void *arg)
{
    (void)arg;
    static const size_t sizes[] = {0, 1, 8, 24, 25, 100, 1000, 4096, 70000, 200000, 1u << 22};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t s = sizes[i];
        same(malloc(s));
        same(calloc(3, s + 1));
        same(realloc(malloc(s + 1), 2 * s + 10));
        same(realloc(malloc(2 * s + 10), s + 1));
        same(memalign(64, s + 1));
        same(aligned_alloc(4096, 4096 * (s / 4096 + 1)));
        void *p = NULL;
        assert_int_equal(posix_memalign(&p, 256, s + 1), 0);
        same(p);
        same(valloc(s + 1));
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_arena),
        cmocka_unit_test(test_thread_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
