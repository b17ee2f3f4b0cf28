/* list.h — source file lookup for -list: pprof's trimPath heuristics and
 * the search of relative paths along -source_path and its parents. */
#ifndef CPROF_TOOL_LIST_H
#define CPROF_TOOL_LIST_H

#include <stdio.h>

/* pprof's trimPath: strips configured (colon-separated) prefixes, the
 * /proc/self/cwd prefixes, or — without trim_path — everything up to
 * "/<basename of a search dir>/". Returns a pointer into path. */
const char *list_trim_path(const char *path, const char *trim_path, const char *search_path);

/* Opens a profile's source path as pprof does; NULL with a message in err
 * (pprof's wording) when not found. */
FILE *list_open_source(const char *path, const char *search_path, const char *trim_path,
                       char *err, size_t errlen);

#endif
