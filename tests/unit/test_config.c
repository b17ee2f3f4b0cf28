// links: src/runtime/config.c src/runtime/rt.c src/base/duration.c
/* test_config.c — CPROF_* parsing: good values, one message per bad value,
 * and the file-name patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/config.h"
#include "runtime/unwind.h"

/* Kinds as the registry (profiles.h) gives them, their variables only:
 * the registry's own rows are test_profiles.c's. */
enum { HEAP, MUTEX, BLOCK };
static const profile_kind_t kinds[] = {
    [HEAP] = {.name = "heap", .env = "CPROF_HEAP_PROFILE", .what = "heap profile"},
    [MUTEX] = {.name = "mutex", .env = "CPROF_MUTEX_PROFILE", .what = "mutex profile"},
    [BLOCK] = {.name = "block", .env = "CPROF_BLOCK_PROFILE", .what = "block profile"},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *const vars[] = {"CPROF_RATE", "CPROF_UNWIND", "CPROF_UNWIND_CHECK", "CPROF_DEPTH",
                                   "CPROF_HEAP_PROFILE", "CPROF_HEAP_PROFILE_EVERY",
                                   "CPROF_MEMORY_LIMIT", "CPROF_SEED", "CPROF_MUTEX_RATE",
                                   "CPROF_BLOCK_RATE", "CPROF_MUTEX_PROFILE",
                                   "CPROF_BLOCK_PROFILE", "CPROF_DUMP_SIGNAL", "CPROF_DUMP_INUSE",
                                   "CPROF_DUMP_RSS", "CPROF_DUMP_OOM", "CPROF_DUMP_CGROUP",
                                   "CPROF_RECORD"};

/* Reads the config with stderr captured into err. */
static void read_with(rt_config_t *c, char *err, size_t errlen, const char *name, const char *value)
{
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    if (name)
        setenv(name, value, 1);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    config_read(c, kinds, N_KINDS);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, errlen - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_defaults(void **state)
{
    (void)state;
    rt_config_t c;
    char err[1024];
    read_with(&c, err, sizeof(err), NULL, NULL);
    assert_string_equal(err, "");
    assert_int_equal(c.rate, 524288);
    assert_int_equal(c.unwinder, UNWIND_CFI);
    assert_false(c.unwind_check);
    assert_int_equal(c.depth, 64);
    assert_null(c.path[HEAP]);
    assert_int_equal(c.memory_limit, 1ull << 30);
}

static void test_good_values(void **state)
{
    (void)state;
    rt_config_t c;
    char err[1024];
    read_with(&c, err, sizeof(err), "CPROF_RATE", "1");
    assert_int_equal(c.rate, 1);
    read_with(&c, err, sizeof(err), "CPROF_UNWIND", "fp");
    assert_int_equal(c.unwinder, UNWIND_FP);
    read_with(&c, err, sizeof(err), "CPROF_UNWIND", "libunwind");
    assert_int_equal(c.unwinder, UNWIND_LIBUNWIND);
    read_with(&c, err, sizeof(err), "CPROF_UNWIND", "cfi");
    assert_int_equal(c.unwinder, UNWIND_CFI);
    read_with(&c, err, sizeof(err), "CPROF_UNWIND_CHECK", "1");
    assert_true(c.unwind_check);
    read_with(&c, err, sizeof(err), "CPROF_DEPTH", "256");
    assert_int_equal(c.depth, 256);
    read_with(&c, err, sizeof(err), "CPROF_MEMORY_LIMIT", "64M");
    assert_int_equal(c.memory_limit, 64u << 20);
    read_with(&c, err, sizeof(err), "CPROF_HEAP_PROFILE", "/x/h.%p.%e.%t.%n.%%.pb.gz");
    assert_string_equal(c.path[HEAP], "/x/h.%p.%e.%t.%n.%%.pb.gz");
    /* Relative: against the directory at start. */
    char want[4200], cwd[4096];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    snprintf(want, sizeof(want), "%s/h.pb.gz", cwd);
    read_with(&c, err, sizeof(err), "CPROF_HEAP_PROFILE", "h.pb.gz");
    assert_string_equal(c.path[HEAP], want);
    assert_string_equal(err, "");
}

/* Each bad value: exactly one line naming the variable; what it controls
 * is off; nothing else changes. */
static void test_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *name, *value;
        int heap_off;
    } cases[] = {
        {"CPROF_RATE", "abc", 1},       {"CPROF_RATE", "-1", 1},
        {"CPROF_RATE", "12x", 1},       {"CPROF_RATE", "", 1},
        {"CPROF_UNWIND", "foo", 1},     {"CPROF_UNWIND_CHECK", "yes", 0},
        {"CPROF_DEPTH", "0", 1},
        {"CPROF_DEPTH", "257", 1},      {"CPROF_MEMORY_LIMIT", "12", 1},
        {"CPROF_MEMORY_LIMIT", "9T", 1}, {"CPROF_SEED", "x", 0},
        {"CPROF_HEAP_PROFILE", "x%q", 0}, {"CPROF_HEAP_PROFILE", "x%", 0},
        {"CPROF_HEAP_PROFILE_EVERY", "5", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rt_config_t c;
        char err[1024];
        read_with(&c, err, sizeof(err), cases[i].name, cases[i].value);
        assert_int_equal(lines(err), 1);
        assert_non_null(strstr(err, cases[i].name));
        assert_true(strncmp(err, "cprof: ", 7) == 0);
        assert_int_equal(c.rate == 0, cases[i].heap_off);
        assert_null(c.path[HEAP]);
    }
}

/* The dump triggers (dump.h): signal names as kill(1) takes them, but not
 * the faults', KILL's or STOP's; bytes as CPROF_MEMORY_LIMIT; a fraction. */
static void test_dump_values(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int sig; /* 0: refused */
    } sigs[] = {
        {"USR2", SIGUSR2}, {"SIGUSR1", SIGUSR1}, {"12", 12},   {"HUP", SIGHUP},
        {"KILL", 0},       {"SIGSEGV", 0},       {"9", 0},     {"11", 0},
        {"usr2", 0},       {"", 0},              {"USR2 ", 0},
    };
    rt_config_t c;
    char err[1024];
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        read_with(&c, err, sizeof(err), "CPROF_DUMP_SIGNAL", sigs[i].value);
        assert_int_equal(c.dump_signal, sigs[i].sig);
        assert_int_equal(lines(err), sigs[i].sig ? 0 : 1);
    }
    read_with(&c, err, sizeof(err), "CPROF_DUMP_SIGNAL", "RTMIN+2");
    assert_int_equal(c.dump_signal, SIGRTMIN + 2);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_SIGNAL", "RTMAX-0");
    assert_int_equal(c.dump_signal, SIGRTMAX);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_INUSE", "64M");
    assert_int_equal(c.dump_inuse, 64u << 20);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_INUSE", "1000");
    assert_int_equal(c.dump_inuse, 0);
    assert_non_null(strstr(err, "CPROF_DUMP_INUSE"));
    read_with(&c, err, sizeof(err), "CPROF_DUMP_RSS", "1G");
    assert_int_equal(c.dump_rss, 1u << 30);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_OOM", "1");
    assert_true(c.dump_oom);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_OOM", "true");
    assert_false(c.dump_oom);
    assert_int_equal(lines(err), 1);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_CGROUP", "0.9");
    assert_true(c.dump_cgroup == 0.9);
    read_with(&c, err, sizeof(err), "CPROF_DUMP_CGROUP", "90%");
    assert_true(c.dump_cgroup == 0);
    assert_int_equal(lines(err), 1);
    /* the flight recorder's span: a Go duration of at least 1 s */
    read_with(&c, err, sizeof(err), "CPROF_RECORD", "1h30m");
    assert_true(c.record == 5400000000000);
    assert_int_equal(lines(err), 0);
    read_with(&c, err, sizeof(err), "CPROF_RECORD", "500ms");
    assert_true(c.record == 0);
    assert_non_null(strstr(err, "CPROF_RECORD"));
    read_with(&c, err, sizeof(err), "CPROF_RECORD", "600");
    assert_true(c.record == 0);
    assert_int_equal(lines(err), 1);
}

