// links: src/base/strs.c
/* test_strs.c — strs_sort orders as Go's sort.Strings (bytes, not locale:
 * "Z" before "a", a prefix before its extensions), and takes no array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/strs.h"

static void test_sorts_bytewise(void **state)
{
    (void)state;
    const char *v[] = {"b", "a:[x]", "Z", "a", "\xc3\xa9", ""};
    const char *want[] = {"", "Z", "a", "a:[x]", "b", "\xc3\xa9"};
    strs_sort(v, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(v[i], want[i]);
}

static void test_empty(void **state)
{
    (void)state;
    strs_sort(NULL, 0);
    char s[] = "only";
    char *one[] = {s};
    strs_sort(one, 1);
    assert_ptr_equal(one[0], s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorts_bytewise),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
