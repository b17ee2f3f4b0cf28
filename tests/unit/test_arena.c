// links: src/runtime/arena.c src/runtime/rt.c src/runtime/counters.c
/* test_arena.c — the bump allocator honours the alignment a type asks
 * for: struct counters (64, a cache line each against false sharing) used to
 * get the 16 every object gets, whatever was allocated before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/arena.h"
#include "runtime/rt.h"
#include "runtime/counters.h"

static void test_aligned_after_odd_sizes(void **state)
{
    (void)state;
    for (size_t odd = 1; odd < 200; odd += 23) {
        void *a = arena_alloc(odd);
        assert_non_null(a);
        assert_int_equal((uintptr_t)a % 16, 0);
        void *b = arena_alloc_aligned(100, 64);
        assert_non_null(b);
        assert_int_equal((uintptr_t)b % 64, 0);
        void *c = arena_alloc_aligned(8, 4096);
        assert_non_null(c);
        assert_int_equal((uintptr_t)c % 4096, 0);
    }
}

static void test_counters_block_aligned(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++) {
        arena_alloc(48); /* leave the cursor at 16 mod 64 */
        rt_thread_t t = {0};
        counters_t *s = counters_acquire(&t);
        assert_non_null(s);
        assert_int_equal((uintptr_t)s % _Alignof(counters_t), 0);
        assert_int_equal(_Alignof(counters_t), 64);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned_after_odd_sizes),
        cmocka_unit_test(test_counters_block_aligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
