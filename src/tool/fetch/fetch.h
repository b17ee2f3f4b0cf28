/* fetch.h — getting profile sources the way go tool pprof does: files, and
 * URLs fetched over HTTP(S) with libcurl (the /debug/pprof/ endpoints of a
 * Go program or of a program running libcprof-http.so), with -seconds and
 * -timeout applied as pprof's adjustURL applies them; saving what was
 * fetched under PPROF_TMPDIR (else $HOME/pprof) as pprof names it; and the
 * POST of a symbolz request (symbolz.h).
 *
 * Nothing here prints: errors come back as one line in err, warnings in a
 * caller's buffer, for the driver to show. Bodies are read into memory up
 * to FETCH_MAX_BODY bytes and decoded by profile_parse (parse.h), so a
 * remote body is as untrusted as a file and ends the same way. */
#ifndef CPROF_TOOL_FETCH_H
#define CPROF_TOOL_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Largest response body accepted (the profile is decoded in memory). */
#define FETCH_MAX_BODY ((size_t)1 << 30)

typedef struct {
    char *url;       /* what to fetch (malloc'd) */
    long timeout_ms; /* limit of the whole request */
} fetch_target_t;

/* go tool pprof's adjustURL (cmd/pprof): when source names a URL
 * ("http://host/path", "https+insecure://...", or "host:port/path",
 * retried with http://), fills t and returns true. An empty path becomes
 * /debug/pprof/profile; seconds > 0 sets the query parameter seconds
 * (replacing any), and the query is re-encoded with its keys sorted as Go's
 * url.Values.Encode does. timeout > 0 is the limit in seconds; otherwise
 * 1.5 times the seconds (of the flag, else of the URL's seconds=) or 60 s.
 * False for files (no host: "/path", "name.pb.gz", "file:///x"). */
bool fetch_adjust_url(const char *source, int seconds, int timeout, fetch_target_t *t);
void fetch_target_free(fetch_target_t *t);

/* One fetched body, or the reason there is none. */
typedef struct {
    uint8_t *data;
    size_t len;
    int rc;        /* 0, or negative errno with err set */
    char err[512]; /* "http fetch: ...", "server response: 404 Not Found - ..." */
} fetch_body_t;

/* GETs the n targets concurrently (pprof fetches its sources in
 * parallel), each within its own timeout. out[i] receives the body of a
 * 200 response, or its error: the connection failure, the status with the
 * first line of a text body, a timeout, a body over FETCH_MAX_BODY. */
void fetch_get_all(const fetch_target_t *t, size_t n, fetch_body_t *out);
void fetch_body_free(fetch_body_t *b);

/* Decodes a fetched body: "parsing profile: ..." on failure. */
int fetch_parse_body(const fetch_body_t *b, profile_t **out, char *err, size_t errlen);

/* POSTs body (application/octet-stream) to url and returns the response
 * body of a 200 answer in *resp (malloc'd, NUL-terminated, *resplen bytes).
 * Errors: "http post URL: ..." in err, negative errno. */
int fetch_post(const char *url, const char *body, size_t len, long timeout_ms, char **resp,
               size_t *resplen, char *err, size_t errlen);

/* Reads and decodes a profile file; err does not repeat the path when the
 * caller prefixes it (the driver prints "PATH: err"). */
int fetch_file(const char *path, profile_t **out, char *err, size_t errlen);

/* fetch_file decoding into the storage of reuse (taken, freed on failure;
 * NULL: none), a profile done with (profile_clear). */
int fetch_file_reuse(const char *path, profile_t *reuse, profile_t **out, char *err,
                     size_t errlen);

/* fetch_file with a gzip'd file inflated on a second thread while this one
 * decodes (fetch/inflate.h): for a thread that has the other CPU to
 * itself. */
int fetch_file_ahead(const char *path, profile_t **out, char *err, size_t errlen);

/* pprof's setTmpDir: the first of $PPROF_TMPDIR, $HOME/pprof, $TMPDIR (or
 * /tmp) that exists or can be created, into dir. Each directory that cannot
 * be used adds "Could not use temp dir D: REASON\n" to warn. -1 if none. */
int fetch_tmpdir(char *dir, size_t dirlen, char *warn, size_t warnlen);

/* pprof's newTempFile: creates (O_EXCL) the first free
 * DIR/PREFIXnnnSUFFIX, nnn = 001..9999, names it in path and returns the
 * open descriptor, or a negative errno. */
int fetch_new_file(const char *dir, const char *prefix, const char *suffix, char *path,
                   size_t pathlen);

/* pprof's file name prefix for a saved profile: "pprof.BINARY.TYPE1.TYPE2."
 * (BINARY: base name of mapping[0]'s file, left out when empty). */
void fetch_save_prefix(const profile_t *p, char *prefix, size_t n);

/* Saves p (gzipped profile.proto) as DIR/pprof.<binary>.<types>.NNN.pb.gz
 * in fetch_tmpdir's directory; the file name in path. 0, or negative errno
 * with err set ("Could not save profile: ..." is the caller's). */
int fetch_save(const profile_t *p, char *path, size_t pathlen, char *warn, size_t warnlen,
               char *err, size_t errlen);

/* Go's time.Duration.String() of a whole number of milliseconds: "30s",
 * "1.5s", "1m30s", "2h0m0s". */
void fetch_go_duration(char *buf, size_t n, long long ms);

#endif
