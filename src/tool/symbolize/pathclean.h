/* pathclean.h — Go's filepath.Clean, so that DWARF file names such as
 * "./x.c" (from -fdebug-prefix-map=$PWD=.) or "dir/../x.c" read and group
 * as go tool pprof prints them. Used by symbolization and the graph. */
#ifndef CPROF_PATHCLEAN_H
#define CPROF_PATHCLEAN_H

/* The cleaned path, malloc'd ("." for ""); NULL when out of memory. */
char *path_clean(const char *path);

#endif
