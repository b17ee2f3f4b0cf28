/* work.h — a report's private, mutable view of a profile.
 *
 * Reports filter and aggregate (focus, hide, granularity, ...) by rewriting
 * the stacks, lines and function fields of a profile, as pprof does on its
 * copy. Instead of copying the whole profile_t, a work_t holds just what
 * those steps change — each location's line list, each sample's stack (as
 * location indexes), each function's name/file — in a few flat arrays, and
 * reads the rest (strings, values, mappings, header) from the profile.
 * New strings (cleaned file names) are interned into the profile, which is
 * otherwise left untouched, so one loaded profile serves many reports. */
#ifndef CPROF_TOOL_WORK_H
#define CPROF_TOOL_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

typedef struct {
    uint32_t fn;  /* function index + 1; 0 = no function */
    int64_t line; /* source line, 0 = unknown */
} wline_t;

typedef struct {
    uint64_t id;
    uint64_t address;
    uint32_t mapping; /* mapping index + 1; 0 = none */
    uint32_t n_lines;
    wline_t *lines; /* innermost first, like profile_location_t */
    bool is_folded;
} wloc_t;

typedef struct {
    uint64_t id;
    int64_t name, system_name, filename; /* string indexes */
    int64_t start_line;
} wfunc_t;

typedef struct {
    uint32_t *locs; /* location indexes, leaf first */
    uint32_t n_locs;
    uint32_t n_labels;
    const int64_t *values; /* profile's values */
    const profile_label_t *labels;
} wsample_t;

typedef struct {
    profile_t *p;
    wloc_t *locs;
    size_t n_locs;
    wfunc_t *funcs;
    size_t n_funcs;
    wsample_t *samples;
    size_t n_samples;
    /* storage */
    uint32_t *loc_store;
    wline_t *line_store;
    profile_label_t *label_store; /* after tag show/hide */
} work_t;

/* Builds the view; 0, -ENOMEM, or -EINVAL (dangling ids; message in err). */
int work_new(profile_t *p, work_t **out, char *err, size_t errlen);

/* work_new for p's last reader: p's lines and functions are released as
 * soon as the view holds them, its stacks and locations at the end
 * (profile_drop_*), so that the view and all of the profile are never
 * held at once. p keeps its strings, mappings, sample types and values. */
int work_take(profile_t *p, work_t **out, char *err, size_t errlen);
void work_free(work_t *w);

static inline const char *work_str(const work_t *w, int64_t idx)
{
    return idx > 0 && (size_t)idx < w->p->n_strings ? w->p->strings[idx] : "";
}

/* The string index of name among the keys of w's samples' labels, -1 if
 * no label has that key: a report's profile is merged, its strings
 * interned, so every label keyed name has this index. Each distinct key
 * is compared once (a few), where a search of the string table compared
 * every string (312,000 on bench/'s strings shape). */
int64_t work_label_key(const work_t *w, const char *name);

/* The file name of a location's mapping, "" if none. */
const char *work_loc_objfile(const work_t *w, const wloc_t *l);

#endif
