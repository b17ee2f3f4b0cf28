/* tagroot.h — pprof's -tagroot and -tagleaf: pseudo frames made of label
 * values, added to every sample of a work profile (pprof's addLabelNodes).
 *
 * For each sample and each key, a frame whose function name is the sample's
 * values for that key joined by "," (string labels, then numeric labels
 * scaled to the output unit; "" when the sample has none) and whose file
 * name is the key. Root keys become the outermost frames (the first key
 * outermost), leaf keys the innermost (the last key innermost). The new
 * functions and locations take ids after the profile's largest ones and are
 * shared by equal (name, file) pairs. Only the work view changes; new
 * strings are interned into the profile, as work.h allows. */
#ifndef CPROF_TOOL_TAGROOT_H
#define CPROF_TOOL_TAGROOT_H

#include <stdbool.h>

#include "tool/graph/work.h"

/* root_keys and leaf_keys are comma-separated label keys (NULL or empty
 * parts ignored); unit is the report's output unit (-unit). *root_match and
 * *leaf_match tell whether any sample had a value for any root (leaf) key.
 * 0, or -ENOMEM (w is then unchanged). */
int tagroot_add(work_t *w, const char *root_keys, const char *leaf_keys, const char *unit,
                bool *root_match, bool *leaf_match);

#endif
