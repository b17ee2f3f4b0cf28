/* fetch.c — profile sources: files now, URLs through the fetch_url hook. */
#include "tool/fetch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/decode.h"

bool fetch_is_url(const char *source, int seconds, char **url)
{
    *url = NULL;
    /* pprof: a URL needs a host; "host:port/path" is tried as http://. A
     * plain path (no scheme, or file:) is a file. */
    const char *p = strstr(source, "://");
    const char *host;
    bool explicit = false;
    if (p) {
        for (const char *c = source; c < p; c++)
            if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') &&
                !(c > source && ((*c >= '0' && *c <= '9') || *c == '+' || *c == '-' || *c == '.')))
                return false;
        if (strncmp(source, "file://", 7) == 0)
            return false;
        host = p + 3;
        explicit = true;
    } else {
        /* "name:port..." parses as scheme "name" without a host: retried
         * as http://source. */
        const char *colon = strchr(source, ':');
        const char *slash = strchr(source, '/');
        if (!colon || (slash && slash < colon) || colon == source)
            return false;
        host = source;
    }
    if (*host == '/' || *host == '\0')
        return false;
    char buf[4096];
    if (explicit)
        snprintf(buf, sizeof(buf), "%s", source);
    else
        snprintf(buf, sizeof(buf), "http://%s", source);
    if (seconds > 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof(buf) - l, "%cseconds=%d", strchr(buf, '?') ? '&' : '?', seconds);
    }
    *url = strdup(buf);
    return *url != NULL;
}

int fetch_url(const char *url, int timeout, profile_t **out, char *err, size_t errlen)
{
    (void)timeout;
    *out = NULL;
    snprintf(err, errlen, "fetching %s: HTTP sources are not supported yet", url);
    return -ENOTSUP;
}

int fetch_profile(const char *source, int seconds, int timeout, profile_t **out, char *err,
                  size_t errlen)
{
    char *url;
    if (fetch_is_url(source, seconds, &url)) {
        int rc = fetch_url(url, timeout, out, err, errlen);
        free(url);
        return rc;
    }
    return profile_read_file(source, out, err, errlen);
}
