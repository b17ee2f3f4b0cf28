/* err.c — error formatting and array growth (see err.h). */
#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int err_fmt(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int err_grow_slow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem)
            return -ENOMEM;
        nc *= 2;
    }
    void *na = realloc(*arr, nc * elem);
    if (!na)
        return -ENOMEM;
    *arr = na;
    *cap = nc;
    return 0;
}
