/* callgrind.h — the trimmed graph written for other tools: -callgrind and
 * -kcachegrind (callgrind's text format, pprof's printCallgrind, read by
 * kcachegrind/qcachegrind and valgrind's callgrind_annotate) and -topproto
 * (pprof's printTopProto: one sample per node, values cum and flat in the
 * output unit, as a gzipped profile.proto). */
#ifndef CPROF_TOOL_CALLGRIND_H
#define CPROF_TOOL_CALLGRIND_H

#include "tool/report/report.h"

int report_callgrind(report_t *r, char *err, size_t errlen);
int report_topproto(report_t *r, char *err, size_t errlen);

#endif
