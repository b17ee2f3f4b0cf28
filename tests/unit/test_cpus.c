// links: src/base/cpus.c
/* test_cpus.c — the usable CPUs follow the affinity mask: one CPU when the
 * thread is pinned to one, every CPU of the mask otherwise. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/cpus.h"

static void test_follows_affinity(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
    assert_int_equal(cpus_usable(), CPU_COUNT(&all));
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    int pinned = cpus_usable();
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    assert_int_equal(pinned, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
