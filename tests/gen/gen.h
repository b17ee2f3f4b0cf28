/* gen.h — test helpers for the format library: a deterministic random
 * profile generator (profgen), a field-by-field comparison of two profiles,
 * and a printer of Go pprof's Profile.String() ("go tool pprof -raw"), so
 * that e2e scripts can diff our reading of a file against Go's.
 *
 * Used by tests/unit/test_{decode,legacy,merge}.c and by the profgen and
 * profdump command-line tools. Not part of any shipped binary.
 */
#ifndef CPROF_TESTS_GEN_H
#define CPROF_TESTS_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

typedef struct {
    uint64_t seed;
    size_t samples;
    size_t locations;
    size_t functions;
    size_t mappings;       /* 0: locations have no mapping */
    unsigned min_depth, max_depth;
    unsigned labels;       /* up to this many extra labels per sample */
    unsigned inline_pct;   /* percent of locations with 2-3 lines (inlining) */
    unsigned sample_types; /* value columns; 4 = Go's heap types */
    bool sparse_ids;       /* ids far from 1..N (hash-like) */
    bool zero_values;      /* let some samples have all-zero values */
    uint64_t sample_seed;  /* 0: samples follow from seed; else their own
                            * stream, so profiles of one seed and several
                            * sample seeds share their locations (a series) */
} profgen_opts_t;

/* Small defaults: 50 samples, 40 locations, 20 functions, 2 mappings,
 * depth 1-12, 2 labels, 20% inline, 4 types. */
void profgen_defaults(profgen_opts_t *o, uint64_t seed);

/* The fixture large.pb.gz's shape: 200,000 samples, 50,000 locations,
 * 20,000 functions, depth 20-60, 2 mappings. */
void profgen_large(profgen_opts_t *o, uint64_t seed);

/* The bench's shapes (bench/tool_large.sh), from profgen_large:
 * "samples" (many samples, few locations), "strings" (many locations,
 * functions and strings), "deep" (deep stacks), "snapshot" (one of a
 * series: few samples each, with -sample_seed), "large" (profgen_large).
 * 0, or -1 for an unknown name. */
int profgen_shape(profgen_opts_t *o, const char *name, uint64_t seed);

/* A new indexed profile, or NULL on OOM. Same options -> same profile. */
profile_t *profgen_make(const profgen_opts_t *o);

/* Compares every field of a and b by value (strings by content, so the
 * two string tables may differ). true if equal; otherwise why says where. */
bool profgen_equal(const profile_t *a, const profile_t *b, char *why, size_t whylen);

/* Prints p the way Go's (*profile.Profile).String() does, which is what
 * "go tool pprof -raw" prints; times in UTC (run Go with TZ=UTC). */
void profgen_print_raw(const profile_t *p, FILE *f);

#endif
