// links: src/runtime/tracebuf.c src/runtime/sitetab.c src/runtime/arena.c src/runtime/rt.c -lpthread
/* test_tracebuf.c — the execution trace's records (tracebuf.h) as threads
 * come and go: a processor's time never runs back when its record serves
 * a new thread or a record made for a thread seen only by the CPU
 * profile (a proxy, dated back to the sample), and a thread that wrote
 * its own first event (or ended) is never given a second goroutine by a
 * proxy made afterwards, nor, once it ended, until the CPU profile's
 * drain has handed over its samples. These broke go tool trace ("time
 * stamps out of order", a goroutine more than threads). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "runtime/tracebuf.h"

/* buckets.c's overflow frame, which the stack table names too. */
void cprof_stack_table_full(void);
void cprof_stack_table_full(void)
{
}

static void start_trace(void)
{
    assert_int_equal(tracebuf_open(1u << 20), 0);
    tracebuf_begin();
    __atomic_store_n(&trace_active, 1, __ATOMIC_SEQ_CST);
}

static void stop_trace(void)
{
    __atomic_store_n(&trace_active, 0, __ATOMIC_SEQ_CST);
    tracebuf_quiesce();
    tracebuf_proxies_free();
    for (tbuf_t *b = tracebuf_take_full(), *next; b; b = next) {
        next = b->next;
        tracebuf_give_back(b);
    }
}

/* A record whose P wrote until t=1000 and went back to the free list: a
 * proxy dated 500 gets another P; one dated 2000 may take it; an event
 * dated before 1000 in a fresh batch of that P comes after 1000. */
static void test_p_time_never_runs_back(void **state)
{
    (void)state;
    start_trace();
    trec_t *a = tracebuf_proxy_new(100);
    assert_non_null(a);
    assert_true(tracebuf_room(a, 64, 100));
    tracebuf_put_event(a->buf, EV_PROC_START, 100, (uint64_t[]){1}, 1);
    tracebuf_put_event(a->buf, EV_PROC_STOP, 1000, NULL, 0);
    tracebuf_flush(a);
    assert_int_equal(a->p_last, 1000);
    tracebuf_proxy_drop(a);

    trec_t *b = tracebuf_proxy_new(500);
    assert_non_null(b);
    assert_ptr_not_equal(b, a);
    assert_int_not_equal(b->p, a->p);
    trec_t *c = tracebuf_proxy_new(2000);
    assert_ptr_equal(c, a); /* free again, and its P ended before 2000 */

    /* Through the same record by another path (a new thread's record
     * taken whatever its P's last time): the batch begins at 1000. */
    assert_true(tracebuf_room(c, 64, 600));
    tracebuf_put_event(c->buf, EV_PROC_START, 600, (uint64_t[]){2}, 1);
    assert_true(c->buf->last > 1000);
    tracebuf_proxy_drop(b);
    tracebuf_proxy_drop(c);
    stop_trace();
}

/* A thread that writes its first event and then waits. */
static int go_write, written, go_exit;
static int32_t writer_tid;
static trec_t *writer_rec;

static void *writer(void *arg)
{
    (void)arg;
    writer_tid = (int32_t)gettid();
    while (!__atomic_load_n(&go_write, __ATOMIC_ACQUIRE))
        usleep(100);
    trec_t *r = tracebuf_enter();
    writer_rec = r;
    if (r)
        tracebuf_leave(r);
    __atomic_store_n(&written, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&go_exit, __ATOMIC_ACQUIRE))
        usleep(100);
    return NULL;
}

static void run_writer(pthread_t *t)
{
    go_write = written = go_exit = 0;
    writer_tid = 0;
    writer_rec = NULL;
    assert_int_equal(pthread_create(t, NULL, writer, NULL), 0);
}

static void let_write(void)
{
    __atomic_store_n(&go_write, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&written, __ATOMIC_ACQUIRE))
        usleep(100);
}

static void end_writer(pthread_t t)
{
    __atomic_store_n(&go_exit, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    tracebuf_release_self(false); /* the test thread's own, if any */
}

/* The thread wrote first: a proxy offered for it afterwards is withdrawn,
 * its events with it, and the thread's own record is named. */
static void test_own_record_wins(void **state)
{
    (void)state;
    start_trace();
    pthread_t t;
    run_writer(&t);
    let_write();
    assert_non_null(writer_rec);
    assert_ptr_equal(tracebuf_claimed(writer_tid), writer_rec);

    trec_t *p = tracebuf_proxy_new(1);
    assert_non_null(p);
    assert_true(tracebuf_room(p, 64, 1));
    tracebuf_put_event(p->buf, EV_PROC_START, 1, (uint64_t[]){(uint64_t)writer_tid}, 1);
    assert_ptr_equal(tracebuf_proxy_publish(p, writer_tid), writer_rec);
    assert_null(tracebuf_proxy_find(writer_tid));
    assert_null(tracebuf_take_full()); /* the withdrawn events never queue */
    end_writer(t);
    stop_trace();
}

/* The proxy came first: the thread adopts it, and the claim moves with
 * it, so a later sample finds that record, not a new goroutine. */
static void test_adopted_proxy_is_claimed(void **state)
{
    (void)state;
    start_trace();
    pthread_t t;
    run_writer(&t);
    while (!__atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE))
        usleep(100);
    assert_null(tracebuf_claimed(writer_tid));
    trec_t *p = tracebuf_proxy_new(1);
    assert_non_null(p);
    assert_ptr_equal(tracebuf_proxy_publish(p, writer_tid), p);
    assert_ptr_equal(tracebuf_proxy_find(writer_tid), p);
    let_write();
    assert_ptr_equal(writer_rec, p);
    assert_null(tracebuf_proxy_find(writer_tid));
    assert_ptr_equal(tracebuf_claimed(writer_tid), p);
    end_writer(t);
    stop_trace();
}

/* A thread that writes its first event and ends, as trace.c's exit hook
 * does: releasing its record. */
static void *ender(void *arg)
{
    (void)arg;
    writer_tid = (int32_t)gettid();
    trec_t *r = tracebuf_enter();
    writer_rec = r;
    if (r)
        tracebuf_leave(r);
    tracebuf_release_self(false);
    return NULL;
}

/* A thread ended while the CPU profile runs: until the drain has passed
 * its end, its record serves no other thread and still names it, so a
 * sample it took before its end finds it (trace_compute.sh's thread got
 * a second P from such a sample, drained after its record went to the
 * thread woken next). */
static void test_ended_waits_for_drain(void **state)
{
    (void)state;
    start_trace();
    tracebuf_drained(rt_now_ns());
    pthread_t t;
    writer_tid = 0;
    writer_rec = NULL;
    assert_int_equal(pthread_create(&t, NULL, ender, NULL), 0);
    pthread_join(t, NULL);
    assert_non_null(writer_rec);
    trec_t *q = tracebuf_proxy_new(INT64_MAX - 1);
    assert_non_null(q);
    assert_ptr_not_equal(q, writer_rec);
    assert_ptr_equal(tracebuf_claimed(writer_tid), writer_rec);
    tracebuf_drained(rt_now_ns());
    trec_t *q2 = tracebuf_proxy_new(INT64_MAX - 1);
    assert_ptr_equal(q2, writer_rec); /* free again after the drain */
    tracebuf_proxy_drop(q);
    tracebuf_proxy_drop(q2);
    tracebuf_drained(INT64_MAX);
    stop_trace();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p_time_never_runs_back),
        cmocka_unit_test(test_own_record_wins),
        cmocka_unit_test(test_adopted_proxy_is_claimed),
        cmocka_unit_test(test_ended_waits_for_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
