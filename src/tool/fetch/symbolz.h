/* symbolz.h — remote symbolization, pprof's symbolz package: the
 * addresses of mappings that local symbolization left without function
 * names are POSTed ("0x1a2b+0x1c3d...") to the symbol URL next to the URL
 * the profile was fetched from (/debug/pprof/symbol for /debug/pprof/...,
 * else /symbolz), and the "0xADDR name" lines of the answer become
 * Functions (pprof-format.md §8). The in-process server of libcprof-http.so
 * answers it from the program's symbol tables, as net/http/pprof does.
 *
 * The driver collects, for every profile fetched over HTTP, which mapping
 * (by build id, else file name, else the URL itself) came from which URL
 * at which start address (pprof's MappingSources), before merging; after
 * local symbolization it calls symbolz_profile, then symbolz_unsource.
 *
 * Nothing here prints; the POST goes through a caller's function, so tests
 * need no network. */
#ifndef CPROF_TOOL_SYMBOLZ_H
#define CPROF_TOOL_SYMBOLZ_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

typedef struct {
    char *key;       /* the mapping's build id, else its file (else the URL) */
    char *url;       /* the URL its profile was fetched from */
    uint64_t start;  /* its start address in that profile */
    long timeout_ms; /* for the POST */
} symbolz_source_t;

typedef struct {
    symbolz_source_t *v;
    size_t n, cap;
} symbolz_sources_t;

/* pprof's collectMappingSources: records p's mappings as fetched from url.
 * Mappings with neither build id nor file get url as their file (so that
 * they can be symbolized remotely, legacy Go profiles for one) until
 * symbolz_unsource. 0 or -ENOMEM. */
int symbolz_collect(profile_t *p, const char *url, long timeout_ms, symbolz_sources_t *s);
void symbolz_sources_free(symbolz_sources_t *s);

/* The symbolz URL for a profile URL (pprof's symbolz()): malloc'd, or NULL
 * when url has no host. */
char *symbolz_url(const char *url);

/* POSTs body to url; the whole answer in *resp (malloc'd). 0 or negative
 * errno with one line in err. */
typedef int (*symbolz_post_fn)(const char *url, const char *body, size_t len, long timeout_ms,
                               char **resp, size_t *resplen, char *err, size_t errlen);

/* pprof's symbolz.Symbolize under the -symbolize mode (NULL = default):
 * nothing for "none", "local", "fastlocal"; "force" (or demangle=X) also
 * redoes mappings that have functions. Names found are demangled as the
 * mode says. A failed POST or an unusable answer is an error (pprof:
 * "ran out of options"). 0 or negative errno with err set. */
int symbolz_profile(profile_t *p, const char *mode, const symbolz_sources_t *s,
                    symbolz_post_fn post, char *err, size_t errlen);

/* pprof's unsourceMappings: file names that are URLs (set by
 * symbolz_collect) are cleared again on mappings without a build id. */
void symbolz_unsource(profile_t *p);

#endif
