/* export.h — turning a filtered work view back into a standalone profile_t
 * (for -proto and -output), with pprof's -divide_by ratio applied. */
#ifndef CPROF_TOOL_EXPORT_H
#define CPROF_TOOL_EXPORT_H

#include "tool/graph/work.h"

/* A new profile with w's samples, locations (their current lines),
 * functions, mappings and header. ratio != 1 scales every value
 * (truncating, as pprof's printProto does). 0 or -ENOMEM. */
int export_profile(const work_t *w, double ratio, profile_t **out);

#endif
