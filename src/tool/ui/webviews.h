/* webviews.h — the views of the web UI: each turns a request (view, URL
 * parameters, profile) into a response, through the driver's report
 * pipeline (driver_report_with) so that every setting means what it means
 * on the command line. Messages the pipeline prints (a bad regexp, "Focus
 * expression matched no samples") are shown on the page as well. */
#ifndef CPROF_TOOL_WEBVIEWS_H
#define CPROF_TOOL_WEBVIEWS_H

#include <stdbool.h>

#include "tool/driver/driver.h"
#include "tool/ui/webpage.h"

/* Fills r (status, type, body) for q->view. Never fails: errors become a
 * page with the message. */
void webviews_render(const web_req_t *q, web_resp_t *r);

/* --- for views kept in files of their own (weblife.c) ------------------------ */

/* One report through the driver: its text output and its messages. */
typedef struct {
    char *out, *msgs;
    size_t out_len, msgs_len;
    int rc;
} webrun_t;
void webviews_run(profile_t *p, const config_t *cfg, const char *cmd, const char *param,
                  driver_gen_fn gen, void *arg, webrun_t *run);
void webviews_run_free(webrun_t *run);
/* The request's configuration, or false after a 400 page with pprof's
 * message. */
bool webviews_config(const web_req_t *q, web_resp_t *r, config_t *cfg);
/* The page for a report that failed: 400 with what the driver said. */
void webviews_failed(const web_req_t *q, web_resp_t *r, const webrun_t *run, const char *legend);

#endif
