/* strs.c — sorting arrays of C strings (see strs.h). */
#include "strs.h"

#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void strs_sort(void *v, size_t n)
{
    if (n > 1) /* qsort(NULL, 0, ...) is undefined */
        qsort(v, n, sizeof(const char *), cmp);
}
