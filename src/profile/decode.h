/* decode.h — reading profiles: gzip, the profile.proto wire format, strict
 * validation of the model, and the fallback to the legacy text/binary
 * formats (legacy.h).
 *
 * Everything here takes untrusted bytes: any input ends in either a valid,
 * indexed profile_t or a negative errno plus ONE human-readable line in the
 * caller's buffer. Memory use is bounded by a constant factor of the input
 * size (after inflating, itself bounded by PROFILE_MAX_INFLATED); there is no
 * recursion deeper than the fixed nesting of profile.proto.
 *
 * Threads: no global state; each call works on its own profile.
 *
 * Return codes: -EINVAL malformed input (any format), -ENODATA empty input,
 * -EFBIG inflated size over the limit, -ENOMEM, or the errno of a failed
 * read (profile_read_file). The message says which.
 */
#ifndef CPROF_DECODE_H
#define CPROF_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Largest decompressed profile accepted (gzip bombs stop here). */
#define PROFILE_MAX_INFLATED ((size_t)1 << 30)

/* Parses a profile from bytes: gzip is sniffed (1f 8b) and inflated, then
 * the bytes are decoded as profile.proto; if that fails (for another reason
 * than "empty input" or "concatenated profiles"), the legacy parsers are
 * tried. The result is validated and indexed (profile_index). */
int profile_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen);

/* Decodes raw (uncompressed) profile.proto bytes, validates and indexes. */
int profile_decode_proto(const uint8_t *data, size_t len, profile_t **out, char *err,
                         size_t errlen);

/* Checks the invariants every consumer relies on: strings[0] == "", every
 * string index in range, sample types present when samples are, ids of
 * mappings/locations/functions nonzero and unique, every location id of a
 * sample and every function id of a line existing, every nonzero
 * mapping_id existing. 0 or -EINVAL (or -ENOMEM) with a message. */
int profile_validate(const profile_t *p, char *err, size_t errlen);

/* Reads the whole file and profile_parse()s it; messages start with the
 * path. */
int profile_read_file(const char *path, profile_t **out, char *err, size_t errlen);

/* Inflates a gzip stream (several members are concatenated, as Go's reader
 * does) into a new malloc'd buffer of at most `limit` bytes. 0, -EINVAL
 * (corrupt), -EFBIG or -ENOMEM. */
int profile_gunzip(const uint8_t *data, size_t len, size_t limit, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen);

#endif
