/* err.h — the shared small helpers of error paths (base): formatting a
 * message into a caller's buffer, and growing an array.
 *
 * Both use libc functions that are not async-signal-safe (vsnprintf,
 * realloc): not for the runtime's hooks or signal handlers. */
#ifndef CPROF_BASE_ERR_H
#define CPROF_BASE_ERR_H

#include <stddef.h>

/* Formats the message into err (when err and errlen are set) and returns
 * rc, so that an error path is one statement: return err_fmt(...). */
int err_fmt(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* err_grow when need > *cap. */
int err_grow_slow(void **arr, size_t *cap, size_t need, size_t elem);

/* Makes room for need elements of size elem in *arr (capacity *cap),
 * doubling from 16. 0, or -ENOMEM with *arr unchanged. Inline: a decoder
 * or a merge calls it for each element, nearly always with room. */
static inline int err_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : err_grow_slow(arr, cap, need, elem);
}

#endif
