/* duration.h — Go's time.ParseDuration for the runtime's settings and
 * queries (CPROF_RECORD=10m, /debug/pprof/heap?window=90s,30s): a sequence
 * of decimal numbers, each with a unit (ns us µs ms s m h), "1h30m",
 * "1.5s"; no sign (a negative duration means nothing here). Pure: no
 * allocation, safe anywhere. */
#ifndef CPROF_BASE_DURATION_H
#define CPROF_BASE_DURATION_H

#include <stdbool.h>
#include <stdint.h>

/* The duration s names, in nanoseconds, into *ns; false if s is not a
 * duration or overflows int64. "0" alone is 0, as Go's. */
bool duration_parse(const char *s, int64_t *ns);

#endif
