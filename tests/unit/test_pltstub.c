// links: src/runtime/pltstub.c
/* test_pltstub.c — aarch64 PLT stubs told from their words: every
 * instruction of binutils' and lld's entries and of the lazy-binding
 * header (PLT0), with and without bti c and autia1716, gives the CFA's
 * offset from sp (16 only after PLT0's stp); other code, and words cut off
 * at either end of what was readable, give -1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/pltstub.h"

#define BTI 0xd503245fu
#define STP 0xa9bf7bf0u  /* stp x16, x30, [sp, #-16]! */
#define ADRP 0xf00000f0u /* adrp x16, 1f000 */
#define LDR 0xf947fe11u  /* ldr x17, [x16, #4088] */
#define ADD 0x913fe210u  /* add x16, x16, #0xff8 */
#define AUT 0xd503219fu  /* autia1716 */
#define BR 0xd61f0220u   /* br x17 */
#define NOP 0xd503201fu
#define RET 0xd65f03c0u

/* PLT0 then two entries (objdump of tests/progs/arm64_cpu.c's build). */
static const uint32_t plain[] = {
    STP, ADRP, LDR, ADD, BR, NOP, NOP, NOP,
    0x90000110u, 0xf9400211u, 0x91000210u, BR,
    0x90000110u, 0xf9400611u, 0x91002210u, BR,
};

static void test_plain(void **state)
{
    (void)state;
    size_t n = sizeof(plain) / sizeof(plain[0]);
    assert_int_equal(plt_stub_cfa_sigsafe(plain, n, 0), 0); /* stp: not yet */
    for (size_t i = 1; i <= 4; i++)
        assert_int_equal(plt_stub_cfa_sigsafe(plain, n, i), 16);
    for (size_t i = 5; i <= 7; i++) /* PLT0's padding is never run */
        assert_int_equal(plt_stub_cfa_sigsafe(plain, n, i), -1);
    for (size_t i = 8; i < n; i++)
        assert_int_equal(plt_stub_cfa_sigsafe(plain, n, i), 0);
    assert_int_equal(plt_stub_cfa_sigsafe(plain, n, n), -1);
}

/* -z force-bti / -z pac-plt: bti c first, autia1716 before the branch. */
static void test_bti_pac(void **state)
{
    (void)state;
    static const uint32_t w[] = {
        BTI, STP, ADRP, LDR, ADD, BR, NOP, NOP,
        BTI, ADRP, LDR, ADD, AUT, BR,
        ADRP, LDR, ADD, AUT, BR, NOP,
    };
    size_t n = sizeof(w) / sizeof(w[0]);
    assert_int_equal(plt_stub_cfa_sigsafe(w, n, 0), 0);
    assert_int_equal(plt_stub_cfa_sigsafe(w, n, 1), 0);
    for (size_t i = 2; i <= 5; i++)
        assert_int_equal(plt_stub_cfa_sigsafe(w, n, i), 16);
    for (size_t i = 8; i <= 18; i++)
        assert_int_equal(plt_stub_cfa_sigsafe(w, n, i), 0);
    assert_int_equal(plt_stub_cfa_sigsafe(w, n, 19), -1);
}

/* A function's code, and a stub cut off by the end of what was given. */
static void test_not_stubs(void **state)
{
    (void)state;
    static const uint32_t f[] = {
        0xd503233fu, 0xa9ba7bfdu, 0x910003fdu, ADRP, 0xf9400000u, ADD, BR, RET,
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        assert_int_equal(plt_stub_cfa_sigsafe(f, sizeof(f) / sizeof(f[0]), i), -1);
    for (size_t n = 9; n < 12; n++) /* the entry at 8 without its br */
        assert_int_equal(plt_stub_cfa_sigsafe(plain, n, 8), -1);
    /* the entry's last words, without its adrp */
    assert_int_equal(plt_stub_cfa_sigsafe(plain + 9, 3, 2), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_bti_pac),
        cmocka_unit_test(test_not_stubs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
