/* webviews.h — the views of the web UI: each turns a request (view, URL
 * parameters, profile) into a response, through the driver's report
 * pipeline (driver_report_with) so that every setting means what it means
 * on the command line. Messages the pipeline prints (a bad regexp, "Focus
 * expression matched no samples") are shown on the page as well. */
#ifndef CPROF_TOOL_WEBVIEWS_H
#define CPROF_TOOL_WEBVIEWS_H

#include "tool/ui/webpage.h"

/* Fills r (status, type, body) for q->view. Never fails: errors become a
 * page with the message. */
void webviews_render(const web_req_t *q, web_resp_t *r);

#endif
