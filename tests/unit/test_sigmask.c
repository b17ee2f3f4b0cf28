// links: src/runtime/sigmask.c src/runtime/cpuring.c src/runtime/unwfds.c src/runtime/threadhook.c src/runtime/stackbounds.c src/runtime/arena.c src/runtime/rt.c
/* test_sigmask.c — SIGPROF kept deliverable under the program's masks:
 * before sigmask_enable the calls pass through; after it the kernel's mask
 * never blocks SIGPROF while the program reads back what it set (through
 * pthread_sigmask and sigprocmask, SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK),
 * errors stay the program's, a thread created under an all-blocking mask
 * starts with SIGPROF deliverable and believes it blocked, a fork child
 * (which may exec) gets the program's mask back for real, and a SIGPROF
 * of the program's own sent while it "blocks" SIGPROF stays pending
 * (sigpending) until unblocked, then reaches its handler once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cpuring.h"
#include "runtime/sigmask.h"
#include "runtime/trace.h"

/* What cpuring's handler reads of the execution trace (trace.c, not
 * linked here): no trace runs. */
int trace_active;

uint64_t trace_thread_sigsafe(void)
{
    return 0;
}

/* The kernel's own view of the calling thread's mask. */
static uint64_t kernel_mask(void)
{
    uint64_t m = 0;
    assert_int_equal(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, sizeof(m)), 0);
    return m;
}

static bool kernel_blocks(int sig)
{
    return (kernel_mask() >> (sig - 1)) & 1;
}

static bool reads_blocked(int sig)
{
    sigset_t cur;
    assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
    return sigismember(&cur, sig) == 1;
}

static void test_before_enable(void **state)
{
    (void)state;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, NULL), 0);
    assert_true(kernel_blocks(SIGPROF)); /* as asked: no profile ever ran */
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &prof, NULL), 0);
    assert_false(kernel_blocks(SIGPROF));
}

static void test_masks(void **state)
{
    (void)state;
    sigmask_enable();
    sigset_t all, old, prof;
    sigfillset(&all);
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    /* SIG_SETMASK with everything: SIGINT blocked for real, SIGPROF not,
     * yet read back as blocked. */
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
    assert_int_equal(sigismember(&old, SIGPROF), 0);
    assert_true(kernel_blocks(SIGINT));
    assert_false(kernel_blocks(SIGPROF));
    assert_true(reads_blocked(SIGPROF));
    /* The old mask a later call returns says SIGPROF was blocked. */
    assert_int_equal(sigprocmask(SIG_UNBLOCK, &prof, &old), 0);
    assert_int_equal(sigismember(&old, SIGPROF), 1);
    assert_false(reads_blocked(SIGPROF));
    assert_true(reads_blocked(SIGINT));
    /* SIG_BLOCK of SIGPROF alone. */
    assert_int_equal(sigprocmask(SIG_BLOCK, &prof, NULL), 0);
    assert_false(kernel_blocks(SIGPROF));
    assert_true(reads_blocked(SIGPROF));
    /* Errors are the program's. */
    assert_int_equal(pthread_sigmask(12345, &prof, NULL), EINVAL);
    errno = 0;
    assert_int_equal(sigprocmask(12345, &prof, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_true(reads_blocked(SIGPROF));
    sigemptyset(&all);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &all, NULL), 0);
    assert_int_equal(kernel_mask(), 0);
    assert_false(reads_blocked(SIGPROF));
}

static void *child(void *arg)
{
    int *out = arg;
    out[0] = kernel_blocks(SIGPROF);
    out[1] = reads_blocked(SIGPROF);
    out[2] = kernel_blocks(SIGTERM);
    return NULL;
}

static void test_thread(void **state)
{
    (void)state;
    sigmask_enable();
    sigset_t all, old;
    sigfillset(&all);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
    int got[3] = {-1, -1, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, child, got), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(got[0], 0); /* deliverable */
    assert_int_equal(got[1], 1); /* but blocked as the thread reads it */
    assert_int_equal(got[2], 1); /* the rest inherited */
}

static void test_fork(void **state)
{
    (void)state;
    sigmask_enable();
    sigset_t all, old;
    sigfillset(&all);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
    assert_false(kernel_blocks(SIGPROF));
    pid_t pid = fork();
    if (pid == 0)
        _exit(kernel_blocks(SIGPROF) && reads_blocked(SIGPROF) ? 0 : 1);
    assert_true(pid > 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_false(kernel_blocks(SIGPROF)); /* the parent's stays deliverable */
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

static volatile sig_atomic_t handled;

static void program_handler(int sig)
{
    (void)sig;
    handled++;
}

static void test_pending(void **state)
{
    (void)state;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = program_handler;
    assert_int_equal(sigaction(SIGPROF, &sa, NULL), 0);
    assert_int_equal(cpuring_init(64), 0); /* in front of the program's */
    sigmask_enable();
    sigset_t prof, pend;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, NULL), 0);
    assert_false(kernel_blocks(SIGPROF));
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF);
    assert_int_equal(handled, 0);
    assert_int_equal(sigpending(&pend), 0);
    assert_int_equal(sigismember(&pend, SIGPROF), 1);
    assert_true(kernel_blocks(SIGPROF)); /* held back for the program */
    assert_true(reads_blocked(SIGPROF));
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &prof, NULL), 0);
    assert_int_equal(handled, 1);
    assert_int_equal(sigpending(&pend), 0);
    assert_int_equal(sigismember(&pend, SIGPROF), 0);
    /* Not blocked: straight to the program's handler. */
    raise(SIGPROF);
    assert_int_equal(handled, 2);
}

int main(void)
{
    assert_int_equal(sigmask_init(), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_enable),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_thread),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
