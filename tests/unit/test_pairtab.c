// links: graph
/* test_pairtab.c — the pair table of the entropy order's passes: weights
 * summed once per sample, the pairs' first-added order kept across growth,
 * clearing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/pairtab.h"

/* Weights and first-added order against a plain list, through growth from
 * 16 pairs to thousands; node indexes up to UINT32_MAX - 1. */
static void test_against_list(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint32_t src[N], dst[N];
    static int64_t weight[N];
    static uint32_t last[N];
    size_t n = 0;
    pairtab_t t;
    assert_int_equal(pairtab_init(&t, 1), 0);
    uint64_t x = 88172645463325252ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (uint32_t stamp = 1; stamp <= 2000; stamp++) {
        int64_t val = (int64_t)(RND() % 1000) - 100;
        for (int k = 0; k < 12; k++) {
            uint32_t a, b;
            if (n && RND() % 2) { /* a pair seen before, maybe in this sample */
                size_t i = RND() % n;
                a = src[i];
                b = dst[i];
            } else {
                a = RND() % 3 == 0 ? UINT32_MAX - 1 - (uint32_t)(RND() % 4) : (uint32_t)(RND() % 3000);
                b = (uint32_t)(RND() % 3000);
            }
            size_t i = 0;
            while (i < n && (src[i] != a || dst[i] != b))
                i++;
            if (i == n) {
                if (n == N)
                    continue;
                src[n] = a;
                dst[n] = b;
                weight[n] = 0;
                last[n] = 0;
                n++;
            }
            if (last[i] != stamp) {
                last[i] = stamp;
                weight[i] += val;
            }
            pairtab_prefetch(&t, a, b);
            assert_int_equal(pairtab_add(&t, a, b, stamp, val), 0);
        }
    }
#undef RND
    assert_true(n > 1000);
    assert_int_equal(t.n, n);
    for (size_t i = 0; i < n; i++) {
        const pairslot_t *s = &t.slots[t.order[i]];
        assert_int_equal(pairtab_src(s), src[i]);
        assert_int_equal(pairtab_dst(s), dst[i]);
        assert_int_equal(s->weight, weight[i]);
    }
    pairtab_clear(&t);
    assert_int_equal(t.n, 0);
    assert_int_equal(pairtab_add(&t, 7, 0, 1, 5), 0);
    assert_int_equal(pairtab_add(&t, 7, 0, 1, 5), 0);
    assert_int_equal(pairtab_add(&t, 7, 0, 2, 6), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.slots[t.order[0]].weight, 11);
    assert_int_equal(pairtab_dst(&t.slots[t.order[0]]), 0);
    pairtab_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
