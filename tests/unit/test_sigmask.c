// links: src/runtime/sigmask.c src/runtime/cpuring.c src/runtime/unwfds.c src/runtime/threadhook.c src/runtime/stackbounds.c src/runtime/arena.c src/runtime/rt.c
/* test_sigmask.c — SIGPROF kept deliverable under the program's masks:
 * before sigmask_enable the calls pass through; after it the kernel's mask
 * never blocks SIGPROF while the program reads back what it set (through
 * pthread_sigmask and sigprocmask, SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK),
 * errors stay the program's, a thread created under an all-blocking mask
 * starts with SIGPROF deliverable and believes it blocked, a fork child
 * (which may exec) gets the program's mask back for real, and a SIGPROF
 * of the program's own sent while it "blocks" SIGPROF stays pending
 * (sigpending) until unblocked, then reaches its handler once — across
 * queries and other mask calls that keep it blocked, without blocking
 * SIGPROF for real (the thread stays in the CPU profile). cprof's own
 * calls (guard set, as libunwind's around its searches) change none of
 * what the program set. */
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
#include "runtime/rt.h"
#include "runtime/sigmask.h"
#include "runtime/trace.h"

/* What cpuring's handler reads of the execution trace (trace.c,
 * tracebuf.c, not linked here): no trace runs. */
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

static bool pending(int sig)
{
    sigset_t pend;
    assert_int_equal(sigpending(&pend), 0);
    return sigismember(&pend, sig) == 1;
}

/* A SIGPROF of the program's own, sent to this thread. */
static void send_prof(void)
{
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF);
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
    handled = 0;
    sigset_t prof, usr1, cur;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, NULL), 0);
    assert_false(kernel_blocks(SIGPROF));
    send_prof();
    send_prof(); /* merged into the first, as the kernel does */
    assert_int_equal(handled, 0);
    assert_true(pending(SIGPROF));
    assert_false(kernel_blocks(SIGPROF)); /* the CPU profile still sees it */
    /* Calls that keep SIGPROF blocked keep the signal pending. */
    assert_true(reads_blocked(SIGPROF));
    assert_int_equal(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
    assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
    assert_int_equal(sigprocmask(SIG_SETMASK, &cur, NULL), 0);
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    assert_int_equal(handled, 0);
    assert_true(pending(SIGPROF));
    assert_false(kernel_blocks(SIGPROF));
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &prof, NULL), 0);
    assert_int_equal(handled, 1);
    assert_false(pending(SIGPROF));
    /* Not blocked: straight to the program's handler. */
    raise(SIGPROF);
    assert_int_equal(handled, 2);
    /* Unblocked by SIG_SETMASK too. */
    assert_int_equal(sigprocmask(SIG_SETMASK, &prof, &cur), 0);
    send_prof();
    assert_int_equal(handled, 2);
    assert_int_equal(sigprocmask(SIG_SETMASK, &cur, NULL), 0);
    assert_int_equal(handled, 3);
}

/* As libunwind around dwarf_find_proc_info: cprof's own call blocks every
 * signal and restores the mask. */
static void cprof_blocks_all(void)
{
    uint32_t g = rt_guard_enter();
    sigset_t all, old;
    sigfillset(&all);
    assert_int_equal(sigprocmask(SIG_SETMASK, &all, &old), 0);
    assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
    rt_guard_leave(g);
}

static void *reads_prof(void *arg)
{
    *(int *)arg = reads_blocked(SIGPROF);
    return NULL;
}

static void test_guarded(void **state)
{
    (void)state;
    sigmask_enable();
    handled = 0;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &prof, NULL), 0);
    /* A thread created next inherits the program's block. */
    cprof_blocks_all();
    int got = -1;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, reads_prof, &got), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(got, 1);
    assert_false(kernel_blocks(SIGPROF));
    assert_true(reads_blocked(SIGPROF));
    /* The program's SIGPROF is held, not handled. */
    cprof_blocks_all();
    send_prof();
    assert_int_equal(handled, 0);
    assert_true(pending(SIGPROF));
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &prof, NULL), 0);
    assert_int_equal(handled, 1);
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
        cmocka_unit_test(test_guarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
