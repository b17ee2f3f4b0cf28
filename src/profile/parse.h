/* parse.h — reading a profile of any format pprof reads: the entry points
 * that choose between the profile.proto decoder (decode.h) and the legacy
 * text/binary parsers (legacy.h), so that neither of those depends on the
 * other's choice.
 *
 * Untrusted bytes, as decode.h says: a valid, indexed profile_t or a
 * negative errno plus ONE human-readable line in the caller's buffer.
 *
 * Threads: no global state; each call works on its own profile.
 *
 * Return codes: -EINVAL malformed input (any format), -ENODATA empty input,
 * -EFBIG inflated size over the limit, -ENOMEM, or the errno of a failed
 * read (profile_read_file). The message says which.
 */
#ifndef CPROF_PARSE_H
#define CPROF_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Parses a profile from bytes: gzip is sniffed (1f 8b) and inflated, then
 * the bytes are decoded as profile.proto; if that fails (for another reason
 * than "empty input" or "concatenated profiles"), the legacy parsers are
 * tried. The result is validated and indexed (profile_index). */
int profile_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen);

/* Reads the whole file and profile_parse()s it; messages start with the
 * path. */
int profile_read_file(const char *path, profile_t **out, char *err, size_t errlen);

/* Another reader for a gzip'd file's bytes: start makes *out give what z
 * gives (z read on a second thread while the caller decodes, say); end
 * stops that, before z is closed. start's failure: z is read here. */
struct zread;
typedef struct {
    int (*start)(void *ctx, struct zread *z, struct zread *out);
    void (*end)(void *ctx);
    void *ctx;
} profile_inflater_t;

/* profile_read_file with a gzip'd file's bytes from inflater (NULL: read
 * here). The same result and messages. */
int profile_read_file_with(const char *path, const profile_inflater_t *inflater,
                           profile_t **out, char *err, size_t errlen);

/* profile_read_file_with decoding into reuse's storage (taken, freed on
 * failure; NULL: none): profile_decode_stream_reuse. */
int profile_read_file_reuse(const char *path, const profile_inflater_t *inflater,
                            profile_t *reuse, profile_t **out, char *err, size_t errlen);

#endif
