/* merge.h — combining and rescaling profiles, as go tool pprof 1.19 does
 * (profile/merge.go, profile.go, internal/driver/fetch.go):
 *   - profile_merge: pprof's Merge. Checks that all profiles have the same
 *     period type and sample types, then builds a new profile in which
 *     equal mappings (same size rounded to 4 KiB, offset, build id or file),
 *     functions (name, system name, file, start line), locations (address
 *     relative to the mapping, lines, folded) and samples (stack and labels)
 *     are stored once, values summed. Only what samples use is kept (plus
 *     the first mapping, the main binary); samples whose values are all zero
 *     are dropped. Header: earliest time, summed duration, largest period,
 *     comments deduplicated, the rest from the first profile.
 *     Merging a single profile compacts it (pprof's Compact), which every
 *     pprof report does to its input.
 *   - profile_scale / profile_scale_n: pprof's Scale/ScaleN (round half
 *     away from zero; samples whose scaled values all become 0 are removed).
 *   - profile_apply_base: what -base and -diff_base do.
 *
 * Inputs are not modified except where stated (profile_apply_base scales
 * and labels its base); outputs are new, validated, indexed profiles.
 * Threads: no global state.
 */
#ifndef CPROF_MERGE_H
#define CPROF_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* 0 or -EINVAL ("incompatible sample types ..." / "incompatible period
 * types ...", "no profiles to merge") or -ENOMEM, with a message. */
int profile_merge(profile_t **profiles, size_t n, profile_t **out, char *err, size_t errlen);

/* profile_merge that frees the profiles (on failure too). The merge of one
 * profile, the common case, then keeps its arrays where they come out
 * unchanged instead of copying them: half the peak memory. */
int profile_merge_owned(profile_t **profiles, size_t n, profile_t **out, char *err,
                        size_t errlen);

/* Keys for the strings of the one profile that profile_merge_keyed
 * compacts, made by the caller while the merge runs (on another thread,
 * say): a key is a number below UINT32_MAX, equal for equal strings and
 * different for different ones.
 *   wait: the source's n_strings keys, once made (the caller's; NULL: none,
 *         the merge interns the strings itself). The merge calls it once,
 *         after its samples and before it frees the source, on success or
 *         failure: the source's strings stay as they were until then.
 *   key_of: after wait, the key of s (a string of no source, maybe). */
typedef struct {
    const uint32_t *(*wait)(void *ctx);
    uint32_t (*key_of)(void *ctx, const char *s);
    void *ctx;
} profile_keyer_t;

/* profile_merge_owned of the one profile *p whose strings keyer keys
 * meanwhile: the merge maps them by their index and finds each key's
 * place in the output at the end, which hashes no string on this thread.
 * The same output. */
int profile_merge_keyed(profile_t **p, const profile_keyer_t *keyer, profile_t **out, char *err,
                        size_t errlen);

/* Gives the i-th source of a streamed merge (the caller's, taken), or a
 * negative errno with a message. */
typedef int (*profile_source_fn)(void *ctx, size_t i, profile_t **p, char *err, size_t errlen);

/* profile_merge of n sources that next gives one at a time, each freed
 * once merged, so that merging a series holds one source at a time:
 * heads[i] is profile_header_copy of the i-th (taken, freed on failure
 * too). The same output as profile_merge of the sources. */
int profile_merge_stream(profile_t **heads, size_t n, profile_source_fn next, void *ctx,
                         profile_t **out, char *err, size_t errlen);

/* profile_merge_stream as the sources come, for a caller that reads each
 * source once: the merge begins with the first source's header
 * (profile_merger_new), takes each source in turn (profile_merger_add: src
 * freed, on failure too) and ends with the header's sums over all heads
 * (profile_merger_end: the merger freed, heads not). The output is
 * profile_merge_stream's when every later head h passed
 * profile_merger_same_header(first, h): it has the first's sample and period
 * types and units (so it is compatible) and brings no header string the
 * first lacks (comments, a default sample type), which the merge would
 * have put before the samples' strings. 0 or -ENOMEM (with a message from
 * _end). */
typedef struct profile_merger profile_merger_t;
int profile_merger_new(profile_t *head, profile_merger_t **out);
int profile_merger_add(profile_merger_t *m, profile_t *src);
/* profile_merger_add with keys[i] (i < n_keys) for src's i-th string: a
 * number below UINT32_MAX that is the same for equal strings and differs
 * for different ones, over all the sources added (an index in the caller's
 * own intern table, say, which a thread that decodes the sources can
 * build). Each key's string is then interned once, not once per source:
 * the same output, with the string work off the merging thread. keys are
 * the caller's. */
int profile_merger_add_keyed(profile_merger_t *m, profile_t *src, const uint32_t *keys,
                             size_t n_keys);
/* profile_merger_add_keyed that leaves src to the caller, who may free it
 * or build the next source in its storage (profile_clear): out holds
 * nothing of it. */
int profile_merger_add_kept(profile_merger_t *m, profile_t *src, const uint32_t *keys,
                            size_t n_keys);
bool profile_merger_same_header(const profile_t *first, const profile_t *h);
int profile_merger_end(profile_merger_t *m, profile_t *const *heads, size_t n, profile_t **out,
                       char *err, size_t errlen);
void profile_merger_free(profile_merger_t *m);

/* A new profile with only p's header (sample and period types, period,
 * times, comments, default sample type, drop/keep frames): what a merge
 * reads from a source before its samples. 0 or -ENOMEM. */
int profile_header_copy(const profile_t *p, profile_t **out);

/* pprof's Compact: the merge of one profile. */
int profile_compact(profile_t *p, profile_t **out, char *err, size_t errlen);

/* 0 if a and b may be merged, else -EINVAL and the reason. */
int profile_compatible(const profile_t *a, const profile_t *b, char *err, size_t errlen);

/* Multiplies every value by ratio (no-op for 1). Returns 0. */
int profile_scale(profile_t *p, double ratio);

/* Per-column ratios; n must be p->n_sample_types (else -EINVAL). */
int profile_scale_n(profile_t *p, const double *ratios, size_t n);

/* pprof's Normalize: scales p so that each column's total equals base's. */
int profile_normalize(profile_t *p, const profile_t *base, char *err, size_t errlen);

/* Sets the string label key=value on every sample, replacing the values
 * the key had (pprof's SetLabel with one value). 0 or -ENOMEM. */
int profile_set_label(profile_t *p, const char *key, const char *value);

/* -base / -diff_base: optionally normalizes p to base (-normalize), marks
 * base's samples with pprof::base=true when diff_base, scales base by -1 and
 * merges [p, base] into *out. base is modified; p is not. */
int profile_apply_base(profile_t *p, profile_t *base, bool diff_base, bool normalize,
                       profile_t **out, char *err, size_t errlen);

/* Every sum the reports make of p's values is a sum over some of its
 * samples: they cannot overflow when, in each column, the absolute values
 * add up to at most INT64_MAX. -ERANGE with a message naming the column
 * otherwise (a value of INT64_MIN included). */
int profile_check_sums(const profile_t *p, char *err, size_t errlen);

#endif
