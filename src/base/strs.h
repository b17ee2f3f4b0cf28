/* strs.h — arrays of C strings: sorting them as Go's sort.Strings does
 * (bytewise), which the reports use for labels, tags and option lists.
 * Calls qsort: not for signal handlers. */
#ifndef CPROF_BASE_STRS_H
#define CPROF_BASE_STRS_H

#include <stddef.h>

/* Sorts v, an array of n char * or const char *, bytewise; v may be NULL
 * when n is 0. */
void strs_sort(void *v, size_t n);

#endif
