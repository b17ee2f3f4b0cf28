/* query.h — the small parsers the endpoints need, each with the semantics
 * of the Go function that net/http/pprof calls, so that odd inputs get the
 * answers Go gives: url.ParseQuery + Values.Get, strconv.Atoi,
 * strconv.ParseUint(s, 0, 64), net/http's cleanPath; plus base64 and a
 * constant-time comparison for credentials.
 *
 * Pure functions, no global state; results that allocate come from malloc
 * (in the server thread, whose guard is set). */
#ifndef CPROF_HTTP_QUERY_H
#define CPROF_HTTP_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first value of key in a raw query string (the part after '?'), as
 * Go's url.Values.Get after url.ParseQuery: pairs split on '&', pairs with
 * a ';' or a bad %-escape skipped, '+' is a space. A new malloc'd string
 * ("" for "key" or "key="), or NULL when the key is absent. */
char *query_get(const char *raw, const char *key);

/* Query arguments a request may have (Go has no such limit, but its
 * MaxHeaderBytes bounds them; ours keep the server's per-connection memory
 * bounded). */
#define QUERY_MAX_ARGS 500

/* What makes a raw request URI (path?query) unacceptable before anything
 * decodes it: a %00 in the path or the query (decoded strings are C
 * strings), or more than QUERY_MAX_ARGS arguments. NULL when it is fine,
 * else a static phrase for a 400. */
const char *query_check_uri(const char *uri);

/* strconv.Atoi on 64 bits: optional sign, decimal digits, nothing else. */
bool query_atoi(const char *s, int64_t *out);

/* strconv.ParseUint(s, 0, 64) for s[0..len): 0x/0o/0b prefixes, a leading
 * 0 for octal, '_' between digits when there is a base prefix. */
bool query_parse_uint0(const char *s, size_t len, uint64_t *out);

/* Go's ServeMux cleanPath: a rooted path without "." and ".." elements or
 * repeated slashes, keeping a trailing slash. New malloc'd string. */
char *query_clean_path(const char *p);

/* Decodes standard base64 (padding optional) into out (NUL-terminated);
 * false on a bad character or when out is too small. */
bool query_base64_decode(const char *in, char *out, size_t outlen);

/* a == b, in time that depends on the lengths only. */
bool query_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
