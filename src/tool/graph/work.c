/* work.c — building the mutable view of a profile. */
#include "tool/graph/work.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void work_free(work_t *w)
{
    if (!w)
        return;
    free(w->locs);
    free(w->funcs);
    free(w->samples);
    free(w->loc_store);
    free(w->line_store);
    free(w->label_store);
    free(w);
}

int64_t work_label_key(const work_t *w, const char *name)
{
    int64_t other[16]; /* keys found to be other strings: the last 16 */
    size_t n_other = 0, next = 0;
    for (size_t i = 0; i < w->n_samples; i++)
        for (uint32_t j = 0; j < w->samples[i].n_labels; j++) {
            int64_t k = w->samples[i].labels[j].key;
            size_t o = 0;
            while (o < n_other && other[o] != k)
                o++;
            if (o < n_other)
                continue;
            if (strcmp(work_str(w, k), name) == 0)
                return k;
            other[next] = k;
            next = (next + 1) % 16;
            n_other += n_other < 16;
        }
    return -1;
}

const char *work_loc_objfile(const work_t *w, const wloc_t *l)
{
    if (!l->mapping)
        return "";
    return work_str(w, w->p->mappings[l->mapping - 1].filename);
}

/* work_take makes the view's records in the profile's arrays. */
_Static_assert(sizeof(wfunc_t) == sizeof(profile_function_t) &&
                   offsetof(wfunc_t, id) == offsetof(profile_function_t, id) &&
                   offsetof(wfunc_t, name) == offsetof(profile_function_t, name) &&
                   offsetof(wfunc_t, system_name) == offsetof(profile_function_t, system_name) &&
                   offsetof(wfunc_t, filename) == offsetof(profile_function_t, filename) &&
                   offsetof(wfunc_t, start_line) == offsetof(profile_function_t, start_line),
               "wfunc_t is profile_function_t's record");
_Static_assert(sizeof(wloc_t) == sizeof(profile_location_t) &&
                   _Alignof(wloc_t) <= _Alignof(profile_location_t) &&
                   offsetof(wloc_t, id) == offsetof(profile_location_t, id),
               "a wloc_t takes a profile_location_t's place (same stride, so "
               "positions and the id scan of profile_location_by_id hold)");

static int build(profile_t *p, bool take, work_t **out, char *err, size_t errlen)
{
    *out = NULL;
    work_t *w = calloc(1, sizeof(*w));
    if (!w)
        goto oom;
    w->p = p;
    if (profile_index(p) < 0)
        goto oom;

    w->n_funcs = p->n_functions;
    /* Taken, the view's functions are the profile's array itself (the
     * same record), taken once the locations below are made; else a
     * copy. */
    const bool take_funcs = take && p->functions;
    if (!take_funcs) {
        w->funcs = calloc(p->n_functions + 1, sizeof(*w->funcs));
        if (!w->funcs)
            goto oom;
        for (size_t i = 0; i < p->n_functions; i++) {
            const profile_function_t *f = &p->functions[i];
            w->funcs[i] = (wfunc_t){f->id, f->name, f->system_name, f->filename, f->start_line};
        }
    }

    size_t nlines = 0;
    for (size_t i = 0; i < p->n_locations; i++)
        nlines += p->locations[i].n_lines;
    w->n_locs = p->n_locations;
    /* Taken, the view's k-th location is written over the profile's k-th
     * once read (same size): the samples below only need its position. */
    const bool take_locs = take && p->locations;
    wloc_t *locs = take_locs ? (wloc_t *)p->locations : calloc(p->n_locations + 1, sizeof(*locs));
    w->line_store = malloc((nlines + 1) * sizeof(*w->line_store));
    if (!take_locs)
        w->locs = locs;
    if (!locs || !w->line_store)
        goto oom;
    wline_t *ls = w->line_store;
    for (size_t i = 0; i < p->n_locations; i++) {
        const profile_location_t lv = p->locations[i], *l = &lv;
        /* Each location's lines are an array of their own, in no order
         * after a merge: a miss each unless loaded ahead. */
        if (i + 8 < p->n_locations)
            __builtin_prefetch(p->locations[i + 8].lines);
        wloc_t *wl = &locs[i];
        if (take_locs)
            *wl = (wloc_t){0};
        wl->id = l->id;
        wl->address = l->address;
        wl->is_folded = l->is_folded;
        if (l->mapping_id) {
            const profile_mapping_t *m = profile_mapping_by_id(p, l->mapping_id);
            wl->mapping = m ? (uint32_t)(m - p->mappings) + 1 : 0;
        }
        wl->lines = ls;
        for (uint32_t j = 0; j < l->n_lines; j++) {
            const profile_function_t *f = l->lines[j].function_id
                                              ? profile_function_by_id(p, l->lines[j].function_id)
                                              : NULL;
            if (l->lines[j].function_id && !f) {
                snprintf(err, errlen, "malformed profile: location %llu has a line with nil function",
                         (unsigned long long)l->id);
                work_free(w);
                return -EINVAL;
            }
            ls->fn = f ? (uint32_t)(f - p->functions) + 1 : 0;
            ls->line = l->lines[j].line;
            ls++;
        }
        wl->n_lines = l->n_lines;
    }
    if (take_funcs) {
        w->funcs = (wfunc_t *)p->functions;
        p->functions = NULL; /* profile_drop_lines frees the rest */
    }
    if (take) {
        /* Rewritten, the locations are the view's: only their lines'
         * storage is released, their fields are not cleared. */
        size_t n = p->n_locations;
        if (take_locs)
            p->n_locations = 0;
        profile_drop_lines(p);
        p->n_locations = n;
    }

    size_t nframes = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        nframes += p->samples[i].n_location_ids;
    w->n_samples = p->n_samples;
    w->samples = calloc(p->n_samples + 1, sizeof(*w->samples));
    w->loc_store = malloc((nframes + 1) * sizeof(*w->loc_store));
    if (!w->samples || !w->loc_store)
        goto oom;
    uint32_t *st = w->loc_store;
    for (size_t i = 0; i < p->n_samples; i++) {
        const profile_sample_t *s = &p->samples[i];
        wsample_t *ws = &w->samples[i];
        ws->locs = st;
        ws->n_locs = s->n_location_ids;
        ws->values = s->values;
        ws->labels = s->labels;
        ws->n_labels = s->n_labels;
        for (uint32_t j = 0; j < s->n_location_ids; j++) {
            const profile_location_t *l = profile_location_by_id(p, s->location_ids[j]);
            if (!l) {
                snprintf(err, errlen, "malformed profile: sample has nil location");
                work_free(w);
                return -EINVAL;
            }
            *st++ = (uint32_t)(l - p->locations);
        }
    }
    if (take) {
        profile_drop_stacks(p);
        if (take_locs) {
            w->locs = locs;
            p->locations = NULL;
        }
        profile_drop_locations(p);
    }
    *out = w;
    return 0;
oom:
    work_free(w);
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

int work_new(profile_t *p, work_t **out, char *err, size_t errlen)
{
    return build(p, false, out, err, errlen);
}

int work_take(profile_t *p, work_t **out, char *err, size_t errlen)
{
    return build(p, true, out, err, errlen);
}
