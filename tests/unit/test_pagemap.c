// links: src/runtime/pagemap.c
/* test_pagemap.c — residency read from /proc/self/pagemap: on a mapping
 * of 600 pages (past one window of 512) with known pages written, whole
 * pages and byte shares, in address order and back; the untouched tail
 * (across windows); and without pagemap, nothing resident. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/mman.h>

#include "runtime/pagemap.h"

#define N 600
#define PG PAGEMAP_PAGE

static char *map_with(const int *touched, int n)
{
    char *m = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    /* no huge page: one written byte must make one page resident */
    madvise(m, N * PG, MADV_NOHUGEPAGE);
    for (int i = 0; i < n; i++)
        ((volatile char *)m)[touched[i] * PG + 100] = 1;
    return m;
}

static void test_residency(void **state)
{
    (void)state;
    static const int touched[] = {0, 3, 511, 512, 599};
    char *m = map_with(touched, 5);
    pagemap_t pm;
    assert_int_equal(pagemap_open(&pm), 0);
    uint64_t res, swap;
    pagemap_measure(&pm, (uintptr_t)m, (uintptr_t)m + N * PG, &res, &swap);
    assert_int_equal(res, 5 * PG);
    assert_int_equal(swap, 0);
    /* byte shares: half of page 3 and all of 4 (not written) */
    assert_int_equal(pagemap_resident_bytes(&pm, (uintptr_t)m + 3 * PG + 2048,
                                            (uintptr_t)m + 5 * PG),
                     2048);
    /* across the window's end (pages 511 and 512), then back before it */
    assert_int_equal(pagemap_resident_bytes(&pm, (uintptr_t)m + 511 * PG + 4000,
                                            (uintptr_t)m + 512 * PG + 10),
                     106);
    assert_int_equal(pagemap_resident_bytes(&pm, (uintptr_t)m, (uintptr_t)m + 16), 16);
    assert_int_equal(pagemap_resident_bytes(&pm, (uintptr_t)m + PG, (uintptr_t)m + 3 * PG), 0);
    assert_int_equal(pagemap_entry(&pm, (uintptr_t)m + 599 * PG) >> 63, 1);
    assert_int_equal(pagemap_entry(&pm, (uintptr_t)m + 598 * PG) >> 63, 0);
    pagemap_close(&pm);
    munmap(m, N * PG);
}

/* The run of untouched pages at a range's end, read backwards across a
 * window's edge: 599 - 3 = 596 pages after page 3, written last. */
static void test_absent_tail(void **state)
{
    (void)state;
    static const int touched[] = {0, 3};
    char *m = map_with(touched, 2);
    pagemap_t pm;
    assert_int_equal(pagemap_open(&pm), 0);
    uint64_t swap = 1;
    assert_int_equal(pagemap_absent_tail(&pm, (uintptr_t)m, (uintptr_t)m + N * PG, &swap), 596 * PG);
    assert_int_equal(swap, 0);
    /* bounded by lo; nothing when the last page is resident */
    assert_int_equal(pagemap_absent_tail(&pm, (uintptr_t)m + 100 * PG, (uintptr_t)m + N * PG, &swap),
                     500 * PG);
    assert_int_equal(pagemap_absent_tail(&pm, (uintptr_t)m, (uintptr_t)m + 4 * PG, &swap), 0);
    ((volatile char *)m)[(N - 1) * PG] = 1;
    assert_int_equal(pagemap_absent_tail(&pm, (uintptr_t)m, (uintptr_t)m + N * PG, &swap), 0);
    pagemap_close(&pm);
    munmap(m, N * PG);
}

static void test_without(void **state)
{
    (void)state;
    static const int touched[] = {0};
    char *m = map_with(touched, 1);
    pagemap_t pm = {.fd = -1};
    uint64_t res, swap;
    pagemap_measure(&pm, (uintptr_t)m, (uintptr_t)m + PG, &res, &swap);
    assert_int_equal(res, 0);
    assert_int_equal(pagemap_resident_bytes(&pm, (uintptr_t)m, (uintptr_t)m + 8), 0);
    munmap(m, N * PG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_residency),
        cmocka_unit_test(test_absent_tail),
        cmocka_unit_test(test_without),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
