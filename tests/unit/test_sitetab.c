// links: src/runtime/sitetab.c src/runtime/arena.c src/runtime/rt.c
/* test_sitetab.c — the stack tables of the threadcreate, mutex and block
 * profiles: one entry per distinct stack, iteration over all of them, the
 * overflow entry when full, reset, and inserts from many threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>

#include "runtime/sitetab.h"

/* stacks.c's overflow frame, which the tables name too. */
void cprof_stack_table_full(void)
{
}

static size_t count_entries(sitetab_t *t)
{
    size_t n = 0;
    for (site_t *e = sitetab_first(t); e; e = sitetab_next(e))
        n++;
    return n;
}

static void test_intern(void **state)
{
    (void)state;
    static sitetab_t t = SITETAB_INIT(100);
    uintptr_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
    site_t *ea = sitetab_intern(&t, a, 3), *eb = sitetab_intern(&t, b, 3);
    assert_non_null(ea);
    assert_non_null(eb);
    assert_ptr_not_equal(ea, eb);
    assert_ptr_equal(sitetab_intern(&t, a, 3), ea);
    assert_ptr_not_equal(sitetab_intern(&t, a, 2), ea); /* a prefix is another stack */
    assert_int_equal(ea->depth, 3);
    assert_memory_equal(ea->pcs, a, sizeof(a));
    assert_int_equal(count_entries(&t), 3);
    assert_ptr_not_equal(sitetab_intern(&t, a, 0), NULL); /* empty stacks are stacks */
    ea->v[0] = 5;
    ea->v[1] = 7;
    sitetab_reset(&t);
    assert_int_equal(ea->v[0], 0);
    assert_int_equal(ea->v[1], 0);
}

static void test_full(void **state)
{
    (void)state;
    static sitetab_t t = SITETAB_INIT(4);
    uintptr_t pc[1];
    site_t *last = NULL;
    for (uintptr_t i = 1; i <= 10; i++) {
        pc[0] = i;
        last = sitetab_intern(&t, pc, 1);
        assert_non_null(last);
    }
    /* four real entries, then the one overflow entry for all the rest */
    assert_int_equal(count_entries(&t), 5);
    assert_int_equal(last->depth, 1);
    assert_int_equal(last->pcs[0], (uintptr_t)cprof_stack_table_full + 1);
    pc[0] = 9;
    assert_ptr_equal(sitetab_intern(&t, pc, 1), last);
    pc[0] = 2;
    assert_ptr_not_equal(sitetab_intern(&t, pc, 1), last); /* old entries stay found */
}

/* A stack under two label sets is two entries (mutex and block waits
 * keep the waiter's labels). */
static void test_labels(void **state)
{
    (void)state;
    static sitetab_t t = SITETAB_INIT(16);
    uintptr_t a[2] = {1, 2};
    site_t *plain = sitetab_intern(&t, a, 2), *l1 = sitetab_intern_labeled(&t, a, 2, 1);
    assert_ptr_not_equal(plain, l1);
    assert_int_equal(plain->labels, 0);
    assert_int_equal(l1->labels, 1);
    assert_ptr_equal(sitetab_intern_labeled(&t, a, 2, 1), l1);
    assert_ptr_not_equal(sitetab_intern_labeled(&t, a, 2, 2), l1);
    assert_int_equal(count_entries(&t), 3);
}

static sitetab_t shared = SITETAB_INIT(1u << 16);

static void *inserter(void *arg)
{
    uintptr_t base = (uintptr_t)arg;
    for (uintptr_t i = 0; i < 2000; i++) {
        uintptr_t pcs[2] = {i % 500, base};
        site_t *e = sitetab_intern(&shared, pcs, 2);
        __atomic_add_fetch(&e->v[0], 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t t[8];
    for (uintptr_t i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, inserter, (void *)(i % 2));
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    /* 2 bases x 500 stacks, each hit 4 threads x 4 times */
    assert_int_equal(count_entries(&shared), 1000);
    for (site_t *e = sitetab_first(&shared); e; e = sitetab_next(e))
        assert_int_equal(e->v[0], 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
