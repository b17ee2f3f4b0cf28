/* url.h — the small text helpers of Go's net/url that both the server
 * (query parameters) and the tool (fetching, regexp escapes) need.
 * Pure functions, no allocation: safe anywhere, signal handlers included. */
#ifndef CPROF_BASE_URL_H
#define CPROF_BASE_URL_H

#include <stdbool.h>
#include <stddef.h>

/* The value of one hexadecimal digit, or -1. */
int url_hex_digit(int c);

/* Go's url.QueryUnescape of s[0..len) into out (room for len + 1 bytes):
 * '+' is a space, %XX a byte; false on a malformed escape. */
bool url_unescape(const char *s, size_t len, char *out);

/* Go's url.QueryEscape of s into out, NUL-terminated: letters, digits and
 * "-_.~" stay, a space is '+', any other byte %XX. false when out is too
 * small (3 * strlen(s) + 1 bytes always suffice). */
bool url_query_escape(const char *s, char *out, size_t outlen);

#endif
