/* path.h — slash-separated file names as Go's path/filepath reads them on
 * Unix, so that the names cprof prints ("File: prog", "[libc.so.6]",
 * "x.c:12") and groups by are those go tool pprof prints: pprof calls
 * filepath.Base and filepath.Clean on mapping and source file names.
 * Pure functions; path_base allocates nothing and may run anywhere, signal
 * handlers included; path_clean calls malloc. */
#ifndef CPROF_BASE_PATH_H
#define CPROF_BASE_PATH_H

#include <stddef.h>

/* Go's filepath.Base: the last element of path, trailing slashes dropped;
 * "." for "" and "/" for a path of slashes only. The result points into
 * path when path does not end in '/' (the usual case, nothing copied),
 * else into buf (n > 0 bytes; a longer element is truncated) or at a
 * constant. */
const char *path_base(const char *path, char *buf, size_t n);

/* Go's filepath.Clean, malloc'd: DWARF names such as "./x.c" (from
 * -fdebug-prefix-map=$PWD=.) or "dir/../x.c" read and group as pprof
 * prints them. "." for ""; NULL when out of memory. */
char *path_clean(const char *path);

#endif
