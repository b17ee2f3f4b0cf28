/* decode.h — reading profiles: gzip, the profile.proto wire format, and
 * strict validation of the model. parse.h chooses between this decoder and
 * the legacy text/binary formats (legacy.h).
 *
 * Everything here takes untrusted bytes: any input ends in either a valid,
 * indexed profile_t or a negative errno plus ONE human-readable line in the
 * caller's buffer. Memory use is bounded by a constant factor of the input
 * size (after inflating, itself bounded by PROFILE_MAX_INFLATED), and is
 * the decoded profile's plus a window of a few top-level fields when
 * streaming (profile_decode_stream); there is no
 * recursion deeper than the fixed nesting of profile.proto.
 *
 * Threads: no global state; each call works on its own profile.
 *
 * Return codes: -EINVAL malformed input, -ENODATA empty input, -EFBIG
 * inflated size over the limit, -ENOMEM. The message says which.
 */
#ifndef CPROF_DECODE_H
#define CPROF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Largest decompressed profile accepted (gzip bombs stop here). */
#define PROFILE_MAX_INFLATED ((size_t)1 << 30)

/* Decodes raw (uncompressed) profile.proto bytes, validates and indexes. */
int profile_decode_proto(const uint8_t *data, size_t len, profile_t **out, char *err,
                         size_t errlen);

/* The same; on failure *concat tells whether it failed because the bytes
 * are concatenated profiles (a second nonzero time_nanos, as Go's reader
 * sees them): parse.h then tries no legacy parser. */
int profile_decode_proto_concat(const uint8_t *data, size_t len, profile_t **out, char *err,
                                size_t errlen, bool *concat);

typedef struct zread zread_t;

/* Why profile_decode_stream failed, for what parse.h tries next. */
typedef enum {
    PROFILE_DECODE_OTHER,  /* the bytes are no valid profile.proto */
    PROFILE_DECODE_CONCAT, /* concatenated profiles (see above) */
    PROFILE_DECODE_SOURCE, /* reading or inflating failed: src->fail says which */
} profile_decode_fail_t;

/* profile_decode_proto of the bytes src gives, decoded as they come: the
 * whole input (inflated) is never held. Errors of src take precedence over
 * decoding errors (the input is read to its end on a decoding error), as
 * when the whole input was read first. */
int profile_decode_stream(zread_t *src, profile_t **out, char *err, size_t errlen,
                          profile_decode_fail_t *why);

/* profile_decode_stream into the storage of reuse (taken, freed on
 * failure; NULL: a new profile), emptied with profile_clear. */
int profile_decode_stream_reuse(zread_t *src, profile_t *reuse, profile_t **out, char *err,
                                size_t errlen, profile_decode_fail_t *why);

/* Checks the invariants every consumer relies on: strings[0] == "", every
 * string index in range, sample types present when samples are, ids of
 * mappings/locations/functions nonzero and unique, every location id of a
 * sample and every function id of a line existing, every nonzero
 * mapping_id existing. 0 or -EINVAL (or -ENOMEM) with a message. */
int profile_validate(const profile_t *p, char *err, size_t errlen);

/* Inflates a gzip stream (several members are concatenated, as Go's reader
 * does) into a new malloc'd buffer of at most `limit` bytes. 0, -EINVAL
 * (corrupt), -EFBIG or -ENOMEM. */
int profile_gunzip(const uint8_t *data, size_t len, size_t limit, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen);

#endif
