// links: src/runtime/ownheap.c src/runtime/arena.c src/runtime/rt.c src/runtime/counters.c
/* test_ownheap.c — every block of the private heap carries RT_CPROF_BLOCK
 * in the word before it (rt.h), which free's fast path tests to send it
 * back here, and the mark changes neither its usable size nor its free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/ownheap.h"
#include "runtime/rt.h"

static void marked(void *p, size_t size)
{
    assert_non_null(p);
    assert_true(ownheap_contains(p));
    assert_int_equal(((const size_t *)p)[-1] & RT_CPROF_BLOCK, RT_CPROF_BLOCK);
    assert_true(ownheap_usable(p) >= size);
    /* classes and offsets are multiples of 16: the mark is not in it */
    assert_int_equal(ownheap_usable(p) % 16, 0);
}

static void test_marked(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 16, 17, 100, 4000, 70000, 1u << 20};
    static const size_t aligns[] = {32, 64, 256, 4096};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        void *p = ownheap_malloc(sizes[i]);
        marked(p, sizes[i]);
        void *q = ownheap_calloc(1, sizes[i]);
        marked(q, sizes[i]);
        p = ownheap_realloc(p, 2 * sizes[i]);
        marked(p, 2 * sizes[i]);
        ownheap_free(p);
        ownheap_free(q);
        for (size_t k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++) {
            void *a = ownheap_memalign(aligns[k], sizes[i]);
            marked(a, sizes[i]);
            assert_int_equal((uintptr_t)a & (aligns[k] - 1), 0);
            ownheap_free(a);
        }
    }
}

/* A freed over-aligned block goes back whole: taken again for the same
 * request, it is the same block (its start is found through the offset,
 * which holds the mark too). */
static void test_reuse(void **state)
{
    (void)state;
    void *a = ownheap_memalign(4096, 100);
    assert_non_null(a);
    ownheap_free(a);
    void *b = ownheap_memalign(4096, 100);
    assert_ptr_equal(a, b);
    ownheap_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marked),
        cmocka_unit_test(test_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
