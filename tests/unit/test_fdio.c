// links: src/base/fdio.c
/* test_fdio.c — bounded writes: a pipe whose reader stops is given up at
 * the deadline, one that keeps reading gets everything; a blocking
 * regular file is written as write(2) would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpname.h"
#include "base/fdio.h"

#define BIG (1u << 20) /* far over a pipe's 64 KiB */

/* A pipe whose write end is non-blocking, as outfile.h opens a FIFO. */
static void nonblocking_pipe(int p[2])
{
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    assert_int_equal(fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK), 0);
}

static void test_stalled_reader_times_out(void **state)
{
    (void)state;
    int p[2];
    nonblocking_pipe(p);
    char *buf = calloc(1, BIG);
    assert_non_null(buf);
    int64_t t0 = fdio_now_ms();
    assert_int_equal(fdio_write_all(p[1], buf, BIG, 200), -ETIMEDOUT);
    int64_t took = fdio_now_ms() - t0;
    assert_true(took >= 200);    /* waited for the reader */
    assert_true(took < 20000);   /* and gave up (generous on a loaded machine) */
    /* write_some: nothing fits, so the deadline itself is the answer */
    assert_int_equal(fdio_write_some(p[1], buf, 1, fdio_now_ms() + 50), -ETIMEDOUT);
    free(buf);
    close(p[0]);
    close(p[1]);
}

static void *drain(void *arg)
{
    int fd = *(int *)arg;
    size_t total = 0;
    char b[4096];
    ssize_t r;
    while ((r = read(fd, b, sizeof(b))) > 0)
        total += (size_t)r;
    return (void *)total;
}

static void test_reading_reader_gets_all(void **state)
{
    (void)state;
    int p[2];
    nonblocking_pipe(p);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain, &p[0]), 0);
    char *buf = calloc(1, BIG);
    assert_non_null(buf);
    assert_int_equal(fdio_write_all(p[1], buf, BIG, 60000), 0);
    close(p[1]);
    void *total;
    pthread_join(th, &total);
    assert_int_equal((size_t)total, BIG);
    free(buf);
    close(p[0]);
}

static void test_reader_gone_is_epipe(void **state)
{
    (void)state;
    int p[2];
    nonblocking_pipe(p);
    close(p[0]);
    sigset_t pipe, old;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old); /* as outfile_write does */
    assert_int_equal(fdio_write_all(p[1], "x", 1, 1000), -EPIPE);
    const struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe, NULL, &zero) == SIGPIPE)
        ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
}

static void test_regular_file(void **state)
{
    (void)state;
    char path[256];
    tmpname(path, sizeof(path), "test_fdio");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(fdio_write_all(fd, "hello", 5, 1000), 0);
    assert_int_equal(lseek(fd, 0, SEEK_END), 5);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stalled_reader_times_out),
        cmocka_unit_test(test_reading_reader_gets_all),
        cmocka_unit_test(test_reader_gone_is_epipe),
        cmocka_unit_test(test_regular_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
