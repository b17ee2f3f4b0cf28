/* web.h — cprof -http=HOST:PORT: pprof's web UI, served by the tool itself
 * with libmicrohttpd (pprof's internal/driver/webui.go).
 *
 * Paths are pprof's: / and anything outside /ui/ redirect to /ui/ (with the
 * query); /ui/ (graph), /ui/top, /ui/flamegraph, /ui/peek, /ui/source,
 * /ui/disasm, /ui/download, plus /ui/memory (memory over time, cprof's own).
 * An unknown /ui/ path is a 404 page; bad parameters (a regexp that does
 * not compile, a sample index that does not exist) a 400 page with pprof's
 * message. Pages embed their own script and style: nothing is fetched from
 * elsewhere, so the UI works offline.
 *
 * Bound to a loopback address (the default: -http=:8080 means localhost),
 * the server answers only loopback clients whose Host header names a
 * loopback host (no DNS rebinding). Requests are served one at a time by
 * the server's thread; the calling thread waits for SIGINT/SIGTERM/SIGHUP
 * and, with -poll, refetches the sources every poll seconds (the views then
 * show the newest profile, and the memory view the whole series). */
#ifndef CPROF_TOOL_WEB_H
#define CPROF_TOOL_WEB_H

#include "profile/profile.h"
#include "tool/driver/flags.h"
#include "tool/report/options.h"

/* Serves p (taken: freed before returning) with cfg (the command line's
 * settings, the base of every page) until a signal ends it. src: the
 * sources (-http, -no_browser, -base, -poll, and for the memory view each
 * source on its own). Prints "Serving web UI on http://HOST:PORT" on
 * stderr once listening. 0 after a signal, -1 after a message when the
 * server could not start. */
int web_serve(profile_t *p, const config_t *cfg, const source_opts_t *src);

/* pprof's getHostAndPort: splits -http's value; an empty host is
 * "localhost", an empty port 0 (any free port). 0, or -1 with a message. */
int web_split_hostport(const char *hostport, char *host, size_t hostlen, int *port, char *err,
                       size_t errlen);

#endif
