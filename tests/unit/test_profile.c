// links: profile
/* test_profile.c — the profile's storage: chunk blocks aligned per kind,
 * strings packed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile/profile.h"

/* Strings take their bytes and NUL only (a decoded profile holds
 * hundreds of thousands); every other block keeps its alignment whatever
 * string lengths came before it. */
static void test_chunk_alignment(void **state)
{
    (void)state;
    profile_t *p = profile_new();
    assert_non_null(p);
    for (size_t len = 1; len < 40; len++) {
        char s[64];
        memset(s, 'a' + (int)(len % 26), len);
        int64_t i = profile_add_string(p, s, len);
        assert_true(i > 0);
        const char *c = p->strings[i];
        assert_int_equal(strlen(c), len);
        void *b = profile_alloc(p, len);
        assert_int_equal((uintptr_t)b % _Alignof(max_align_t), 0);
        memset(b, 0xff, len);
        uint64_t ids[3] = {len, len + 1, len + 2};
        uint64_t *st = profile_alloc_stack(p, ids, len % 3 + 1);
        assert_int_equal((uintptr_t)st % _Alignof(uint64_t), 0);
        assert_int_equal(st[0], len);
        profile_line_t ln = {len, (int64_t)len};
        profile_line_t *l = profile_alloc_lines(p, &ln, 1);
        assert_int_equal((uintptr_t)l % _Alignof(profile_line_t), 0);
        assert_int_equal(l->line, (int64_t)len);
    }
    /* a run of strings with nothing between them is one packed run */
    int64_t a = profile_add_string(p, "xyz", 3), b = profile_add_string(p, "q", 1),
            c = profile_add_string(p, "hello", 5);
    assert_ptr_equal(p->strings[b], p->strings[a] + 4);
    assert_ptr_equal(p->strings[c], p->strings[b] + 2);
    assert_string_equal(p->strings[c], "hello");
    profile_free(p);
}

/* A large table from profile_calloc_written is zero and each of its pages
 * is mapped (mincore: resident) before any use; a small one is zero. */
static void test_calloc_written(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 4096, (64 << 10) - 1, 64 << 10, (3 << 20) + 100};
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
        size_t n = sizes[k];
        unsigned char *b = profile_calloc_written(n, 1);
        assert_non_null(b);
        if (n >= (64 << 10)) {
            uintptr_t a = (uintptr_t)b & ~(uintptr_t)(pg - 1);
            size_t span = (size_t)((uintptr_t)b + n - a), np = (span + pg - 1) / pg;
            unsigned char *vec = malloc(np);
            assert_non_null(vec);
            assert_int_equal(mincore((void *)a, span, vec), 0);
            for (size_t i = 0; i < np; i++)
                assert_true(vec[i] & 1);
            free(vec);
        }
        for (size_t i = 0; i < n; i++)
            assert_int_equal(b[i], 0);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_alignment),
        cmocka_unit_test(test_calloc_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
