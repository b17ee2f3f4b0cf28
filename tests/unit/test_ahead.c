// links: src/tool/fetch/ahead.c -lpthread
/* test_ahead.c — the read-ahead queue hands results out in job order, with
 * or without its thread; the worker never gets more than depth results
 * ahead of the taker; ending early drops exactly the results done and not
 * taken, and joins a worker waiting for room. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "tool/fetch/ahead.h"

typedef struct {
    atomic_size_t taken;   /* results the test took or is taking: never
                            * fewer than the queue counts */
    atomic_size_t ran;     /* jobs fn ran */
    atomic_size_t too_far; /* jobs started with depth results waiting */
    size_t depth;
} job_ctx_t;

typedef struct {
    size_t i;
    size_t *heap; /* owned by the slot: dropped or freed by the taker */
} res_t;

static void job(void *ctx, size_t i, void *slot)
{
    job_ctx_t *c = ctx;
    /* job i starts only when fewer than depth results wait: i < taken + depth */
    if (i >= atomic_load(&c->taken) + c->depth)
        atomic_fetch_add(&c->too_far, 1);
    res_t *r = slot;
    r->i = i;
    r->heap = malloc(sizeof(*r->heap));
    *r->heap = i * 7;
    atomic_fetch_add(&c->ran, 1);
}

static atomic_size_t dropped;
static void drop(void *slot)
{
    free(((res_t *)slot)->heap);
    atomic_fetch_add(&dropped, 1);
}

static void take_all(bool threaded, size_t depth)
{
    job_ctx_t c = {.depth = depth};
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 200, sizeof(res_t), depth, threaded, job, &c), 0);
    for (size_t i = 0; i < 200; i++) {
        res_t r;
        atomic_fetch_add(&c.taken, 1);
        assert_int_equal(ahead_take(a, &r), 0);
        assert_int_equal(r.i, i);
        assert_int_equal(*r.heap, i * 7);
        free(r.heap);
    }
    res_t r;
    assert_int_equal(ahead_take(a, &r), -ENOENT);
    atomic_store(&dropped, 0);
    ahead_end(a, drop);
    assert_int_equal(atomic_load(&dropped), 0);
    assert_int_equal(atomic_load(&c.ran), 200);
    assert_int_equal(atomic_load(&c.too_far), 0);
}

static void test_in_order_threaded(void **state)
{
    (void)state;
    take_all(true, 1);
    take_all(true, 2);
    take_all(true, 5);
}

static void test_in_order_inline(void **state)
{
    (void)state;
    take_all(false, 2);
}

/* The worker fills the ring and waits for room; ending then stops it (it
 * runs no further job) and drops the results it left. */
static void test_end_early(void **state)
{
    (void)state;
    job_ctx_t c = {.depth = 2};
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 100, sizeof(res_t), 2, true, job, &c), 0);
    res_t r;
    atomic_fetch_add(&c.taken, 1);
    assert_int_equal(ahead_take(a, &r), 0);
    free(r.heap);
    /* wait for the state: 1 taken + 2 waiting = 3 jobs run, the worker blocked */
    while (atomic_load(&c.ran) < 3)
        sched_yield();
    atomic_store(&dropped, 0);
    ahead_end(a, drop);
    assert_int_equal(atomic_load(&c.ran), 3);
    assert_int_equal(atomic_load(&dropped), 2);
    assert_int_equal(atomic_load(&c.too_far), 0);
}

static void test_empty(void **state)
{
    (void)state;
    job_ctx_t c = {.depth = 2};
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 0, sizeof(res_t), 2, true, job, &c), 0);
    res_t r;
    assert_int_equal(ahead_take(a, &r), -ENOENT);
    ahead_end(a, drop);
    ahead_end(NULL, drop);
    assert_int_equal(atomic_load(&c.ran), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_threaded),
        cmocka_unit_test(test_in_order_inline),
        cmocka_unit_test(test_end_early),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
