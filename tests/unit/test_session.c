// links: src/runtime/session.c src/runtime/config.c src/runtime/rt.c src/runtime/outfile.c src/base/duration.c
/* test_session.c — one-at-a-time sessions (session.h), with a module that
 * writes one line: -EBUSY while one runs, -ENOTCONN when none does, the
 * outcome of a session by id after it ended, a file session's temporary
 * file renamed at the end (removed with discard or after an error), a
 * failing start, and the fork child forgetting a session. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpname.h"
#include "runtime/session.h"

static int start_rc, stop_rc, starts, stops;

static int mod_start(session_t *s)
{
    (void)s;
    starts++;
    return start_rc;
}

static int mod_stop(session_t *s, bool discard)
{
    stops++;
    if (!discard && stop_rc == 0 && write(s->fd, "recorded\n", 9) != 9)
        return -EIO;
    return stop_rc;
}

static session_t fresh(void)
{
    start_rc = stop_rc = starts = stops = 0;
    return (session_t){.what = "test", .env = "CPROF_TEST", .start = mod_start,
                       .stop = mod_stop};
}

static char dir[256];

static bool exists(const char *name)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static int files(void)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        pclose(f);
    }
    return n;
}

static void test_fd_sessions(void **state)
{
    (void)state;
    session_t s = fresh();
    assert_int_equal(session_stop(&s, 0, false), -ENOTCONN);
    int fd = open("/dev/null", O_WRONLY);
    int64_t id = session_start_fd(&s, fd);
    assert_true(id > 0);
    assert_int_equal(session_start_fd(&s, fd), -EBUSY);
    assert_int_equal(session_start_file(&s, "x"), -EBUSY);
    assert_int_equal(session_stop(&s, id + 1, false), -ENOTCONN); /* not that one */
    assert_int_equal(session_stop(&s, id, false), 0);
    assert_int_equal(stops, 1);
    assert_int_equal(session_stop(&s, id, false), 0); /* the outcome, once more */
    assert_int_equal(stops, 1);
    int64_t id2 = session_start_fd(&s, fd);
    assert_true(id2 > id);
    stop_rc = -ENOSPC;
    assert_int_equal(session_stop(&s, 0, false), -ENOSPC);
    assert_int_equal(session_stop(&s, id2, false), -ENOSPC);
    assert_int_equal(session_stop(&s, id, false), 0);
    close(fd);
}

static void test_failed_start(void **state)
{
    (void)state;
    session_t s = fresh();
    start_rc = -ENOMEM;
    assert_int_equal(session_start_fd(&s, 1), -ENOMEM);
    assert_int_equal(session_start_file(&s, "gone"), -ENOMEM);
    assert_int_equal(files(), 0); /* its temporary file is removed */
    start_rc = 0;
    assert_true(session_start_fd(&s, 1) > 0); /* and the next may start */
    assert_int_equal(session_stop(&s, 0, true), 0);
}

static void test_file_sessions(void **state)
{
    (void)state;
    session_t s = fresh();
    assert_int_equal(session_start_file(&s, "bad%q"), -EINVAL);
    assert_int_equal(session_start_file(&s, "t.%n"), 0);
    assert_int_equal(files(), 1); /* the temporary file only */
    assert_false(exists("t.0"));
    assert_int_equal(session_stop(&s, 0, false), 0);
    assert_true(exists("t.0"));
    assert_int_equal(files(), 1);
    /* discarded, or failed: nothing is left */
    assert_int_equal(session_start_file(&s, "t.%n"), 0);
    assert_int_equal(session_stop(&s, 0, true), 0);
    stop_rc = -EIO;
    assert_int_equal(session_start_file(&s, "t.%n"), 0);
    assert_int_equal(session_stop(&s, 0, false), -EIO);
    assert_int_equal(files(), 1);
    /* at exit, a file session is written */
    stop_rc = 0;
    assert_int_equal(session_start_file(&s, "t.%n"), 0);
    session_fini(&s);
    assert_true(exists("t.3"));
    assert_int_equal(session_stop(&s, 0, false), -ENOTCONN);
}

static void test_fork_child(void **state)
{
    (void)state;
    session_t s = fresh();
    assert_false(session_fork_child(&s));
    assert_int_equal(session_start_file(&s, "f"), 0);
    assert_true(session_fork_child(&s));
    assert_int_equal(s.fd, -1);
    assert_int_equal(session_stop(&s, 0, false), -ENOTCONN);
    assert_true(session_start_fd(&s, 1) > 0); /* the child may start its own */
    assert_int_equal(session_stop(&s, 0, true), 0);
}

static int setup(void **state)
{
    (void)state;
    /* relative patterns are taken from the current directory */
    tmpname(dir, sizeof(dir), "cprof-session");
    return mkdtemp(dir) && chdir(dir) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_sessions),
        cmocka_unit_test(test_failed_start),
        cmocka_unit_test(test_file_sessions),
        cmocka_unit_test(test_fork_child),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
