/* combine.h — putting several fetched profiles together the way pprof's
 * driver does before any report: unit normalization across profiles
 * (measurement.ScaleProfiles), merging (profile_merge), and the -base /
 * -diff_base / -normalize arithmetic. Profiles passed in are consumed. */
#ifndef CPROF_TOOL_COMBINE_H
#define CPROF_TOOL_COMBINE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/merge.h"
#include "profile/profile.h"

/* ScaleProfiles + Merge of ps[0..n) into *out (ps are freed); one profile
 * is compacted while a second thread keys its strings. */
int combine_profiles(profile_t **ps, size_t n, profile_t **out, char *err, size_t errlen);

/* combine_profiles of n sources that next gives one at a time (each
 * freed once merged, so a series costs one source at a time): heads[i] is
 * profile_header_copy of the i-th, whose sums the caller checked
 * (profile_check_sums) when it read it. heads are taken. */
int combine_stream(profile_t **heads, size_t n, profile_source_fn next, void *ctx,
                   profile_t **out, char *err, size_t errlen);

/* combine_stream as the sources are read, so that a series is decoded once:
 * combine_eager_add merges src (taken) whose header is head, the first
 * making *e; 1 when head differs from the first's in what the merge reads
 * before the samples (types, units, comments: profile_merger_same_header),
 * and then the caller frees *e and merges with combine_stream instead;
 * 0, or -ENOMEM (*e is then to be freed, too). combine_eager_end (e and
 * heads taken) gives combine_stream's result for the sources added, whose
 * header copies heads are. keys (may be NULL): profile_merger_add_keyed's
 * for src's strings, the caller's. spent (may be NULL): src is given back
 * there whatever the result, merged or not, for the caller to decode the
 * next source into (profile_clear), instead of being freed. */
typedef struct combine_eager combine_eager_t;
int combine_eager_add(combine_eager_t **e, const profile_t *head, profile_t *src,
                      const uint32_t *keys, size_t n_keys, profile_t **spent);
int combine_eager_end(combine_eager_t *e, profile_t **heads, size_t n, profile_t **out, char *err,
                      size_t errlen);
void combine_eager_free(combine_eager_t *e);

/* Subtracts base from p (both consumed): diff marks base samples with the
 * label pprof::base=true, normalize scales p to base's totals first. */
int combine_base(profile_t *p, profile_t *base, bool diff, bool normalize, profile_t **out,
                 char *err, size_t errlen);

#endif
