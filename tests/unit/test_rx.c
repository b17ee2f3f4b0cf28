// links: graph
/* test_rx.c — Go's regexp syntax: what matches (as Go's MatchString), and
 * what Go rejects, with regexp/syntax's message. The e2e test tool_regexp.sh
 * checks the same against go tool pprof itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tool/graph/rx.h"

static void test_matches(void **state)
{
    (void)state;
    static const struct {
        const char *re, *s;
        bool match;
    } cases[] = {
        {"(?i)MAIN", "main.run", true},         {"\\bfn\\b", "a fn b", true},
        {"\\bfn\\b", "a_fn", false},            {"^a\\d+$", "a123", true},
        {"^a\\d+$", "a12b", false},             {"(?:ab)+c", "ababc", true},
        {"a.*?b", "axxb", true},                {"^(x|y)$", "y", true},
        {"x$", "x\n", false},                   {"(?m)x$", "x\ny", true},
        {"\\Q.*\\E", "a.*b", true},             {"\\Q.*\\E", "ab", false},
        {"a{2}", "aa", true},                   {"a{,2}", "a{,2}", true},
        {"x{", "x{", true},                     {"[[:upper:]]", "aB", true},
        {"\\pL", "1é", true},                   {"\\p{Greek}", "ab", false},
        {"[^a]", "\n", true},                   {"\\x41", "A", true},
        {"\\101", "A", true},                   {"[]a]", "]", true},
        {"^*a", "a", true},                     {"(?U)a+", "aaa", true},
        {"(?P<name>x)", "x", true},             {"\\.", "a", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        rx_t *r = rx_compile(cases[i].re, err, sizeof(err));
        if (!r)
            fail_msg("%s: %s", cases[i].re, err);
        if (rx_match(r, cases[i].s) != cases[i].match)
            fail_msg("%s on \"%s\": expected %d", cases[i].re, cases[i].s, cases[i].match);
        assert_string_equal(rx_pattern(r), cases[i].re);
        rx_free(r);
    }
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *re, *msg;
    } cases[] = {
        {"(abc", "missing closing ): `(abc`"},
        {"abc)", "unexpected ): `abc)`"},
        {"[a-", "missing closing ]: `[a-`"},
        {"a**", "invalid nested repetition operator: `**`"},
        {"a+?*", "invalid nested repetition operator: `+?*`"},
        {"*a", "missing argument to repetition operator: `*`"},
        {"(|*)", "missing argument to repetition operator: `*`"},
        {"\\Z", "invalid escape sequence: `\\Z`"},
        {"\\8", "invalid escape sequence: `\\8`"},
        {"\\C", "invalid escape sequence: `\\C`"},
        {"(?=x)", "invalid or unsupported Perl syntax: `(?=`"},
        {"(?<x>a)", "invalid or unsupported Perl syntax: `(?<`"},
        {"x{1001}", "invalid repeat count: `{1001}`"},
        {"x{3,2}", "invalid repeat count: `{3,2}`"},
        {"[z-a]", "invalid character class range: `z-a`"},
        {"[[:foo:]]", "invalid character class range: `[:foo:]`"},
        {"\\pX", "invalid character class range: `\\pX`"},
        {"(?P<>x)", "invalid named capture: `(?P<>`"},
        {"ab\\", "trailing backslash at end of expression: ``"},
        {"a\xff", "invalid UTF-8: `\xff`"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "", want[256];
        rx_t *r = rx_compile(cases[i].re, err, sizeof(err));
        if (r)
            fail_msg("%s compiled", cases[i].re);
        snprintf(want, sizeof(want), "error parsing regexp: %s", cases[i].msg);
        assert_string_equal(err, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
