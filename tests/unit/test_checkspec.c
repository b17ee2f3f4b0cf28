// links: ui
/* test_checkspec.c — cprof check's -max specifications: type, settings
 * (through options.c, so focus/ignore/tagfocus land in their fields), the
 * limit split at the last '='; limits in a sample type's unit; tolerances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "tool/ui/checkspec.h"

static void test_type_settings_limit(void **state)
{
    (void)state;
    checkspec_t s;
    char err[256];
    assert_int_equal(checkspec_parse(&s, "alloc_objects:focus=parse_request:ignore=^main$=1000", err,
                                     sizeof(err)), 0);
    assert_string_equal(s.name, "alloc_objects:focus=parse_request:ignore=^main$");
    assert_string_equal(s.cfg.sample_index, "alloc_objects");
    assert_string_equal(s.cfg.focus, "parse_request");
    assert_string_equal(s.cfg.ignore, "^main$");
    assert_string_equal(s.limit_text, "1000");
    checkspec_free(&s);

    assert_int_equal(checkspec_parse(&s, "inuse_space=64MB", err, sizeof(err)), 0);
    assert_string_equal(s.cfg.sample_index, "inuse_space");
    assert_true(s.cfg.focus == NULL || *s.cfg.focus == '\0');
    assert_string_equal(s.limit_text, "64MB");
    checkspec_free(&s);
}

static void test_bad_specs(void **state)
{
    (void)state;
    static const char *const bad[] = {"inuse_space", "inuse_space=", "=5", ":focus=x=5",
                                      "alloc_objects:focus=5", "alloc_objects:nosuch=1=5",
                                      "alloc_objects:sample_index=cpu=5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        checkspec_t s;
        char err[256] = "";
        assert_int_equal(checkspec_parse(&s, bad[i], err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, bad[i])); /* the message names the spec */
        checkspec_free(&s);
    }
}

static void test_limits(void **state)
{
    (void)state;
    double v;
    assert_int_equal(checkspec_limit("64MB", "bytes", &v), 0);
    assert_true(v == 64.0 * 1024 * 1024);
    assert_int_equal(checkspec_limit("1.5kB", "bytes", &v), 0);
    assert_true(v == 1536);
    assert_int_equal(checkspec_limit("1000", "count", &v), 0);
    assert_true(v == 1000);
    assert_int_equal(checkspec_limit("2s", "nanoseconds", &v), 0);
    assert_true(v == 2e9);
    assert_int_equal(checkspec_limit("2s", "bytes", &v), -EINVAL); /* another family */
    assert_int_equal(checkspec_limit("lots", "bytes", &v), -EINVAL);
    assert_int_equal(checkspec_limit("-1", "count", &v), -EINVAL);
    assert_int_equal(checkspec_limit("", "count", &v), -EINVAL);
}

static void test_tolerance(void **state)
{
    (void)state;
    double p;
    assert_int_equal(checkspec_tolerance("5%", &p), 0);
    assert_true(p == 5);
    assert_int_equal(checkspec_tolerance("0.5", &p), 0);
    assert_true(p == 0.5);
    assert_int_equal(checkspec_tolerance("5%%", &p), -EINVAL);
    assert_int_equal(checkspec_tolerance("-1%", &p), -EINVAL);
    assert_int_equal(checkspec_tolerance("x", &p), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_settings_limit),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
