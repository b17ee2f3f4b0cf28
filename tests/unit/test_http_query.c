// links: src/http/query.c src/base/url.c
/* test_http_query.c — the Go-compatible parsers of the /debug/pprof/
 * server: url.ParseQuery + Values.Get, strconv.Atoi, ParseUint(s, 0, 64),
 * ServeMux's cleanPath, base64 and the credential comparison. Expected
 * values are what Go 1.19 returns for the same inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "http/query.h"

static void expect_get(const char *raw, const char *key, const char *want)
{
    char *v = query_get(raw, key);
    if (!want) {
        assert_null(v);
        return;
    }
    assert_non_null(v);
    assert_string_equal(v, want);
    free(v);
}

static void test_get(void **state)
{
    (void)state;
    expect_get("", "debug", NULL);
    expect_get("debug=1", "debug", "1");
    expect_get("gc=1&debug=2", "debug", "2");
    expect_get("debug=1&debug=2", "debug", "1");        /* first value */
    expect_get("debug", "debug", "");                   /* key without = */
    expect_get("debug=", "debug", "");
    expect_get("de%62ug=%31", "debug", "1");            /* escapes in both */
    expect_get("a=b+c", "a", "b c");                    /* + is a space */
    expect_get("a=%zz&a=2", "a", "2");                  /* bad escape skips the pair */
    expect_get("a=1;b=2", "a", NULL);                   /* ; makes the pair invalid */
    expect_get("x=1;y&a=3", "a", "3");
    expect_get("&&seconds=5&", "seconds", "5");
    expect_get("a=%4", "a", NULL);                      /* truncated escape */
    expect_get("secondsx=1", "seconds", NULL);
    expect_get("0x401000+0x401010", "0x401000 0x401010", "");
}

static void test_atoi(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_true(query_atoi("30", &v) && v == 30);
    assert_true(query_atoi("+7", &v) && v == 7);
    assert_true(query_atoi("-1", &v) && v == -1);
    assert_true(query_atoi("007", &v) && v == 7);
    assert_true(query_atoi("9223372036854775807", &v) && v == INT64_MAX);
    assert_true(query_atoi("-9223372036854775808", &v) && v == INT64_MIN);
    assert_false(query_atoi("9223372036854775808", &v));
    assert_false(query_atoi("", &v));
    assert_false(query_atoi("-", &v));
    assert_false(query_atoi("1.5", &v));
    assert_false(query_atoi(" 1", &v));
    assert_false(query_atoi("1_000", &v));
    assert_false(query_atoi("0x10", &v));
    assert_false(query_atoi("99999999999999999999999", &v));
}

static bool pu(const char *s, uint64_t *v)
{
    return query_parse_uint0(s, strlen(s), v);
}

static void test_parse_uint0(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_true(pu("0x4011d6", &v) && v == 0x4011d6);
    assert_true(pu("0X4011D6", &v) && v == 0x4011d6);
    assert_true(pu("1234", &v) && v == 1234);
    assert_true(pu("010", &v) && v == 8);
    assert_true(pu("0o17", &v) && v == 15);
    assert_true(pu("0b101", &v) && v == 5);
    assert_true(pu("0", &v) && v == 0);
    assert_true(pu("0xffffffffffffffff", &v) && v == UINT64_MAX);
    assert_true(pu("0x_1_0", &v) && v == 16);
    assert_true(pu("1_000", &v) && v == 1000);
    assert_false(pu("0x10000000000000000", &v));
    assert_false(pu("", &v));
    assert_false(pu("0x", &v));
    assert_false(pu("08", &v));
    assert_false(pu("-1", &v));
    assert_false(pu("+1", &v));
    assert_false(pu("1__0", &v));
    assert_false(pu("10_", &v));
    assert_false(pu("_10", &v));
    assert_false(pu("0xg", &v));
    assert_false(pu("junk", &v));
    assert_true(query_parse_uint0("0x10+", 4, &v) && v == 16); /* length-bounded */
}

static void expect_clean(const char *in, const char *want)
{
    char *c = query_clean_path(in);
    assert_non_null(c);
    assert_string_equal(c, want);
    free(c);
}

static void test_clean_path(void **state)
{
    (void)state;
    expect_clean("", "/");
    expect_clean("/", "/");
    expect_clean("//", "/");
    expect_clean("/debug/pprof/", "/debug/pprof/");
    expect_clean("/debug/pprof", "/debug/pprof");
    expect_clean("debug/pprof/heap", "/debug/pprof/heap");
    expect_clean("/debug//pprof/./heap", "/debug/pprof/heap");
    expect_clean("/debug/pprof/../pprof/heap", "/debug/pprof/heap");
    expect_clean("/../../x", "/x");
    expect_clean("/a/b/..", "/a");
    expect_clean("/a/b/../", "/a/");
    expect_clean("/a/./", "/a/");
    expect_clean("/..", "/");
    expect_clean("/a/..b/c", "/a/..b/c");
    expect_clean("/a/.b", "/a/.b");
}

static void test_base64_and_secret(void **state)
{
    (void)state;
    char out[64];
    assert_true(query_base64_decode("dTpzM2NyZXQ=", out, sizeof(out)));
    assert_string_equal(out, "u:s3cret");
    assert_true(query_base64_decode("dTpzM2NyZXQ", out, sizeof(out))); /* no padding */
    assert_string_equal(out, "u:s3cret");
    assert_true(query_base64_decode("", out, sizeof(out)));
    assert_string_equal(out, "");
    assert_false(query_base64_decode("dTp*", out, sizeof(out)));
    assert_false(query_base64_decode("dTpzM2NyZXQ=x", out, sizeof(out)));
    assert_false(query_base64_decode("dTpzM2NyZXQ=", out, 4)); /* too small */
    assert_true(query_secret_equal("abc", 3, "abc", 3));
    assert_false(query_secret_equal("abc", 3, "abd", 3));
    assert_false(query_secret_equal("abc", 3, "abcd", 4));
    assert_true(query_secret_equal("", 0, "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get),         cmocka_unit_test(test_atoi),
        cmocka_unit_test(test_parse_uint0), cmocka_unit_test(test_clean_path),
        cmocka_unit_test(test_base64_and_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
