/* base64.h — standard base64 (RFC 4648, padded) encoding, for credentials
 * sent in HTTP headers (the runtime's push client's Basic auth). Pure, no
 * allocation: safe anywhere. (The server's decoder is query.h's.) */
#ifndef CPROF_BASE_BASE64_H
#define CPROF_BASE_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* Encodes in[0..len) into out, NUL-terminated; false when out (which needs
 * 4 * ((len + 2) / 3) + 1 bytes) is too small. */
bool base64_encode(const void *in, size_t len, char *out, size_t outlen);

#endif
