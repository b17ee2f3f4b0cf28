// links: tests/gen/gen.c fetch -lpthread
/* test_inflate.c — a gzip'd profile inflated on a second thread
 * (fetch_file_ahead) decodes to what fetch_file decodes, over many 64 KiB
 * blocks; a truncated or corrupt file fails with the same code and the
 * same message, whichever block the failure is in. */
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
#include "gen/gen.h"
#include "tool/fetch/fetch.h"

/* A gzip'd profile of about 1 MB inflated, in a new file: its path. */
static char *write_profile(uint64_t seed, size_t *size)
{
    profgen_opts_t o;
    profgen_defaults(&o, seed);
    o.samples = 4000;
    o.locations = 3000;
    o.functions = 1500;
    profile_t *p = profgen_make(&o);
    assert_non_null(p);
    char name[256];
    tmpname(name, sizeof(name), "test_inflate");
    char *path = strdup(name);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(profile_write_fd(p, fd), 0);
    *size = (size_t)lseek(fd, 0, SEEK_END);
    close(fd);
    profile_free(p);
    return path;
}

/* fetch_file and fetch_file_ahead of path agree: on the profile, or on
 * the failure and its message. */
static void assert_same_read(const char *path)
{
    profile_t *a = NULL, *b = NULL;
    char ea[512] = "", eb[512] = "", why[256];
    int ra = fetch_file(path, &a, ea, sizeof(ea));
    int rb = fetch_file_ahead(path, &b, eb, sizeof(eb));
    assert_int_equal(ra, rb);
    assert_string_equal(ea, eb);
    if (ra == 0 && !profgen_equal(a, b, why, sizeof(why)))
        fail_msg("%s: profiles differ: %s", path, why);
    profile_free(a);
    profile_free(b);
}

static void test_same_profile(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        size_t size;
        char *path = write_profile(seed, &size);
        profile_t *p = NULL;
        char err[256];
        assert_int_equal(fetch_file_ahead(path, &p, err, sizeof(err)), 0);
        assert_int_equal(p->n_samples, 4000);
        profile_free(p);
        assert_same_read(path);
        unlink(path);
        free(path);
    }
}

/* Cut at several places, or a byte flipped there: the same failure. */
static void test_same_failure(void **state)
{
    (void)state;
    size_t size;
    char *path = write_profile(7, &size);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *bytes = malloc(size);
    assert_int_equal(fread(bytes, 1, size, f), size);
    fclose(f);
    const double at[] = {0.01, 0.3, 0.77, 0.999};
    for (size_t i = 0; i < sizeof(at) / sizeof(*at); i++) {
        size_t cut = (size_t)(at[i] * (double)size);
        for (int flip = 0; flip < 2; flip++) {
            f = fopen(path, "wb");
            assert_non_null(f);
            if (flip) {
                bytes[cut] ^= 0x5a;
                assert_int_equal(fwrite(bytes, 1, size, f), size);
                bytes[cut] ^= 0x5a;
            } else {
                assert_int_equal(fwrite(bytes, 1, cut, f), cut);
            }
            fclose(f);
            assert_same_read(path);
        }
    }
    unlink(path);
    free(path);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_profile),
        cmocka_unit_test(test_same_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
