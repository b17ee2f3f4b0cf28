/* measure.h — units of sample values: scaling between units and the text
 * forms reports print, as pprof's measurement package does.
 *
 * Units are recognised by family (bytes: B kB MB GB TB PB, powers of 1024;
 * time: ns us ms s hrs; GCU), by alias and case-insensitively, with a
 * trailing "s" ignored ("bytes", "nanoseconds"). Pure functions; no state. */
#ifndef CPROF_TOOL_MEASURE_H
#define CPROF_TOOL_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Scales value from unit `from` to unit `to` ("minimum"/"auto" pick the
 * largest unit keeping the value >= 1). *unit receives the unit to print,
 * "" when uninteresting (counts). Returns the scaled value. */
double measure_scale(int64_t value, const char *from, const char *to, const char **unit);

/* "%.2f" of the scaled value with a ".00" suffix dropped, plus the unit;
 * "0" for zero. Writes into buf (64 bytes is enough). */
const char *measure_scaled_label(char *buf, size_t n, int64_t value, const char *from,
                                 const char *to);
/* measure_scaled_label(value, unit, "auto"). */
const char *measure_label(char *buf, size_t n, int64_t value, const char *unit);

/* Percentage of total as pprof prints it: "  100%", "12.34%", " 0.5%".
 * buf needs 32 bytes. */
const char *measure_percentage(char *buf, size_t n, int64_t value, int64_t total);

/* True if two sample value types are compatible (merge, -base): same type
 * name modulo a trailing "s", and units of one family. */
bool measure_compatible(const char *type1, const char *unit1, const char *type2,
                        const char *unit2);

/* Go's time.Duration.String() ("3.113s", "1m30s", "250ms", "0s"). */
const char *measure_duration_string(char *buf, size_t n, int64_t nanos);

#endif
