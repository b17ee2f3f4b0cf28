/* pltstub.c — aarch64 PLT stubs from their instruction words (see pltstub.h). */
#include "pltstub.h"

#include <stdbool.h>

/* The instructions (A64 encodings; immediates masked out). */
#define BTI_C 0xd503245fu         /* bti c */
#define STP_X16_X30 0xa9bf7bf0u   /* stp x16, x30, [sp, #-16]! */
#define ADRP_X16 0x90000010u      /* adrp x16, page: mask 0x9f00001f */
#define LDR_X17_X16 0xf9400211u   /* ldr x17, [x16, #off]: mask 0xffc003ff */
#define ADD_X16_X16 0x91000210u   /* add x16, x16, #off: mask 0xffc003ff */
#define AUTIA1716 0xd503219fu
#define AUTIB1716 0xd50321dfu
#define BR_X17 0xd61f0220u

/* The stub whose adrp is code[a]: its words [*lo, *hi), and where in it
 * PLT0's stp is (SIZE_MAX if not PLT0). */
static bool stub_at(const uint32_t *code, size_t n, size_t a, size_t *lo, size_t *hi,
                    size_t *stp)
{
    if (a + 3 >= n || (code[a] & 0x9f00001fu) != ADRP_X16 ||
        (code[a + 1] & 0xffc003ffu) != LDR_X17_X16 || (code[a + 2] & 0xffc003ffu) != ADD_X16_X16)
        return false;
    size_t b = a + 3;
    if (code[b] == AUTIA1716 || code[b] == AUTIB1716)
        b++;
    if (b >= n || code[b] != BR_X17)
        return false;
    *hi = b + 1;
    *lo = a;
    *stp = SIZE_MAX;
    if (*lo > 0 && code[*lo - 1] == STP_X16_X30)
        *stp = --*lo;
    if (*lo > 0 && code[*lo - 1] == BTI_C)
        --*lo;
    return true;
}

int plt_stub_cfa_sigsafe(const uint32_t *code, size_t n, size_t at)
{
    if (at >= n)
        return -1;
    /* The adrp lies at most two words after the pc (bti c, stp) and at
     * most four before it (adrp, ldr, add, aut, br). */
    size_t first = at >= 4 ? at - 4 : 0;
    for (size_t a = first; a <= at + 2 && a < n; a++) {
        size_t lo, hi, stp;
        if (stub_at(code, n, a, &lo, &hi, &stp) && at >= lo && at < hi)
            return stp != SIZE_MAX && at > stp ? 16 : 0;
    }
    return -1;
}
