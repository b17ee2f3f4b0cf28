/* webwindow.c — fetching a window of the polled process, one kept. */
#include "tool/ui/webwindow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "tool/driver/driver.h"
#include "tool/fetch/fetch.h"

static struct {
    char *spec; /* of p */
    profile_t *p;
} last;

bool webwindow_possible(const source_opts_t *src)
{
    if (src->n_sources != 1 || src->poll <= 0 || src->base)
        return false;
    fetch_target_t t;
    if (!fetch_adjust_url(src->sources[0], 0, 0, &t))
        return false;
    /* the path, without the query: the recorder answers on heap only */
    size_t n = strcspn(t.url, "?#");
    bool heap = n >= 5 && memcmp(t.url + n - 5, "/heap", 5) == 0;
    fetch_target_free(&t);
    return heap;
}

/* A spec is START,END or LAST, each a Go duration or unix seconds: only
 * digits, letters of units, '.' and one ','; anything else would change
 * the URL. */
static bool spec_ok(const char *spec)
{
    size_t commas = 0;
    for (const char *c = spec; *c; c++) {
        if (*c == ',')
            commas++;
        else if (!strchr("0123456789.hmsun", *c))
            return false;
    }
    return *spec && commas <= 1 && strlen(spec) < 64;
}

/* The line of the driver's messages that says why the fetch failed: the
 * first that is not the "Fetching ..." note. */
static void reason(const char *msgs, char *msg, size_t msglen, const char *spec)
{
    const char *l = msgs;
    while (l && *l && strncmp(l, "Fetching profile", 16) == 0) {
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    size_t n = l ? strcspn(l, "\n") : 0;
    snprintf(msg, msglen, "The window %s could not be fetched: %.*s", spec, (int)(n ? n : 7),
             n ? l : "unknown");
}

int webwindow_get(const source_opts_t *src, const char *spec, profile_t **out, char *msg,
                  size_t msglen)
{
    *out = NULL;
    if (!webwindow_possible(src)) {
        snprintf(msg, msglen, "A time window needs a live process: poll its /debug/pprof/heap "
                              "(cprof -http=:8080 -poll 1 http://HOST:PORT/debug/pprof/heap) "
                              "while it runs with CPROF_RECORD; these profiles come from files.");
        return -ENODATA;
    }
    if (!spec_ok(spec)) {
        snprintf(msg, msglen, "invalid window \"%.64s\": START,END or LAST, each a duration "
                              "before now (90s) or unix seconds",
                 spec);
        return -EINVAL;
    }
    /* Only unix times name the same window twice: "5m" moves with now. */
    bool absolute = strspn(spec, "0123456789.,") == strlen(spec);
    if (absolute && last.p && strcmp(last.spec, spec) == 0) {
        *out = last.p;
        return 0;
    }
    sbuf_t url = {0};
    sb_puts(&url, src->sources[0]);
    sb_puts(&url, strchr(src->sources[0], '?') ? "&window=" : "?window=");
    sb_puts(&url, spec);
    if (url.oom) {
        sb_free(&url);
        snprintf(msg, msglen, "out of memory");
        return -ENODATA;
    }
    char *name = (char *)sb_cstr(&url); /* sources are char * */
    source_opts_t one = *src;
    one.sources = &name;
    one.seconds = 0; /* a window, not a delta */
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&msgs, &mlen);
    profile_t *p = mf ? driver_fetch_with(&one, mf) : NULL;
    if (mf)
        fclose(mf);
    char *copy = p ? strdup(spec) : NULL;
    if (!p || !copy) {
        if (p)
            snprintf(msg, msglen, "out of memory");
        else
            reason(msgs, msg, msglen, spec);
        profile_free(p);
    } else {
        webwindow_free();
        last.p = p;
        last.spec = copy;
    }
    free(msgs);
    sb_free(&url);
    *out = copy ? p : NULL;
    return copy ? 0 : -ENODATA;
}

void webwindow_free(void)
{
    profile_free(last.p);
    free(last.spec);
    last.p = NULL;
    last.spec = NULL;
}
