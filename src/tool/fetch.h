/* fetch.h — getting one profile source: a file today; URLs (the
 * /debug/pprof/ endpoints, with -seconds and -timeout) are recognized with
 * pprof's rules and go through fetch_url, the hook for the HTTP client. */
#ifndef CPROF_TOOL_FETCH_H
#define CPROF_TOOL_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"

/* True if source names a URL (http://host/..., host:port/path) as pprof's
 * adjustURL decides; *url then receives the URL to fetch (malloc'd). */
bool fetch_is_url(const char *source, int seconds, char **url);

/* Reads and decodes source. Messages are pprof's ("open X: no such file or
 * directory", "parsing profile: ..."). 0 or negative errno. */
int fetch_profile(const char *source, int seconds, int timeout, profile_t **out, char *err,
                  size_t errlen);

/* Fetches a profile over HTTP. Not implemented yet: -ENOTSUP. */
int fetch_url(const char *url, int timeout, profile_t **out, char *err, size_t errlen);

#endif
