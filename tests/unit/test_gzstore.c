// links: src/profile/gzstore.c src/base/fdio.c -lz
/* test_gzstore.c — the zlib-less gzip (gzstore.h) checked with zlib: its
 * CRC-32 is zlib's, and what gzstore_mem and gzstore_write (streamed in
 * pieces, empty ones included, across the 64 KiB block limit) produce
 * inflates back to the input, with a valid trailer (inflate checks it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile/gzstore.h"

static uint8_t *pattern(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
    return p;
}

/* Inflates a whole gzip member and checks it equals want[0..n). */
static void inflates_to(const uint8_t *gz, size_t gzlen, const uint8_t *want, size_t n)
{
    uint8_t *out = malloc(n + 16);
    assert_non_null(out);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = out;
    z.avail_out = (uInt)(n + 16);
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END); /* CRC and size checked */
    assert_int_equal(z.total_out, n);
    assert_int_equal(z.avail_in, 0);
    assert_memory_equal(out, want, n);
    inflateEnd(&z);
    free(out);
}

static void test_crc_is_zlibs(void **state)
{
    (void)state;
    uint8_t *p = pattern(100000);
    assert_int_equal(gzstore_crc32(0, p, 100000), (uint32_t)crc32(0, p, 100000));
    uint32_t c = gzstore_crc32(0, p, 777);
    assert_int_equal(gzstore_crc32(c, p + 777, 5000), (uint32_t)crc32(0, p, 5777));
    assert_int_equal(gzstore_crc32(0, (const uint8_t *)"123456789", 9), 0xcbf43926u);
    free(p);
}

static void test_mem(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 65534, 65535, 65536, 200000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        uint8_t *p = pattern(n), *gz = malloc(gzstore_bound(n));
        assert_non_null(gz);
        size_t len = gzstore_mem(p, n, gz);
        assert_true(len <= gzstore_bound(n));
        inflates_to(gz, len, p, n);
        free(gz);
        free(p);
    }
}

static void test_streamed(void **state)
{
    (void)state;
    size_t n = 300000;
    uint8_t *p = pattern(n);
    FILE *f = tmpfile();
    assert_non_null(f);
    int fd = fileno(f);
    gzstore_t g = {0};
    static const size_t pieces[] = {0, 10, 70000, 0, 65535, 100, 131072};
    size_t at = 0;
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        assert_int_equal(gzstore_write(&g, fd, p + at, pieces[i], false), 0);
        at += pieces[i];
    }
    assert_int_equal(gzstore_write(&g, fd, p + at, n - at, true), 0);
    off_t len = lseek(fd, 0, SEEK_END);
    uint8_t *gz = malloc((size_t)len);
    assert_non_null(gz);
    assert_int_equal(pread(fd, gz, (size_t)len, 0), len);
    inflates_to(gz, (size_t)len, p, n);
    free(gz);
    free(p);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_is_zlibs),
        cmocka_unit_test(test_mem),
        cmocka_unit_test(test_streamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