static void test_every_needs_profile(void **state)
{
    (void)state;
    rt_config_t c;
    char err[1024];
    setenv("CPROF_HEAP_PROFILE", "x.pb.gz", 1);
    setenv("CPROF_HEAP_PROFILE_EVERY", "0.5", 1);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    config_read(&c, kinds, N_KINDS);
    dup2(saved, 2);
    close(saved);
    fclose(tmp);
    assert_true(c.every == 0.5);
    setenv("CPROF_HEAP_PROFILE_EVERY", "0", 1);
    read_with(&c, err, sizeof(err), "CPROF_HEAP_PROFILE_EVERY", "0");
    assert_int_equal(lines(err), 1);
    assert_true(c.every == 0);
}

/* CPROF_MUTEX_RATE and CPROF_BLOCK_RATE: off by default (as Go), whole
 * numbers >= 0; a bad one is one line and leaves that profile off. */
static void test_lock_profiles(void **state)
{
    (void)state;
    rt_config_t c;
    char err[1024];
    read_with(&c, err, sizeof(err), NULL, NULL);
    assert_int_equal(c.mutex_rate, 0);
    assert_int_equal(c.block_rate, 0);
    assert_null(c.path[MUTEX]);
    read_with(&c, err, sizeof(err), "CPROF_MUTEX_RATE", "5");
    assert_string_equal(err, "");
    assert_int_equal(c.mutex_rate, 5);
    read_with(&c, err, sizeof(err), "CPROF_BLOCK_RATE", "10000");
    assert_string_equal(err, "");
    assert_int_equal(c.block_rate, 10000);
    read_with(&c, err, sizeof(err), "CPROF_MUTEX_PROFILE", "/x/m.%p.pb.gz");
    assert_string_equal(err, "");
    assert_string_equal(c.path[MUTEX], "/x/m.%p.pb.gz");
    static const char *const bad[][2] = {
        {"CPROF_MUTEX_RATE", "-1"}, {"CPROF_MUTEX_RATE", "x"},  {"CPROF_MUTEX_RATE", "1.5"},
        {"CPROF_BLOCK_RATE", ""},   {"CPROF_BLOCK_RATE", "1s"}, {"CPROF_MUTEX_PROFILE", "m.%q"},
        {"CPROF_BLOCK_PROFILE", ""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        read_with(&c, err, sizeof(err), bad[i][0], bad[i][1]);
        assert_int_equal(lines(err), 1);
        assert_non_null(strstr(err, bad[i][0]));
        assert_int_equal(c.mutex_rate, 0);
        assert_int_equal(c.block_rate, 0);
        assert_null(c.path[MUTEX]);
        assert_null(c.path[BLOCK]);
        assert_int_equal(c.rate, 524288); /* the heap profile is not touched */
    }
}

static void test_patterns(void **state)
{
    (void)state;
    char out[256], want[256];
    assert_int_equal(config_check_pattern("a%pb%%c%n"), 0);
    assert_int_equal(config_check_pattern("a%x"), -EINVAL);
    assert_int_equal(config_check_pattern(""), -EINVAL);
    assert_int_equal(config_expand_pattern("heap.%p.%n.pb.gz", 7, out, sizeof(out)), 0);
    snprintf(want, sizeof(want), "heap.%d.7.pb.gz", (int)getpid());
    assert_string_equal(out, want);
    assert_int_equal(config_expand_pattern("%%%e", 0, out, sizeof(out)), 0);
    assert_string_equal(out, "%test_config");
    assert_int_equal(config_expand_pattern("%p%p%p", 0, out, 4), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_every_needs_profile),
        cmocka_unit_test(test_dump_values),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_lock_profiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
