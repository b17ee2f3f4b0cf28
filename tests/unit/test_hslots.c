// links: src/base/hslots.c
/* test_hslots.c — a table grown from its slots keeps every slot, findable
 * from its stored hash by linear probing, with colliding hashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "base/hslots.h"

/* The slot of position i (0-based) with a hash that collides often. */
static uint64_t slot_of(size_t i)
{
    return hslots_entry((uint32_t)(i % 97) * 2654435761u, i);
}

static void insert(uint64_t *slots, size_t mask, uint64_t e)
{
    size_t k = (e >> 32) & mask;
    while (slots[k])
        k = (k + 1) & mask;
    slots[k] = e;
}

/* Every position 0..n-1 is reached from its hash's home before an empty
 * slot, once. */
static void check(const uint64_t *slots, size_t mask, size_t n)
{
    size_t full = 0;
    for (size_t i = 0; i <= mask; i++)
        full += slots[i] != 0;
    assert_int_equal(full, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t e = slot_of(i);
        size_t k = (e >> 32) & mask;
        while (slots[k] && slots[k] != e)
            k = (k + 1) & mask;
        assert_true(slots[k] == e);
        assert_true(hslots_same_hash(slots[k], e >> 32));
        assert_int_equal(hslots_pos(slots[k]), i);
    }
}

static void test_grow_keeps_slots(void **state)
{
    (void)state;
    uint64_t *slots = NULL;
    size_t mask = 12345; /* ignored while slots is NULL */
    assert_int_equal(hslots_resize(&slots, &mask, 8), 0);
    assert_int_equal(mask, 7);
    check(slots, mask, 0);
    size_t n = 0;
    for (size_t size = 8; size <= 65536; size *= 2) {
        for (; (n + 1) * 2 <= size; n++)
            insert(slots, mask, slot_of(n));
        check(slots, mask, n);
        assert_int_equal(hslots_resize(&slots, &mask, size * 2), 0);
        assert_int_equal(mask, size * 2 - 1);
        check(slots, mask, n);
    }
    free(slots);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_keeps_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
