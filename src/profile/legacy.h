/* legacy.h — the pre-protobuf profile formats that go tool pprof 1.19 still
 * reads, converted to profile_t the way its legacy_profile.go does:
 *   - text heap profiles: Go's ?debug=1 form ("heap profile: ... @ heap/N",
 *     heap_v2, heapz_v2), gperftools' HEAPPROFILE form ("@ heapprofile"),
 *     growthz and fragmentationz;
 *   - the gperftools/profilez binary CPU profile (32/64-bit, either order);
 *   - Go count profiles ("goroutine profile: total N", threadcreate);
 *   - contention profiles ("--- contentionz", Go's "--- mutex:" and
 *     "--- contention:");
 * each optionally followed by a memory map ("--- Memory map: ---" or
 * "MAPPED_LIBRARIES:", /proc/self/maps lines or the brief form).
 *
 * No symbol information is read (pprof ignores the "#" lines too); the
 * result has addresses and mappings only, and drop_frames/keep_frames set
 * as pprof's addLegacyFrameInfo does.
 *
 * Threads: no global state.
 */
#ifndef CPROF_LEGACY_H
#define CPROF_LEGACY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* Returned when no legacy parser recognizes the input (the message then
 * says so); any other negative value means a parser recognized its format
 * and found an error. */
#define LEGACY_UNRECOGNIZED (-ENOMSG)

/* Parses a legacy profile; on success *out is validated and indexed. */
int legacy_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen);

#endif
