/* weblife.h — the web UI's lifetime histogram (/ui/lifetimes): for a
 * lifetime profile (CPROF_LIFETIME_PROFILE, /debug/pprof/lifetimes,
 * docs/triggers.md), how long the objects of the selection lived. Each
 * sample carries the numeric label lifetime (WEB_LIFETIME_LABEL: the lower
 * edge of its sixteenth-of-an-octave bin, ns); the view sums the sample
 * value (objects unless the URL's si says otherwise) of the samples that
 * pass the request's filters into octaves (2^k ns <= lifetime < 2^(k+1)),
 * live objects (freed=live: right-censored) apart, and lists the
 * allocating functions, each linked to its own histogram. The selection
 * comes as any view's does: the focus (f) that the View menu's links
 * carry, or any other filter of the URL.
 *
 * Called by webviews_render on the server's thread. */
#ifndef CPROF_TOOL_WEBLIFE_H
#define CPROF_TOOL_WEBLIFE_H

#include "tool/ui/webpage.h"

void weblife_view(const web_req_t *q, web_resp_t *r);

#endif
