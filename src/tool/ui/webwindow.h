/* webwindow.h — time windows of a live process for the web UI: the
 * flight recorder's /debug/pprof/heap?window=START,END (docs/triggers.md)
 * of the process whose heap the memory view polls. Dragging over the
 * memory view's chart asks for ?window=START,END (unix seconds); every
 * other view then shows that window's profile, fetched through the driver
 * as the polled one is (symbolized, saved under PPROF_TMPDIR).
 *
 * The last window fetched is kept: the views of one window given in unix
 * times (flame graph, top, the menu's links) fetch it once; one relative
 * to now ("5m") is fetched each time.
 *
 * Not thread-safe: only the web server's thread calls it. Nothing here
 * prints but the driver's usual fetch lines on stderr. */
#ifndef CPROF_TOOL_WEBWINDOW_H
#define CPROF_TOOL_WEBWINDOW_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"
#include "tool/driver/flags.h"

/* Whether src can answer windows: one source, an HTTP URL of a heap
 * endpoint (".../heap"), polled (-poll). */
bool webwindow_possible(const source_opts_t *src);

/* The window spec's profile in *out (borrowed: valid until the next call
 * or webwindow_free): 0; else one line saying why in msg and -EINVAL (the
 * spec is malformed), or -ENODATA (the source is no live heap, or the
 * process answered an error, e.g. without CPROF_RECORD "no flight
 * recorder: set CPROF_RECORD"; or out of memory). */
int webwindow_get(const source_opts_t *src, const char *spec, profile_t **out, char *msg,
                  size_t msglen);

void webwindow_free(void);

#endif
