// links: src/runtime/cgroupmem.c
/* test_cgroupmem.c — the cgroup v2 memory files read from a directory the
 * test writes (as the kernel formats them), and when a reading calls for a
 * dump: a crossing of the mark from below, a limit from memory.high, a
 * rising memory.events count; none without a limit or while above. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpname.h"
#include "runtime/cgroupmem.h"

static char dir[256];

static void put(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void cg_files(const char *current, const char *max, const char *high, const char *events)
{
    put("memory.current", current);
    put("memory.max", max);
    put("memory.high", high);
    put("memory.events", events);
}

static int setup(void **state)
{
    (void)state;
    tmpname(dir, sizeof(dir), "test_cgroupmem");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"memory.current", "memory.max", "memory.high",
                                        "memory.events"};
    char path[512];
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    return rmdir(dir);
}

static const char events0[] = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n";

static void test_open_and_read(void **state)
{
    (void)state;
    cgroupmem_t c;
    assert_int_equal(cgroupmem_open(&c, dir), -ENOENT); /* no memory.current yet */
    cg_files("1048576\n", "max\n", "67108864\n", "low 0\nhigh 3\nmax 2\noom 1\noom_kill 1\n");
    assert_int_equal(cgroupmem_open(&c, dir), 0);
    cgroupmem_state_t s;
    assert_int_equal(cgroupmem_read(&c, &s), 0);
    assert_int_equal(s.current, 1048576);
    assert_true(s.max == UINT64_MAX);
    assert_int_equal(s.high, 67108864);
    assert_int_equal(s.ev_high, 3);
    assert_int_equal(s.ev_max, 2);
    assert_int_equal(s.ev_oom, 1);
    assert_int_equal(s.ev_oom_kill, 1); /* not oom_group_kill's, nor oom's */
}

static void test_crossed(void **state)
{
    (void)state;
    cgroupmem_t c;
    cgroupmem_state_t a, b;
    char why[200];
    cg_files("40000000\n", "100000000\n", "max\n", events0);
    assert_int_equal(cgroupmem_open(&c, dir), 0);
    assert_int_equal(cgroupmem_read(&c, &a), 0);
    /* below the mark (0.5 of memory.max): nothing */
    put("memory.current", "49999999\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_false(cgroupmem_crossed(&a, &b, 0.5, why, sizeof(why)));
    /* at it: a dump, said with the limit it is measured against */
    a = b;
    put("memory.current", "50000000\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_true(cgroupmem_crossed(&a, &b, 0.5, why, sizeof(why)));
    assert_string_equal(why, "cgroup memory.current 50000000 of memory.max 100000000");
    /* still above: none; below and above again: one more */
    a = b;
    put("memory.current", "70000000\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_false(cgroupmem_crossed(&a, &b, 0.5, why, sizeof(why)));
    a = b;
    put("memory.current", "10000000\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_false(cgroupmem_crossed(&a, &b, 0.5, why, sizeof(why)));
    a = b;
    put("memory.current", "60000000\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_true(cgroupmem_crossed(&a, &b, 0.5, why, sizeof(why)));
    /* memory.high lower than memory.max: the mark follows it */
    cg_files("10000000\n", "100000000\n", "20000000\n", events0);
    assert_int_equal(cgroupmem_read(&c, &a), 0);
    put("memory.current", "18000000\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_true(cgroupmem_crossed(&a, &b, 0.9, why, sizeof(why)));
    assert_string_equal(why, "cgroup memory.current 18000000 of memory.high 20000000");
    /* no limit at all: only events count */
    cg_files("900000000\n", "max\n", "max\n", events0);
    assert_int_equal(cgroupmem_read(&c, &a), 0);
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_false(cgroupmem_crossed(&a, &b, 0.01, why, sizeof(why)));
    put("memory.events", "low 0\nhigh 0\nmax 1\noom 0\noom_kill 0\n");
    assert_int_equal(cgroupmem_read(&c, &b), 0);
    assert_true(cgroupmem_crossed(&a, &b, 0.01, why, sizeof(why)));
    assert_string_equal(why, "cgroup memory.events high 0 max 1 oom 0 oom_kill 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_read),
        cmocka_unit_test(test_crossed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
