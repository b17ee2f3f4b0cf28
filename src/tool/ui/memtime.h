/* memtime.h — memory over time, for the web UI's memory view: a series of
 * heap profiles of one process (numbered snapshots written with
 * CPROF_HEAP_PROFILE_EVERY, several files on the command line, or a URL
 * polled with -poll), ordered by their time_nanos, and what each call site
 * holds in each of them — the question "what is leaking?" that the pprof
 * tutorials answer by hand with -base first.pb.gz last.pb.gz.
 *
 * A call site is a node of the report's graph holding the sample value
 * itself (flat): with the default granularity, the function that called
 * malloc. Each snapshot goes through the driver's pipeline with the
 * request's configuration, so the sample index and the focus/ignore/hide
 * filters of the URL apply to the chart as to every other view.
 *
 * Not thread-safe: the web server calls it under its lock. */
#ifndef CPROF_TOOL_MEMTIME_H
#define CPROF_TOOL_MEMTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"
#include "tool/report/options.h"

/* Snapshots kept; past it every other one is dropped (the first and the
 * newest stay), so a long -poll keeps covering the whole run. */
#define MEMSERIES_MAX 256

typedef struct {
    profile_t *p;
    char *name;         /* where it came from */
    int64_t time_nanos; /* the profile's, or its arrival for profiles without */
    size_t seq;         /* arrival order, for equal times */
} memsnap_t;

struct memseries {
    memsnap_t *snaps; /* by time, then arrival */
    size_t n, cap;
    size_t next_seq;
};
typedef struct memseries memseries_t;

/* Adds p (taking it; freed with the series) in time order. Profiles
 * without a time get the time they arrive (now) when stamp_now, else
 * their arrival number. 0 or -ENOMEM (p is then freed). */
int memseries_add(memseries_t *s, profile_t *p, const char *name, bool stamp_now);
void memseries_free(memseries_t *s);

/* One call site across the snapshots. */
typedef struct {
    char *name;     /* the node's printable name */
    char *func;     /* its function name (for focus links), may be "" */
    int64_t *v;     /* per snapshot */
    int64_t growth; /* last - first */
} memsite_t;

/* One stack ending at the chosen site (root first, frames '\n'-separated). */
typedef struct {
    char *frames;
    int64_t *v; /* per snapshot */
    int64_t growth;
} memstack_t;

typedef struct {
    size_t n_snaps;
    const memsnap_t *snaps; /* the series' (borrowed) */
    int64_t *total;         /* per snapshot: the sum of the sample values shown */
    char sample_type[128];
    char unit[64];          /* the sample unit ("bytes") */
    memsite_t *sites;       /* by growth, largest first; then by name */
    size_t n_sites;
    memstack_t *stacks; /* of the site asked for, by growth */
    size_t n_stacks;
} memtable_t;

/* Computes the table for configuration cfg (sample index, filters); when
 * site is not NULL, also the stacks that end at that site. With by (a
 * label key, e.g. the memory profile's "class"), the rows are the label's
 * values instead of call sites ("" for samples without it; func "", no
 * stacks). Messages of the pipeline (bad regexp, ...) go to stderr and to
 * msgs. 0, or -1 when a snapshot could not be reported (messages say
 * why). */
int memtime_compute(const memseries_t *s, const config_t *cfg, const char *site, const char *by,
                    FILE *msgs, memtable_t *out);
void memtable_free(memtable_t *t);

#endif
