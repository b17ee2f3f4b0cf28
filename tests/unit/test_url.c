// links: src/base/url.c
/* test_url.c — url_query_escape against Go's url.QueryEscape, and its
 * size check; url_unescape takes the escapes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/url.h"

static void test_query_escape_as_go(void **state)
{
    (void)state;
    /* url.QueryEscape's outputs (Go 1.19) */
    static const char *const in[] = {"app", "app{env=prod,region=eu}", "a b", "a+b/c?d&e=f", "~-_.",
                                     "\xc3\xa9"};
    static const char *const want[] = {"app", "app%7Benv%3Dprod%2Cregion%3Deu%7D", "a+b",
                                       "a%2Bb%2Fc%3Fd%26e%3Df", "~-_.", "%C3%A9"};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        char out[128], back[128];
        assert_true(url_query_escape(in[i], out, sizeof(out)));
        assert_string_equal(out, want[i]);
        assert_true(url_unescape(out, strlen(out), back));
        assert_string_equal(back, in[i]);
    }
}

static void test_query_escape_size(void **state)
{
    (void)state;
    char out[4];
    assert_false(url_query_escape("a{", out, sizeof(out))); /* "a%7B" + NUL */
    assert_true(url_query_escape("ab{", out, 0) == false);
    char ok[5];
    assert_true(url_query_escape("a{", ok, sizeof(ok)));
    assert_string_equal(ok, "a%7B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_escape_as_go),
        cmocka_unit_test(test_query_escape_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
