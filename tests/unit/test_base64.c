// links: src/base/base64.c
/* test_base64.c — RFC 4648's test vectors, padding, and the size check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/base64.h"

static void test_rfc4648_vectors(void **state)
{
    (void)state;
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar", "user:pw"};
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy",
                                       "dXNlcjpwdw=="};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        char out[32];
        assert_true(base64_encode(in[i], strlen(in[i]), out, sizeof(out)));
        assert_string_equal(out, want[i]);
    }
}

static void test_high_bytes(void **state)
{
    (void)state;
    const unsigned char in[] = {0xff, 0xfe, 0x00};
    char out[8];
    assert_true(base64_encode(in, sizeof(in), out, sizeof(out)));
    assert_string_equal(out, "//4A");
}

static void test_too_small(void **state)
{
    (void)state;
    char out[9];
    assert_false(base64_encode("foob", 4, out, 8)); /* needs 8 + NUL */
    assert_true(base64_encode("foob", 4, out, 9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc4648_vectors),
        cmocka_unit_test(test_high_bytes),
        cmocka_unit_test(test_too_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
