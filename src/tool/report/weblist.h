/* weblist.h — annotated source with its assembly as a web page (pprof's
 * -weblist): for each function matching the report's symbol regexp, the
 * lines of its source file with their flat and cum, and under each line
 * that has instructions, shown on a click, those instructions with their
 * values (disasm.h supplies them, with the line objdump gives each). The
 * page is self-contained: its style and script are inline. */
#ifndef CPROF_TOOL_WEBLIST_H
#define CPROF_TOOL_WEBLIST_H

#include "base/sbuf.h"
#include "tool/report/report.h"

/* The functions' sections (no page around them), for the web UI's source
 * view, which supplies the style and script (weblist_css/weblist_js). */
int weblist_body(report_t *r, sbuf_t *b, char *err, size_t errlen);
const char *weblist_css(void);
const char *weblist_js(void);

/* The -weblist report: a whole HTML page. */
int report_weblist(report_t *r, char *err, size_t errlen);

#endif
