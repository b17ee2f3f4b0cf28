// links: src/runtime/livemap.c src/runtime/arena.c src/runtime/rt.c
/* test_livemap.c — the live sampled-object map against a reference, through
 * growth and backward-shift deletion, and its behaviour when full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "runtime/arena.h"
#include "runtime/livemap.h"

enum { N = 200000 };

static void test_against_reference(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    static uintptr_t keys[N];
    static uint8_t present[N];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        keys[i] = (x & 0x7ffffffffff0ull) | 0x10; /* heap-like, 16-aligned, nonzero */
    }
    uint32_t ob;
    uint64_t os, size;
    uint32_t bucket;
    /* Random inserts and removals; every state checked against present[]. */
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            if ((i + round) % 3 == 0 && present[i]) {
                assert_true(livemap_remove((void *)keys[i], &bucket, &size));
                assert_int_equal(bucket, (uint32_t)(i & 0xffffff));
                assert_int_equal(size, (uint64_t)i * 8);
                present[i] = 0;
            } else if (!present[i]) {
                int rc = livemap_insert((void *)keys[i], (uint32_t)(i & 0xffffff), (uint64_t)i * 8,
                                        &ob, &os);
                assert_int_equal(rc, 1);
                present[i] = 1;
            }
        }
        uint64_t count = 0;
        for (int i = 0; i < N; i++) {
            count += present[i];
            if (present[i])
                assert_true(livemap_maybe((void *)keys[i]));
        }
        assert_int_equal(livemap_count(), count);
    }
    /* Re-inserting a live key replaces it and hands back the old value. */
    int k = 0;
    while (!present[k])
        k++;
    assert_int_equal(livemap_insert((void *)keys[k], 5, 99, &ob, &os), 0);
    assert_int_equal(os, (uint64_t)k * 8);
    assert_true(livemap_remove((void *)keys[k], &bucket, &size));
    assert_int_equal(bucket, 5);
    assert_int_equal(size, 99);
    assert_false(livemap_remove((void *)keys[k], &bucket, &size));
    /* Remove everything: the filter returns to empty for those keys. */
    for (int i = 0; i < N; i++)
        if (present[i] && i != k)
            assert_true(livemap_remove((void *)keys[i], &bucket, &size));
    assert_int_equal(livemap_count(), 0);
    for (int i = 0; i < N; i += 97)
        assert_false(livemap_maybe((void *)keys[i]));
}

/* Past the memory limit an insert fails cleanly instead of crashing. */
static void test_full(void **state)
{
    (void)state;
    arena_set_limit(arena_bytes() + (1u << 20));
    uint32_t ob;
    uint64_t os;
    int rc = 1;
    uintptr_t p = 0x100000;
    for (int i = 0; i < 10000000 && rc == 1; i++, p += 16)
        rc = livemap_insert((void *)p, 1, 1, &ob, &os);
    assert_int_equal(rc, -1);
    assert_true(arena_bytes() <= arena_limit());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
