/* export.c — work view → profile_t, and the -proto report. */
#include "tool/report/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool/report/report.h"

int export_profile(const work_t *w, double ratio, profile_t **out)
{
    const profile_t *p = w->p;
    *out = NULL;
    profile_t *q = profile_new();
    int64_t *smap = malloc((p->n_strings + 1) * sizeof(*smap));
    int64_t *vals = malloc((p->n_sample_types + 1) * sizeof(*vals));
    uint64_t *ids = NULL;
    profile_line_t *lines = NULL;
    if (!q || !smap || !vals)
        goto oom;
    for (size_t i = 0; i < p->n_strings; i++)
        if ((smap[i] = profile_intern(q, p->strings[i])) < 0)
            goto oom;
#define S(x) ((x) > 0 && (size_t)(x) < p->n_strings ? smap[x] : 0)
    for (size_t i = 0; i < p->n_sample_types; i++)
        if (profile_add_sample_type(q, p->strings[p->sample_types[i].type],
                                    p->strings[p->sample_types[i].unit]) < 0)
            goto oom;
    size_t maxlocs = 0, maxlines = 0;
    for (size_t i = 0; i < w->n_samples; i++)
        if (w->samples[i].n_locs > maxlocs)
            maxlocs = w->samples[i].n_locs;
    for (size_t i = 0; i < w->n_locs; i++)
        if (w->locs[i].n_lines > maxlines)
            maxlines = w->locs[i].n_lines;
    ids = malloc((maxlocs + 1) * sizeof(*ids));
    lines = malloc((maxlines + 1) * sizeof(*lines));
    if (!ids || !lines)
        goto oom;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        for (uint32_t j = 0; j < s->n_locs; j++)
            ids[j] = w->locs[s->locs[j]].id;
        for (size_t v = 0; v < p->n_sample_types; v++)
            vals[v] = ratio > 0 && ratio != 1 ? (int64_t)((double)s->values[v] * ratio)
                                              : s->values[v];
        profile_sample_t *qs = profile_add_sample(q, ids, s->n_locs, vals);
        if (!qs)
            goto oom;
        for (uint32_t j = 0; j < s->n_labels; j++) {
            profile_label_t l = s->labels[j];
            l.key = S(l.key);
            l.str = S(l.str);
            l.num_unit = S(l.num_unit);
            if (profile_sample_add_label(q, &q->samples[q->n_samples - 1], &l) < 0)
                goto oom;
        }
    }
    for (size_t i = 0; i < p->n_mappings; i++) {
        profile_mapping_t *m = profile_add_mapping(q);
        if (!m)
            goto oom;
        *m = p->mappings[i];
        m->filename = S(m->filename);
        m->build_id = S(m->build_id);
    }
    for (size_t i = 0; i < w->n_locs; i++) {
        const wloc_t *l = &w->locs[i];
        for (uint32_t j = 0; j < l->n_lines; j++)
            lines[j] = (profile_line_t){l->lines[j].fn ? w->funcs[l->lines[j].fn - 1].id : 0,
                                        l->lines[j].line};
        profile_location_t *ql = profile_add_location(q, lines, l->n_lines);
        if (!ql)
            goto oom;
        ql->id = l->id;
        ql->address = l->address;
        ql->mapping_id = l->mapping ? p->mappings[l->mapping - 1].id : 0;
        ql->is_folded = l->is_folded;
    }
    for (size_t i = 0; i < w->n_funcs; i++) {
        profile_function_t *f = profile_add_function(q);
        if (!f)
            goto oom;
        const wfunc_t *wf = &w->funcs[i];
        *f = (profile_function_t){wf->id, S(wf->name), S(wf->system_name), S(wf->filename),
                                  wf->start_line};
    }
    for (size_t i = 0; i < p->n_comments; i++) {
        int64_t c = S(p->comments[i]);
        if (profile_add_comment(q, q->strings[c]) < 0)
            goto oom;
    }
    q->drop_frames = S(p->drop_frames);
    q->keep_frames = S(p->keep_frames);
    q->time_nanos = p->time_nanos;
    q->duration_nanos = p->duration_nanos;
    q->period_type = (profile_value_type_t){S(p->period_type.type), S(p->period_type.unit)};
    q->period = p->period;
    q->default_sample_type = S(p->default_sample_type);
#undef S
    if (profile_index(q) < 0)
        goto oom;
    free(smap);
    free(vals);
    free(ids);
    free(lines);
    *out = q;
    return 0;
oom:
    free(smap);
    free(vals);
    free(ids);
    free(lines);
    profile_free(q);
    return -ENOMEM;
}

int report_proto(report_t *r, char *err, size_t errlen)
{
    profile_t *q;
    if (export_profile(r->w, r->ratio, &q) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    fflush(r->out);
    int rc = profile_write_fd(q, fileno(r->out));
    profile_free(q);
    if (rc < 0)
        snprintf(err, errlen, "writing profile: %s", strerror(-rc));
    return rc;
}
