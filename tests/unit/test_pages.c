// links: src/base/pages.c
/* test_pages.c — pages_populate maps every page a block touches, at any
 * alignment, and keeps the bytes that were there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/pages.h"

/* Whether every page of [p, p + n) is resident. */
static bool resident(const unsigned char *p, size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    size_t span = (size_t)((uintptr_t)p + n - a), np = (span + pg - 1) / pg;
    unsigned char *vec = malloc(np);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)a, span, vec), 0);
    bool all = true;
    for (size_t i = 0; i < np; i++)
        all = all && (vec[i] & 1);
    free(vec);
    return all;
}

static void test_maps_and_keeps(void **state)
{
    (void)state;
    const size_t len = 64 << 12;
    /* Blocks inside a fresh mapping: page-aligned, both ends in a page's
     * middle, one byte, and a block whose bytes are not zero. */
    const size_t offs[] = {0, 100, 4095, 8192};
    const size_t sizes[] = {len / 2, 10 * 4096 + 7, 1, 3 * 4096};
    for (size_t k = 0; k < sizeof(offs) / sizeof(*offs); k++) {
        unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(m != MAP_FAILED);
        unsigned char *b = m + offs[k];
        size_t n = sizes[k];
        assert_false(resident(b, n));
        if (k == 3) /* the first page written, the others not yet */
            for (size_t i = 0; i < 4096; i++)
                b[i] = (unsigned char)(i * 7 + 1);
        pages_populate(b, n);
        assert_true(resident(b, n));
        for (size_t i = 0; i < n; i++)
            assert_int_equal(b[i], k == 3 && i < 4096 ? (unsigned char)(i * 7 + 1) : 0);
        munmap(m, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maps_and_keeps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
