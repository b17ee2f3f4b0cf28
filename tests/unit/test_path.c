// links: src/base/path.c
/* test_path.c — path_base and path_clean against the cases of Go's own
 * tests (path/filepath/path_test.go: basetests, cleantests), the Unix ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* basetests */
static const char *const base_cases[][2] = {
    {"", "."},       {".", "."},     {"/.", "."},         {"/", "/"},
    {"////", "/"},   {"x/", "x"},    {"abc", "abc"},      {"abc/def", "def"},
    {"a/b/.x", ".x"}, {"a/b/c.", "c."}, {"a/b/c.x", "c.x"},
};

/* cleantests */
static const char *const clean_cases[][2] = {
    /* already clean */
    {"abc", "abc"}, {"abc/def", "abc/def"}, {"a/b/c", "a/b/c"}, {".", "."}, {"..", ".."},
    {"../..", "../.."}, {"../../abc", "../../abc"}, {"/abc", "/abc"}, {"/", "/"},
    /* empty is the current directory */
    {"", "."},
    /* trailing slash */
    {"abc/", "abc"}, {"abc/def/", "abc/def"}, {"a/b/c/", "a/b/c"}, {"./", "."}, {"../", ".."},
    {"../../", "../.."}, {"/abc/", "/abc"},
    /* doubled slash */
    {"abc//def//ghi", "abc/def/ghi"}, {"//abc", "/abc"}, {"///abc", "/abc"}, {"//abc//", "/abc"},
    {"abc//", "abc"},
    /* . elements */
    {"abc/./def", "abc/def"}, {"/./abc/def", "/abc/def"}, {"abc/.", "abc"},
    /* .. elements */
    {"abc/def/ghi/../jkl", "abc/def/jkl"}, {"abc/def/../ghi/../jkl", "abc/jkl"}, {"abc/def/..", "abc"},
    {"abc/def/../..", "."}, {"/abc/def/../..", "/"}, {"abc/def/../../..", ".."},
    {"/abc/def/../../..", "/"}, {"abc/def/../../../ghi/jkl/../../../mno", "../../mno"},
    {"/../abc", "/abc"},
    /* combinations */
    {"abc/./../def", "def"}, {"abc//./../def", "def"}, {"abc/../../././../def", "../../def"},
};

static void test_base_go_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(base_cases); i++) {
        char buf[64];
        memset(buf, 'z', sizeof(buf));
        const char *b = path_base(base_cases[i][0], buf, sizeof(buf));
        if (strcmp(b, base_cases[i][1]) != 0)
            fail_msg("path_base(\"%s\") = \"%s\", want \"%s\"", base_cases[i][0], b, base_cases[i][1]);
    }
}

/* The element is not copied unless it has to be: a pointer into the path
 * stays valid as long as the path, whatever is done with buf after. */
static void test_base_points_into_path(void **state)
{
    (void)state;
    const char *p = "/usr/lib/libc.so.6";
    char buf[8];
    assert_ptr_equal(path_base(p, buf, sizeof(buf)), p + 9);
    assert_ptr_equal(path_base("abc/def//", buf, sizeof(buf)), buf);
    assert_string_equal(buf, "def");
}

/* An element longer than buf is cut to fit, NUL-terminated. */
static void test_base_truncates_into_buf(void **state)
{
    (void)state;
    char buf[4];
    assert_string_equal(path_base("/x/abcdef/", buf, sizeof(buf)), "abc");
    assert_string_equal(path_base("/x/abcdef/", buf, 1), "");
}

static void test_clean_go_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(clean_cases); i++)
        /* Go checks Clean(result) == result too: cleaning is idempotent. */
        for (int k = 0; k < 2; k++) {
            char *c = path_clean(clean_cases[i][k]);
            assert_non_null(c);
            if (strcmp(c, clean_cases[i][1]) != 0)
                fail_msg("path_clean(\"%s\") = \"%s\", want \"%s\"", clean_cases[i][k], c,
                         clean_cases[i][1]);
            free(c);
        }
}

/* The names DWARF gives with -fdebug-prefix-map=$PWD=. and relative
 * include paths, as pprof groups them. */
static void test_clean_dwarf_names(void **state)
{
    (void)state;
    const char *cases[][2] = {{"./x.c", "x.c"}, {"./a//b/", "a/b"}, {"a/b/../c", "a/c"}, {"/../x", "/x"}};
    for (size_t i = 0; i < N(cases); i++) {
        char *c = path_clean(cases[i][0]);
        assert_string_equal(c, cases[i][1]);
        free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_go_cases),
        cmocka_unit_test(test_base_points_into_path),
        cmocka_unit_test(test_base_truncates_into_buf),
        cmocka_unit_test(test_clean_go_cases),
        cmocka_unit_test(test_clean_dwarf_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
