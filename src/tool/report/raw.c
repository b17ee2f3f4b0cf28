/* raw.c — the -raw report: pprof's Profile.String() of the filtered
 * profile (header, every sample with all its values, locations, mappings). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/filter.h"
#include "base/strs.h"
#include "tool/graph/measure.h"
#include "tool/report/report.h"

/* "key:[v1 v2]" per key (string labels) or "key:[1 2]" / "key:[1 unit 2 unit]"
 * (numeric), sorted and space-joined. */
static void labels_string(const work_t *w, const wsample_t *s, bool num, sbuf_t *out)
{
    int64_t keys[64];
    size_t nk = label_keys(s, num, keys, 64);
    char *parts[64];
    for (size_t k = 0; k < nk; k++) {
        sbuf_t b = {0};
        sb_printf(&b, "%s:[", work_str(w, keys[k]));
        bool all_units = true, any_unit = false;
        if (num)
            for (uint32_t i = 0; i < s->n_labels; i++) {
                const profile_label_t *l = &s->labels[i];
                if (l->key == keys[k] && label_is_num(l)) {
                    if (l->num_unit)
                        any_unit = true;
                    else
                        all_units = false;
                }
            }
        (void)all_units;
        bool first = true;
        for (uint32_t i = 0; i < s->n_labels; i++) {
            const profile_label_t *l = &s->labels[i];
            if (l->key != keys[k] || (num ? !label_is_num(l) : !label_is_str(l)))
                continue;
            if (!first)
                sb_putc(&b, ' ');
            first = false;
            if (!num)
                sb_puts(&b, work_str(w, l->str));
            else if (any_unit) /* pprof pads missing units with "" */
                sb_printf(&b, "%" PRId64 " %s", l->num, work_str(w, l->num_unit));
            else
                sb_printf(&b, "%" PRId64, l->num);
        }
        sb_putc(&b, ']');
        parts[k] = sb_steal(&b);
    }
    strs_sort(parts, nk);
    for (size_t k = 0; k < nk; k++) {
        if (k)
            sb_putc(out, ' ');
        sb_puts(out, parts[k]);
        free(parts[k]);
    }
}

static bool has_labels(const wsample_t *s, bool num)
{
    for (uint32_t i = 0; i < s->n_labels; i++)
        if (num ? label_is_num(&s->labels[i]) : label_is_str(&s->labels[i]))
            return true;
    return false;
}

int report_raw(report_t *r, char *err, size_t errlen)
{
    const work_t *w = r->w;
    const profile_t *p = w->p;
    sbuf_t b = {0};
    char buf[128];
    for (size_t i = 0; i < p->n_comments; i++)
        sb_printf(&b, "Comment: %s\n", work_str(w, p->comments[i]));
    if (p->period_type.type || p->period_type.unit)
        sb_printf(&b, "PeriodType: %s %s\n", work_str(w, p->period_type.type),
                  work_str(w, p->period_type.unit));
    sb_printf(&b, "Period: %" PRId64 "\n", p->period);
    if (p->time_nanos)
        sb_printf(&b, "Time: %s\n", report_time_string(p->time_nanos, buf, sizeof(buf)));
    if (p->duration_nanos) {
        /* fmt "%.4v" of a time.Duration: its string cut to 4 runes */
        measure_duration_string(buf, sizeof(buf), p->duration_nanos);
        size_t runes = 0, k = 0;
        while (buf[k] && runes < 4) {
            k++;
            while ((buf[k] & 0xc0) == 0x80)
                k++;
            runes++;
        }
        buf[k] = '\0';
        sb_printf(&b, "Duration: %s\n", buf);
    }
    sb_puts(&b, "Samples:\n");
    for (size_t i = 0; i < p->n_sample_types; i++) {
        const char *t = work_str(w, p->sample_types[i].type);
        sb_printf(&b, "%s%s/%s%s", i ? " " : "", t, work_str(w, p->sample_types[i].unit),
                  strcmp(t, work_str(w, p->default_sample_type)) == 0 ? "[dflt]" : "");
    }
    sb_putc(&b, '\n');
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        for (size_t v = 0; v < p->n_sample_types; v++)
            sb_printf(&b, " %10" PRId64, s->values[v]);
        sb_puts(&b, ": ");
        for (uint32_t j = 0; j < s->n_locs; j++)
            sb_printf(&b, "%" PRIu64 " ", w->locs[s->locs[j]].id);
        sb_putc(&b, '\n');
        if (has_labels(s, false)) {
            sb_puts(&b, "                ");
            labels_string(w, s, false, &b);
            sb_putc(&b, '\n');
        }
        if (has_labels(s, true)) {
            sb_puts(&b, "                ");
            labels_string(w, s, true, &b);
            sb_putc(&b, '\n');
        }
    }
    sb_puts(&b, "Locations\n");
    for (size_t i = 0; i < w->n_locs; i++) {
        const wloc_t *l = &w->locs[i];
        sbuf_t head = {0};
        sb_printf(&head, "%6" PRIu64 ": 0x%" PRIx64 " ", l->id, l->address);
        if (l->mapping)
            sb_printf(&head, "M=%" PRIu64 " ", p->mappings[l->mapping - 1].id);
        if (l->is_folded)
            sb_puts(&head, "[F] ");
        if (l->n_lines == 0)
            sb_printf(&b, "%s\n", sb_cstr(&head));
        for (uint32_t j = 0; j < l->n_lines; j++) {
            sb_puts(&b, j == 0 ? sb_cstr(&head) : "             ");
            uint32_t fn = l->lines[j].fn;
            if (!fn) {
                sb_puts(&b, "??\n");
                continue;
            }
            const wfunc_t *f = &w->funcs[fn - 1];
            const char *name = work_str(w, f->name), *sys = work_str(w, f->system_name);
            sb_printf(&b, "%s %s:%" PRId64 " s=%" PRId64, name, work_str(w, f->filename),
                      l->lines[j].line, f->start_line);
            if (strcmp(name, sys) != 0)
                sb_printf(&b, "(%s)", sys);
            sb_putc(&b, '\n');
        }
        sb_free(&head);
    }
    sb_puts(&b, "Mappings\n");
    for (size_t i = 0; i < p->n_mappings; i++) {
        const profile_mapping_t *m = &p->mappings[i];
        sb_printf(&b, "%" PRIu64 ": 0x%" PRIx64 "/0x%" PRIx64 "/0x%" PRIx64 " %s %s %s%s%s%s\n",
                  m->id, m->memory_start, m->memory_limit, m->file_offset,
                  work_str(w, m->filename), work_str(w, m->build_id),
                  m->has_functions ? "[FN]" : "", m->has_filenames ? "[FL]" : "",
                  m->has_line_numbers ? "[LN]" : "", m->has_inline_frames ? "[IN]" : "");
    }
    int rc = 0;
    if (b.oom) {
        snprintf(err, errlen, "out of memory");
        rc = -12;
    } else if (fwrite(b.s, 1, b.len, r->out) != b.len) {
        snprintf(err, errlen, "write error");
        rc = -5;
    }
    sb_free(&b);
    return rc;
}
