/* tags.c — the -tags and -comments reports. -tags sums the selected value
 * per label value and lays the table out as Go's text/tabwriter does with
 * AlignRight and padding 1 (columns sized per block of lines, a line
 * without tabs ending the block). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tool/graph/filter.h"
#include "tool/graph/measure.h"
#include "tool/report/report.h"

/* --- a minimal right-aligning tab writer ---------------------------------- */

typedef struct {
    char **cells; /* per line: cells separated by '\t'; last cell is trailing text */
    size_t n, cap;
    FILE *out;
} tabw_t;

static size_t runes(const char *s, size_t n)
{
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            r++;
    return r;
}

static size_t ncells(const char *line)
{
    size_t n = 1;
    for (; *line; line++)
        n += *line == '\t';
    return n;
}

/* Cell c of line (0-based): pointer and length. */
static const char *cell(const char *line, size_t c, size_t *len)
{
    for (size_t i = 0; i < c; i++)
        line = strchr(line, '\t') + 1;
    const char *e = strchr(line, '\t');
    *len = e ? (size_t)(e - line) : strlen(line);
    return line;
}

static void write_lines(tabw_t *t, size_t l0, size_t l1, const size_t *widths, size_t nw)
{
    for (size_t i = l0; i < l1; i++) {
        const char *line = t->cells[i];
        size_t nc = ncells(line);
        for (size_t c = 0; c < nc; c++) {
            size_t len;
            const char *s = cell(line, c, &len);
            if (c < nw) {
                size_t w = runes(s, len);
                for (size_t k = w; k < widths[c]; k++)
                    fputc(' ', t->out);
            }
            fwrite(s, 1, len, t->out);
        }
        fputc('\n', t->out);
    }
}

static void format(tabw_t *t, size_t l0, size_t l1, size_t *widths, size_t nw)
{
    size_t column = nw;
    for (size_t this = l0; this < l1; this++) {
        if (column + 1 >= ncells(t->cells[this]))
            continue;
        write_lines(t, l0, this, widths, nw);
        l0 = this;
        size_t width = 0;
        for (; this < l1; this++) {
            const char *line = t->cells[this];
            if (column + 1 >= ncells(line))
                break;
            size_t len;
            const char *s = cell(line, column, &len);
            size_t w = runes(s, len) + 1;
            if (w > width)
                width = w;
        }
        widths[nw] = width;
        format(t, l0, this, widths, nw + 1);
        l0 = this;
        if (this >= l1)
            break;
        this--; /* the loop's increment re-examines line `this` */
    }
    write_lines(t, l0, l1, widths, nw);
}

static void tabw_flush(tabw_t *t)
{
    size_t widths[32];
    format(t, 0, t->n, widths, 0);
    for (size_t i = 0; i < t->n; i++)
        free(t->cells[i]);
    t->n = 0;
}

static void tabw_line(tabw_t *t, char *line)
{
    if (err_grow((void **)&t->cells, &t->cap, t->n + 1, sizeof(*t->cells)) < 0) {
        free(line);
        return;
    }
    t->cells[t->n++] = line;
    if (ncells(line) == 1)
        tabw_flush(t);
}

/* --- -tags ---------------------------------------------------------------------- */

typedef struct {
    char *name;
    int64_t flat;
} tagval_t;

typedef struct {
    int64_t key;
    tagval_t *v;
    size_t n, cap;
} tagkey_t;

static int tagval_cmp(const void *a, const void *b)
{
    const tagval_t *x = a, *y = b;
    int64_t ax = x->flat < 0 ? -x->flat : x->flat, ay = y->flat < 0 ? -y->flat : y->flat;
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const work_t *cmp_w;
static int tagkey_cmp(const void *a, const void *b)
{
    return strcmp(work_str(cmp_w, ((const tagkey_t *)a)->key),
                  work_str(cmp_w, ((const tagkey_t *)b)->key));
}

static int add_val(tagkey_t *k, const char *name, int64_t v)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->v[i].name, name) == 0) {
            k->v[i].flat += v;
            return 0;
        }
    if (err_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) < 0)
        return -ENOMEM;
    k->v[k->n].name = strdup(name);
    k->v[k->n++].flat = v;
    return 0;
}

int report_tags(report_t *r, char *err, size_t errlen)
{
    const work_t *w = r->w;
    tagkey_t *keys = NULL;
    size_t nk = 0;
    int rc = 0;
    for (size_t i = 0; i < w->n_samples && rc == 0; i++) {
        const wsample_t *s = &w->samples[i];
        int64_t v = s->values[r->value_index];
        for (uint32_t j = 0; j < s->n_labels && rc == 0; j++) {
            const profile_label_t *l = &s->labels[j];
            if (!label_is_str(l) && !label_is_num(l))
                continue;
            size_t k;
            for (k = 0; k < nk && keys[k].key != l->key; k++)
                ;
            if (k == nk) {
                tagkey_t *n = realloc(keys, (nk + 1) * sizeof(*keys));
                if (!n) {
                    rc = -ENOMEM;
                    break;
                }
                keys = n;
                keys[nk++] = (tagkey_t){l->key, NULL, 0, 0};
            }
            char buf[64];
            const char *val = label_is_str(l)
                                  ? work_str(w, l->str)
                                  : measure_scaled_label(buf, sizeof(buf), l->num,
                                                         numunits_get(r->units, l->key),
                                                         r->output_unit);
            rc = add_val(&keys[k], val, v);
        }
    }
    cmp_w = w;
    if (nk) /* keys is NULL then, which qsort may not take */
        qsort(keys, nk, sizeof(*keys), tagkey_cmp);
    tabw_t t = {.out = r->out};
    for (size_t k = 0; k < nk && rc == 0; k++) {
        tagkey_t *tk = &keys[k];
        int64_t total = 0;
        for (size_t i = 0; i < tk->n; i++)
            total += tk->v[i].flat;
        const char *u;
        double f = measure_scale(total, r->sample_unit, r->output_unit, &u);
        sbuf_t b = {0};
        sb_printf(&b, "%s:\t Total %.1f%s", work_str(w, tk->key), f, u);
        tabw_line(&t, sb_steal(&b));
        qsort(tk->v, tk->n, sizeof(tk->v[0]), tagval_cmp);
        for (size_t i = 0; i < tk->n; i++) {
            f = measure_scale(tk->v[i].flat, r->sample_unit, r->output_unit, &u);
            char pct[32];
            if (total > 0)
                sb_printf(&b, " \t%.1f%s (%s):\t %s", f, u,
                          measure_percentage(pct, sizeof(pct), tk->v[i].flat, total),
                          tk->v[i].name);
            else
                sb_printf(&b, " \t%.1f%s:\t %s", f, u, tk->v[i].name);
            tabw_line(&t, sb_steal(&b));
        }
        tabw_line(&t, strdup(""));
    }
    tabw_flush(&t);
    free(t.cells);
    for (size_t k = 0; k < nk; k++) {
        for (size_t i = 0; i < keys[k].n; i++)
            free(keys[k].v[i].name);
        free(keys[k].v);
    }
    free(keys);
    if (rc < 0)
        snprintf(err, errlen, "out of memory");
    return rc;
}

int report_comments(report_t *r, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    for (size_t i = 0; i < r->w->p->n_comments; i++)
        fprintf(r->out, "%s\n", work_str(r->w, r->w->p->comments[i]));
    return 0;
}
