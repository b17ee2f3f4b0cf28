// links: profile
// (and the runtime's objects whole: the Makefile's own rule for this test)
/* test_profiles.c — the registry of profile kinds (profiles.h): every row
 * complete for how it is recorded, names and variables unique, rows in
 * Go's index order, and each writer answering with the form its debug
 * level promises. The rows name every kind's writer, so this test links
 * the runtime whole, as a program built with -lcprof is (no ASan twin:
 * ASan cannot wrap the runtime's malloc; see the Makefile). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/profiles.h"

/* Go 1.19's index page (net/http/pprof Index: pprof.Profiles() and
 * cmdline, profile, trace, sorted by name), less cmdline, a page of the
 * server's own. */
static const char *const go_kinds[] = {"allocs", "block",   "goroutine",    "heap",
                                       "mutex",  "profile", "threadcreate", "trace"};
#define N_GO (sizeof(go_kinds) / sizeof(go_kinds[0]))

static bool is_go_kind(const char *name)
{
    for (size_t i = 0; i < N_GO; i++)
        if (strcmp(go_kinds[i], name) == 0)
            return true;
    return false;
}

static void test_rows_complete(void **state)
{
    (void)state;
    assert_true(profile_kinds_n >= N_GO);
    assert_true(profile_kinds_n <= PROFILE_KINDS_MAX);
    for (size_t i = 0; i < profile_kinds_n; i++) {
        const profile_kind_t *k = &profile_kinds[i];
        assert_non_null(k->name);
        assert_true(k->name[0] != '\0' && strspn(k->name, "abcdefghijklmnopqrstuvwxyz") ==
                                              strlen(k->name));
        /* the server's own pages (pprof.c pages[]) keep their paths */
        assert_true(strcmp(k->name, "cmdline") != 0 && strcmp(k->name, "symbol") != 0);
        assert_non_null(k->desc);
        assert_true(strlen(k->desc) > 10);
        assert_non_null(k->what);
        assert_true(k->env == NULL || strncmp(k->env, "CPROF_", 6) == 0);
        switch (k->how) {
        case PROFILE_WHOLE:
        case PROFILE_HEAP:
            assert_non_null(k->write);
            assert_true(k->max_debug >= 1 && k->max_debug <= 2);
            assert_true(k->params & PROFILE_P_DEBUG);
            assert_false(k->params & (PROFILE_P_SECONDS | PROFILE_P_TRACE_SECONDS));
            assert_true(k->start == NULL && k->stop == NULL && k->session == NULL);
            /* ?reset=1 exactly when there is something to reset */
            assert_int_equal(!!(k->params & PROFILE_P_RESET), k->reset != NULL);
            assert_true(k->how == PROFILE_HEAP || k->sample_type == NULL);
            break;
        case PROFILE_SESSION:
            assert_non_null(k->start);
            assert_non_null(k->stop);
            assert_non_null(k->enable);
            assert_non_null(k->busy);
            assert_null(k->write);
            assert_null(k->count);
            /* one duration parameter, no delta (a session is one) */
            assert_int_equal(__builtin_popcount(k->params &
                                                (PROFILE_P_SECONDS | PROFILE_P_TRACE_SECONDS)), 1);
            assert_false(k->params & (PROFILE_P_DELTA | PROFILE_P_DEBUG | PROFILE_P_RESET));
            /* a variable starts one for the run, and exit ends it */
            assert_non_null(k->session);
            break;
        default:
            fail_msg("%s: how %d", k->name, (int)k->how);
        }
    }
}

static void test_unique(void **state)
{
    (void)state;
    for (size_t i = 0; i < profile_kinds_n; i++)
        for (size_t j = i + 1; j < profile_kinds_n; j++) {
            const profile_kind_t *a = &profile_kinds[i], *b = &profile_kinds[j];
            assert_string_not_equal(a->name, b->name);
            if (a->env && b->env)
                assert_string_not_equal(a->env, b->env);
            assert_string_not_equal(a->what, b->what);
        }
}

/* Sorted by name, as Go's Index sorts; the kinds Go has come in Go's
 * order, and none is missing. */
static void test_go_order(void **state)
{
    (void)state;
    for (size_t i = 1; i < profile_kinds_n; i++)
        assert_true(strcmp(profile_kinds[i - 1].name, profile_kinds[i].name) < 0);
    size_t n = 0;
    for (size_t i = 0; i < profile_kinds_n; i++) {
        if (!is_go_kind(profile_kinds[i].name))
            continue;
        assert_true(n < N_GO);
        assert_string_equal(profile_kinds[i].name, go_kinds[n]);
        n++;
    }
    assert_int_equal(n, N_GO);
    for (size_t i = 0; i < N_GO; i++)
        assert_non_null(profile_find(go_kinds[i]));
}

static void test_find(void **state)
{
    (void)state;
    for (size_t i = 0; i < profile_kinds_n; i++)
        assert_ptr_equal(profile_find(profile_kinds[i].name), &profile_kinds[i]);
    assert_null(profile_find("cmdline"));
    assert_null(profile_find(""));
    assert_null(profile_find("heapx"));
}

/* Each writer as its row describes it: debug 0 a gzipped profile.proto,
 * 1 up to max_debug text, in this process (linked with the runtime, its
 * constructor has run). */
static void test_writers(void **state)
{
    (void)state;
    for (size_t i = 0; i < profile_kinds_n; i++) {
        const profile_kind_t *k = &profile_kinds[i];
        if (k->how == PROFILE_SESSION)
            continue;
        for (int debug = 0; debug <= k->max_debug; debug++) {
            int fd = memfd_create("test_profiles", MFD_CLOEXEC);
            assert_true(fd >= 0);
            assert_int_equal(k->write(fd, debug), 0);
            unsigned char head[2] = {0};
            off_t len = lseek(fd, 0, SEEK_END);
            assert_true(len > 2);
            assert_int_equal(pread(fd, head, 2, 0), 2);
            if (debug == 0)
                assert_true(head[0] == 0x1f && head[1] == 0x8b);
            else
                assert_false(head[0] == 0x1f && head[1] == 0x8b);
            print_message("%s debug=%d: %lld bytes\n", k->name, debug, (long long)len);
            close(fd);
        }
        if (k->count)
            k->count(); /* callable; its value is the index page's */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_complete),
        cmocka_unit_test(test_unique),
        cmocka_unit_test(test_go_order),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
