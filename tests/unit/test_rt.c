// links: src/runtime/rt.c
/* test_rt.c — rate 1's hot lock, add and compare-and-swap (rt.h): with one
 * thread no atomic instruction (the lock's word untouched, only the count
 * a handler reads), every update one instruction a signal handler on the
 * thread cannot split; once a second thread has been created, a real lock
 * and atomic updates, exact under two racing threads. The tests run in
 * order: the first ones before this process creates any thread. Also
 * rt_iterate_phdr: its callbacks run with signals blocked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/rt.h"

static void test_one_thread_lock(void **state)
{
    (void)state;
    assert_true(rt_one_thread());
    rt_lock_t l = RT_LOCK_INIT;
    uint32_t locks = rt_self.locks;
    bool locked = rt_lock_hot(&l);
    assert_false(locked);
    assert_int_equal(l.state, 0);                /* no atomic on the word */
    assert_int_equal(rt_self.locks, locks + 1); /* a handler sees it held */
    rt_unlock_hot(&l, locked);
    assert_int_equal(rt_self.locks, locks);
    assert_int_equal(l.state, 0);
}

static void test_one_thread_updates(void **state)
{
    (void)state;
    uint64_t c = 5;
    rt_add_hot(&c, 7);
    assert_int_equal(c, 12);
    uint64_t expected = 11;
    assert_false(rt_cas_hot(&c, &expected, 20));
    assert_int_equal(expected, 12); /* the value found */
    assert_int_equal(c, 12);
    assert_true(rt_cas_hot(&c, &expected, 20));
    assert_int_equal(c, 20);
}

/* A 20 us timer's handler adds to the counter the loop adds to: an
 * update split into a load and a store loses the handler's adds that land
 * between them. Exact counts, not a duration: a run with few signals
 * proves less, never fails wrongly. */
static uint64_t shared_count, handled;

static void on_timer(int sig)
{
    (void)sig;
    rt_add_hot(&shared_count, 1000);
    uint64_t cur = shared_count;
    while (!rt_cas_hot(&shared_count, &cur, cur + 1000000))
        ;
    handled++;
}

static void test_one_thread_signals(void **state)
{
    (void)state;
    assert_true(rt_one_thread());
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_timer;
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    timer_t timer;
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    assert_int_equal(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
    struct itimerspec it = {{0, 20000}, {0, 20000}};
    assert_int_equal(timer_settime(timer, 0, &it, NULL), 0);
    enum { LOOPS = 50000000 };
    for (uint64_t i = 0; i < LOOPS; i++) {
        rt_add_hot(&shared_count, 1);
        if (i % 3 == 0) {
            uint64_t cur = shared_count;
            while (!rt_cas_hot(&shared_count, &cur, cur + 1))
                ;
        }
    }
    assert_int_equal(timer_delete(timer), 0);
    assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
    print_message("%lu signals\n", (unsigned long)handled);
    uint64_t want = LOOPS + (LOOPS + 2) / 3 + handled * 1001000;
    assert_int_equal(shared_count, want);
}

enum { RACE = 2000000 };
static rt_lock_t race_lock = RT_LOCK_INIT;
static uint64_t guarded, added, swapped;

static void *racer(void *arg)
{
    (void)arg;
    for (int i = 0; i < RACE; i++) {
        bool locked = rt_lock_hot(&race_lock);
        guarded++; /* a plain add: only the lock keeps it exact */
        rt_unlock_hot(&race_lock, locked);
        rt_add_hot(&added, 1);
        uint64_t cur = __atomic_load_n(&swapped, __ATOMIC_RELAXED);
        while (!rt_cas_hot(&swapped, &cur, cur + 1))
            ;
    }
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

/* Run after the tests above: the process has threads from here on. */
static void test_threads(void **state)
{
    (void)state;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, nothing, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    /* Threads were created: a real lock, even with one left. */
    assert_false(rt_one_thread());
    rt_lock_t l = RT_LOCK_INIT;
    bool locked = rt_lock_hot(&l);
    assert_true(locked);
    assert_int_equal(l.state, 1);
    rt_unlock_hot(&l, locked);
    assert_int_equal(l.state, 0);

    assert_int_equal(pthread_create(&th, NULL, racer, NULL), 0);
    racer(NULL);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(guarded, 2 * RACE);
    assert_int_equal(added, 2 * RACE);
    assert_int_equal(swapped, 2 * RACE);
}

/* Each callback runs with SIGPROF and the signals of rt_loader_block
 * blocked: a CPU sample there could otherwise catch the thread taking or
 * giving up the loader's lock, and its handler wait for it forever
 * (rt.h). Other signals stay deliverable: a leak scan's stop would count
 * the thread missed. */
static int masked(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    int *calls = arg;
    sigset_t now;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, _NSIG / 8);
    assert_int_equal(sigismember(&now, SIGPROF), 1);
    assert_int_equal(sigismember(&now, SIGUSR2), 1);
    assert_int_equal(sigismember(&now, SIGUSR1), 0);
    ++*calls;
    return 0;
}

static void test_iterate_phdr(void **state)
{
    (void)state;
    int calls = 0;
    sigset_t before, after;
    sigprocmask(SIG_BLOCK, NULL, &before);
    assert_int_equal(sigismember(&before, SIGPROF), 0);
    rt_loader_block(SIGUSR2); /* as threaddump.c adds its signal */
    rt_iterate_phdr(masked, &calls);
    assert_true(calls > 1); /* the program, libc, the loader at least */
    sigprocmask(SIG_BLOCK, NULL, &after);
    assert_int_equal(sigismember(&after, SIGPROF), 0); /* restored */
    assert_int_equal(sigismember(&after, SIGUSR2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_lock), /* these three before any thread */
        cmocka_unit_test(test_one_thread_updates),
        cmocka_unit_test(test_one_thread_signals),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_iterate_phdr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
