// links: src/tool/fetch/ahead.c -lpthread
/* test_ahead.c — the read-ahead queue hands results out in job order, with
 * or without threads, with or without the taker's help; the workers never
 * get more than depth results ahead of the taker; several workers, or the
 * taker, run jobs at once; ending early drops exactly the results done and
 * not taken, and joins a worker waiting for room. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

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

static void take_all(size_t threads, bool help, size_t depth)
{
    job_ctx_t c = {.depth = depth};
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 200, sizeof(res_t), depth, threads, help, job, &c), 0);
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
    take_all(1, false, 1);
    take_all(1, false, 2);
    take_all(1, false, 5);
    take_all(3, false, 2);
    take_all(3, false, 5);
}

static void test_in_order_helped(void **state)
{
    (void)state;
    take_all(1, true, 1);
    take_all(1, true, 3);
    take_all(3, true, 5);
    take_all(0, true, 2);
}

static void test_in_order_inline(void **state)
{
    (void)state;
    take_all(0, false, 2);
}

/* Jobs 0 and 1 where job 0 waits until job 1 is done: they complete only
 * when something runs job 1 while job 0 runs. A failure would hang: job 0
 * gives up after a minute and says so. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool one_done;
    atomic_bool started0, gave_up;
    pthread_t ran1; /* the thread that ran job 1 */
} pair_ctx_t;

static void pair_job(void *ctx, size_t i, void *slot)
{
    pair_ctx_t *c = ctx;
    *(size_t *)slot = i;
    pthread_mutex_lock(&c->mu);
    if (i == 1) {
        c->ran1 = pthread_self();
        c->one_done = true;
        pthread_cond_broadcast(&c->cv);
    } else {
        atomic_store(&c->started0, true);
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 60;
        while (!c->one_done)
            if (pthread_cond_timedwait(&c->cv, &c->mu, &t) != 0) {
                atomic_store(&c->gave_up, true);
                break;
            }
    }
    pthread_mutex_unlock(&c->mu);
}

static pair_ctx_t *pair_new(void)
{
    pair_ctx_t *c = calloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    return c;
}

static void pair_take(ahead_t *a, pair_ctx_t *c)
{
    for (size_t i = 0; i < 2; i++) {
        size_t r;
        assert_int_equal(ahead_take(a, &r), 0);
        assert_int_equal(r, i);
    }
    ahead_end(a, NULL);
    assert_false(atomic_load(&c->gave_up));
}

/* Two workers run two jobs at once. */
static void test_workers_at_once(void **state)
{
    (void)state;
    pair_ctx_t *c = pair_new();
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 2, sizeof(size_t), 2, 2, false, pair_job, c), 0);
    pair_take(a, c);
    assert_false(pthread_equal(c->ran1, pthread_self()));
    free(c);
}

/* While the worker runs job 0, the taker waiting for it runs job 1. */
static void test_taker_helps(void **state)
{
    (void)state;
    pair_ctx_t *c = pair_new();
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 2, sizeof(size_t), 2, 1, true, pair_job, c), 0);
    while (!atomic_load(&c->started0)) /* the worker has job 0 */
        sched_yield();
    pair_take(a, c);
    assert_true(pthread_equal(c->ran1, pthread_self()));
    free(c);
}

/* The worker fills the ring and waits for room; ending then stops it (it
 * runs no further job) and drops the results it left. */
static void test_end_early(void **state)
{
    (void)state;
    job_ctx_t c = {.depth = 2};
    ahead_t *a;
    assert_int_equal(ahead_start(&a, 100, sizeof(res_t), 2, 1, false, job, &c), 0);
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
    assert_int_equal(ahead_start(&a, 0, sizeof(res_t), 2, 1, true, job, &c), 0);
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
        cmocka_unit_test(test_in_order_helped),
        cmocka_unit_test(test_in_order_inline),
        cmocka_unit_test(test_workers_at_once),
        cmocka_unit_test(test_taker_helps),
        cmocka_unit_test(test_end_early),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
