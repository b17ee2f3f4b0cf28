// links: src/runtime/sampler.c src/runtime/rt.c -lm
/* test_sampler.c — the sampling decision and the unbiasing math. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "runtime/sampler.h"

/* Fraction of n allocations of `size` that are sampled at `rate`. */
static double sampled_fraction(int64_t rate, size_t size, long n)
{
    rt_thread_t t = {0};
    sampler_set_rate(rate);
    long hits = 0;
    for (long i = 0; i < n; i++)
        hits += sampler_take(&t, size);
    return (double)hits / (double)n;
}

/* Each allocation is sampled independently with p = 1 - exp(-size/rate):
 * the gaps are memoryless. Checked within 5 standard errors, seeded. */
static void test_probability(void **state)
{
    (void)state;
    sampler_set_seed(12345);
    const int64_t R = 524288;
    const size_t sizes[] = {64, 4096, 131072, 524288, 2097152};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        long n = sizes[i] < 4096 ? 20000000 : 400000;
        double p = 1 - exp(-(double)sizes[i] / (double)R);
        double got = sampled_fraction(R, sizes[i], n);
        double se = sqrt(p * (1 - p) / (double)n);
        assert_true(fabs(got - p) < 5 * se);
    }
}

static void test_rate_one_and_off(void **state)
{
    (void)state;
    assert_true(sampled_fraction(1, 1, 1000) == 1.0);
    assert_true(sampled_fraction(1, 100000, 1000) == 1.0);
    assert_true(sampled_fraction(0, 1 << 30, 1000) == 0.0);
}

/* The first allocation of a thread is not always sampled (Go draws the
 * first gap when the thread's cache is made). */
static void test_first_allocation(void **state)
{
    (void)state;
    sampler_set_seed(7);
    sampler_set_rate(524288);
    int first_sampled = 0;
    for (int i = 0; i < 1000; i++) {
        rt_thread_t t = {0};
        first_sampled += sampler_take(&t, 100);
    }
    assert_true(first_sampled < 10);
}

/* Go's scaleHeapSample on the numbers of pprof-format.md §6.3. */
static void test_scale(void **state)
{
    (void)state;
    int64_t c, b;
    sampler_scale(55, 55 * 1048576LL, 524288, &c, &b);
    assert_int_equal(c, 63);
    assert_int_equal(b, 66698315);
    sampler_scale(10, 1000, 1, &c, &b);
    assert_int_equal(c, 10);
    assert_int_equal(b, 1000);
    sampler_scale(0, 0, 524288, &c, &b);
    assert_int_equal(c, 0);
    assert_int_equal(b, 0);
    /* A bucket of malloc(0) objects (one bucket per size) at rate 1. */
    sampler_scale(3, 0, 1, &c, &b);
    assert_int_equal(c, 3);
    assert_int_equal(b, 0);
    /* Far above the rate the scale is exactly 1. */
    sampler_scale(1, 32 << 20, 524288, &c, &b);
    assert_int_equal(c, 1);
    assert_int_equal(b, 32 << 20);
}

/* A sample is scaled by the rate of the gap it ends (taken_rate): after a
 * change the gap in progress goes on at the old rate, the next ones are
 * drawn at the new; rate 1 takes everything at 1, and the first gap after
 * it is drawn afresh. */
static void test_rate_change(void **state)
{
    (void)state;
    sampler_set_seed(99);
    rt_thread_t t = {0};
    sampler_set_rate(1);
    assert_true(sampler_take(&t, 8));
    assert_int_equal(t.taken_rate, 1);
    sampler_set_rate(4096);
    int n = 0;
    while (!sampler_take(&t, 8))
        n++;
    assert_true(n > 0); /* a fresh gap, not the rate-1 leftover */
    assert_int_equal(t.taken_rate, 4096);
    sampler_set_rate(1 << 20);
    while (!sampler_take(&t, 8))
        ;
    assert_int_equal(t.taken_rate, 4096); /* ends the gap drawn at 4096 */
    while (!sampler_take(&t, 64))
        ;
    assert_int_equal(t.taken_rate, 1 << 20);
    sampler_set_rate(0);
    assert_false(sampler_take(&t, 1 << 30));
    sampler_set_rate(1);
    assert_true(sampler_take(&t, 8));
    assert_int_equal(t.taken_rate, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probability),
        cmocka_unit_test(test_rate_one_and_off),
        cmocka_unit_test(test_first_allocation),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_rate_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
