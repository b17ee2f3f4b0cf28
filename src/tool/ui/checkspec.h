/* checkspec.h — the pure parts of `cprof check` (check.h): a -max
 * specification TYPE[:SETTING=VALUE]...=LIMIT split into its sample type,
 * report settings (options.c's, applied with config_set) and limit; a
 * limit's text ("64MB", "1.5GB", "2s", "1000") in a sample type's unit;
 * a tolerance ("5%"). No I/O; errors as a message in err. */
#ifndef CPROF_TOOL_CHECKSPEC_H
#define CPROF_TOOL_CHECKSPEC_H

#include <stddef.h>

#include "tool/report/options.h"

typedef struct {
    const char *spec; /* as given (not owned) */
    char *name;       /* spec without its limit: "alloc_objects:focus=x" */
    config_t cfg;     /* defaults, with sample_index and the settings */
    char *limit_text; /* "64MB" */
} checkspec_t;

/* Parses spec into s (which checkspec_free releases, also after an
 * error). 0, -EINVAL or -ENOMEM with a message naming spec in err. */
int checkspec_parse(checkspec_t *s, const char *spec, char *err, size_t errlen);
void checkspec_free(checkspec_t *s);

/* A limit's text in unit (the sample type's: "bytes", "nanoseconds",
 * "count"): a number >= 0 and an optional unit of the same family
 * (measure.h). 0, or -EINVAL. */
int checkspec_limit(const char *text, const char *unit, double *out);

/* A tolerance in percent: "5%", "5", "0.5%"; 0 or -EINVAL. */
int checkspec_tolerance(const char *text, double *pct);

#endif
