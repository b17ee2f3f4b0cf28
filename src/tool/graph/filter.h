/* filter.h — the sample and frame filters of pprof, applied to a work_t:
 * focus/ignore/hide/show, show_from, tagfocus/tagignore, tagshow/taghide,
 * prune_from, the profile's drop_frames/keep_frames, and granularity
 * aggregation. Each returns whether its expression matched anything, so the
 * driver can warn "... expression matched no samples" as pprof does.
 * Regexps match function names, file names and mapping file names. */
#ifndef CPROF_TOOL_FILTER_H
#define CPROF_TOOL_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "tool/graph/rx.h"
#include "tool/graph/work.h"

/* Units of the numeric label keys (pprof's NumLabelUnits). */
typedef struct {
    int64_t key;      /* string index */
    const char *unit; /* unit name (a profile string or the key itself) */
} numunit_t;

typedef struct {
    numunit_t *v;
    size_t n;
} numunits_t;

/* Computes the units; for keys seen with several units, prints nothing but
 * fills *conflicts (may be NULL) with "For tag K used unit U, also
 * encountered unit(s) ..." lines, newline-separated (malloc'd). */
int numunits_compute(const work_t *w, numunits_t *u, char **conflicts);
const char *numunits_get(const numunits_t *u, int64_t key);
void numunits_free(numunits_t *u);

static inline bool label_is_str(const profile_label_t *l)
{
    return l->str != 0;
}
static inline bool label_is_num(const profile_label_t *l)
{
    return l->str == 0 && (l->num != 0 || l->num_unit != 0);
}

/* The distinct keys of the sample's string (num false) or numeric labels,
 * in first-seen order, at most max of them into keys; their number. */
size_t label_keys(const wsample_t *s, bool num, int64_t *keys, size_t max);

typedef struct {
    bool fm, im, hm, hnm;
} name_match_t;

void filter_by_name(work_t *w, const rx_t *focus, const rx_t *ignore, const rx_t *hide,
                    const rx_t *show, name_match_t *m);
bool filter_show_from(work_t *w, const rx_t *show_from);
void filter_prune_from(work_t *w, const rx_t *rx);
/* drop_frames/keep_frames of the profile ("^(...)$" applied). 0 or -EINVAL. */
int filter_remove_uninteresting(work_t *w, char *err, size_t errlen);

/* A compiled -tagfocus/-tagignore expression. */
typedef struct tagfilter tagfilter_t;
/* NULL value → *out NULL. *range_note receives pprof's "Interpreted ... as
 * range" note when the value is numeric (static buffer, or NULL). */
int tagfilter_compile(const char *name, const char *value, const work_t *w,
                      const numunits_t *units, tagfilter_t **out, char *note, size_t notelen,
                      char *err, size_t errlen);
void tagfilter_free(tagfilter_t *f);
void filter_by_tag(work_t *w, const tagfilter_t *focus, const tagfilter_t *ignore, bool *fm,
                   bool *im);
int filter_tags_by_name(work_t *w, const rx_t *show, const rx_t *hide, bool *sm, bool *hm);

/* pprof's Profile.Aggregate. */
void filter_aggregate(work_t *w, bool inlines, bool function, bool filename, bool linenumber,
                      bool address);

/* simplifyFunc of pprof's prune: drops a leading '.' and an argument list. */
size_t filter_simplify_func(const char *name, const char **start);

#endif
