/* filter.c — pprof's sample filters on the mutable work view.
 *
 * Matching a regexp against every location's function and file names is
 * the cost here; results are cached per function and per mapping, since
 * many locations share a function. */
#include "tool/graph/filter.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/measure.h"
#include "base/err.h"
#include "base/sbuf.h"
#include "base/strs.h"

/* --- numeric label units -------------------------------------------------- */

const char *numunits_get(const numunits_t *u, int64_t key)
{
    for (size_t i = 0; i < u->n; i++)
        if (u->v[i].key == key)
            return u->v[i].unit;
    return "";
}

void numunits_free(numunits_t *u)
{
    free(u->v);
    u->v = NULL;
    u->n = 0;
}

size_t label_keys(const wsample_t *s, bool num, int64_t *keys, size_t max)
{
    size_t nk = 0;
    for (uint32_t i = 0; i < s->n_labels && nk < max; i++) {
        const profile_label_t *l = &s->labels[i];
        if (num ? !label_is_num(l) : !label_is_str(l))
            continue;
        size_t k;
        for (k = 0; k < nk && keys[k] != l->key; k++)
            ;
        if (k == nk)
            keys[nk++] = l->key;
    }
    return nk;
}

int numunits_compute(const work_t *w, numunits_t *u, char **conflicts)
{
    u->v = NULL;
    u->n = 0;
    if (conflicts)
        *conflicts = NULL;
    size_t cap = 0;
    /* ignored units per key: small list of (key, unit string index) */
    struct ign {
        int64_t key, unit;
    } *ign = NULL;
    size_t nign = 0, capign = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (!label_is_num(l))
                continue;
            size_t k;
            for (k = 0; k < u->n && u->v[k].key != l->key; k++)
                ;
            if (k == u->n) {
                if (err_grow((void **)&u->v, &cap, u->n + 1, sizeof(*u->v)) < 0)
                    goto oom;
                u->v[u->n++] = (numunit_t){l->key, NULL};
            }
            if (l->num_unit == 0)
                continue;
            const char *unit = work_str(w, l->num_unit);
            if (!u->v[k].unit) {
                u->v[k].unit = unit;
            } else if (strcmp(u->v[k].unit, unit) != 0) {
                size_t x;
                for (x = 0; x < nign && !(ign[x].key == l->key && ign[x].unit == l->num_unit); x++)
                    ;
                if (x == nign) {
                    if (err_grow((void **)&ign, &capign, nign + 1, sizeof(*ign)) < 0)
                        goto oom;
                    ign[nign++] = (struct ign){l->key, l->num_unit};
                }
            }
        }
    }
    for (size_t k = 0; k < u->n; k++) {
        if (u->v[k].unit && u->v[k].unit[0])
            continue;
        const char *key = work_str(w, u->v[k].key);
        if (strcmp(key, "alignment") == 0 || strcmp(key, "request") == 0)
            u->v[k].unit = "bytes";
        else
            u->v[k].unit = key;
    }
    if (conflicts && nign) {
        sbuf_t b = {0};
        for (size_t k = 0; k < u->n; k++) {
            const char *list[64];
            size_t nl = 0;
            for (size_t x = 0; x < nign && nl < 64; x++)
                if (ign[x].key == u->v[k].key)
                    list[nl++] = work_str(w, ign[x].unit);
            if (!nl)
                continue;
            strs_sort(list, nl);
            sb_printf(&b, "For tag %s used unit %s, also encountered unit(s) ",
                      work_str(w, u->v[k].key), u->v[k].unit);
            for (size_t x = 0; x < nl; x++)
                sb_printf(&b, "%s%s", x ? ", " : "", list[x]);
            sb_putc(&b, '\n');
        }
        *conflicts = sb_steal(&b);
    }
    free(ign);
    return 0;
oom:
    free(ign);
    numunits_free(u);
    return -ENOMEM;
}

/* --- name matching ------------------------------------------------------------ */

typedef struct {
    const work_t *w;
    const rx_t *rx;
    uint8_t *fn;  /* per function: 0 unknown, 1 no, 2 yes (name or file) */
    uint8_t *map; /* per mapping */
} matcher_t;

static bool matcher_init(matcher_t *m, const work_t *w, const rx_t *rx)
{
    m->w = w;
    m->rx = rx;
    m->fn = calloc(w->n_funcs + 1, 1);
    m->map = calloc(w->p->n_mappings + 1, 1);
    return m->fn && m->map;
}

static void matcher_free(matcher_t *m)
{
    free(m->fn);
    free(m->map);
}

static bool match_fn(matcher_t *m, uint32_t fn)
{
    if (!fn)
        return false;
    uint8_t *c = &m->fn[fn - 1];
    if (!*c) {
        const wfunc_t *f = &m->w->funcs[fn - 1];
        bool r = rx_match(m->rx, work_str(m->w, f->name)) ||
                 rx_match(m->rx, work_str(m->w, f->filename));
        *c = r ? 2 : 1;
    }
    return *c == 2;
}

static bool match_map(matcher_t *m, const wloc_t *l)
{
    if (!l->mapping)
        return false;
    uint8_t *c = &m->map[l->mapping - 1];
    if (!*c)
        *c = rx_match(m->rx, work_loc_objfile(m->w, l)) ? 2 : 1;
    return *c == 2;
}

static bool loc_matches(matcher_t *m, const wloc_t *l)
{
    for (uint32_t i = 0; i < l->n_lines; i++)
        if (match_fn(m, l->lines[i].fn))
            return true;
    return match_map(m, l);
}

/* pprof's unmatchedLines/matchedLines, in place. */
static void keep_lines(matcher_t *m, wloc_t *l, bool want_match)
{
    if (match_map(m, l)) {
        if (!want_match)
            l->n_lines = 0;
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->n_lines; i++) {
        bool keep;
        if (!l->lines[i].fn)
            keep = true;
        else
            keep = match_fn(m, l->lines[i].fn) == want_match;
        if (keep)
            l->lines[k++] = l->lines[i];
    }
    l->n_lines = k;
}

enum { FOI_NONE = 0, FOI_FOCUS = 1, FOI_IGNORE = 2 };

void filter_by_name(work_t *w, const rx_t *focus, const rx_t *ignore, const rx_t *hide,
                    const rx_t *show, name_match_t *res)
{
    *res = (name_match_t){0};
    if (!focus && !ignore && !hide && !show) {
        /* Every location is focused, none hidden: the samples without
         * one go, as below, with no pass over every frame. */
        res->fm = w->n_locs > 0;
        size_t k = 0;
        for (size_t i = 0; i < w->n_samples; i++)
            if (w->samples[i].n_locs)
                w->samples[k++] = w->samples[i];
        w->n_samples = k;
        return;
    }
    matcher_t mf = {0}, mi = {0}, mh = {0}, ms = {0};
    uint8_t *foi = calloc(w->n_locs + 1, 1);
    uint8_t *hidden = calloc(w->n_locs + 1, 1);
    bool ok = foi && hidden && (!focus || matcher_init(&mf, w, focus)) &&
              (!ignore || matcher_init(&mi, w, ignore)) && (!hide || matcher_init(&mh, w, hide)) &&
              (!show || matcher_init(&ms, w, show));
    if (!ok)
        goto out; /* out of memory: leave the profile unfiltered */
    bool any_hidden = false;
    for (size_t i = 0; i < w->n_locs; i++) {
        wloc_t *l = &w->locs[i];
        if (ignore && loc_matches(&mi, l)) {
            res->im = true;
            foi[i] = FOI_IGNORE;
        } else if (!focus || loc_matches(&mf, l)) {
            res->fm = true;
            foi[i] = FOI_FOCUS;
        }
        if (hide && loc_matches(&mh, l)) {
            res->hm = true;
            keep_lines(&mh, l, false);
            if (l->n_lines == 0)
                hidden[i] = any_hidden = true;
        }
        if (show) {
            keep_lines(&ms, l, true);
            if (l->n_lines == 0)
                hidden[i] = any_hidden = true;
            else
                res->hnm = true;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        bool f = false, ig = false;
        for (uint32_t j = 0; j < s->n_locs && !ig; j++) {
            uint8_t v = foi[s->locs[j]];
            if (v == FOI_FOCUS)
                f = true;
            else if (v == FOI_IGNORE)
                ig = true;
        }
        if (!f || ig)
            continue;
        if (any_hidden) {
            uint32_t n = 0;
            for (uint32_t j = 0; j < s->n_locs; j++)
                if (!hidden[s->locs[j]])
                    s->locs[n++] = s->locs[j];
            s->n_locs = n;
            if (n == 0)
                continue;
        }
        w->samples[k++] = *s;
    }
    w->n_samples = k;
out:
    free(foi);
    free(hidden);
    matcher_free(&mf);
    matcher_free(&mi);
    matcher_free(&mh);
    matcher_free(&ms);
}

bool filter_show_from(work_t *w, const rx_t *rx)
{
    if (!rx)
        return false;
    matcher_t m;
    uint8_t *hit = calloc(w->n_locs + 1, 1);
    if (!hit || !matcher_init(&m, w, rx)) {
        free(hit);
        return false;
    }
    bool matched = false;
    for (size_t i = 0; i < w->n_locs; i++) {
        wloc_t *l = &w->locs[i];
        if (match_map(&m, l)) {
            hit[i] = 1;
            matched = true;
            continue;
        }
        for (uint32_t j = l->n_lines; j-- > 0;) {
            if (match_fn(&m, l->lines[j].fn)) {
                l->n_lines = j + 1;
                hit[i] = 1;
                matched = true;
                break;
            }
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        for (uint32_t j = s->n_locs; j-- > 0;) {
            if (hit[s->locs[j]]) {
                s->n_locs = j + 1;
                w->samples[k++] = *s;
                break;
            }
        }
    }
    w->n_samples = k;
    free(hit);
    matcher_free(&m);
    return matched;
}

size_t filter_simplify_func(const char *name, const char **start)
{
    if (*name == '.')
        name++;
    *start = name;
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(name + i, "(anonymous namespace)", 21) == 0) {
            i += 20;
            continue;
        }
        if (strncmp(name + i, "operator()", 10) == 0) {
            i += 9;
            continue;
        }
        if (name[i] == '(')
            return i;
    }
    return n;
}

/* rx against the simplified name of function fn (cached). */
static bool match_simplified(const work_t *w, const rx_t *rx, uint8_t *cache, uint32_t fn)
{
    if (!fn)
        return false;
    uint8_t *c = &cache[fn - 1];
    if (!*c) {
        const char *name = work_str(w, w->funcs[fn - 1].name);
        bool r = false;
        if (*name) {
            const char *st;
            size_t len = filter_simplify_func(name, &st);
            char small[256];
            char *buf = len < sizeof(small) ? small : malloc(len + 1);
            if (buf) {
                memcpy(buf, st, len);
                buf[len] = '\0';
                r = rx_match(rx, buf);
                if (buf != small)
                    free(buf);
            }
        }
        *c = r ? 2 : 1;
    }
    return *c == 2;
}

void filter_prune_from(work_t *w, const rx_t *rx)
{
    uint8_t *cache = calloc(w->n_funcs + 1, 1);
    uint8_t *beneath = calloc(w->n_locs + 1, 1);
    if (!cache || !beneath)
        goto out;
    for (size_t i = 0; i < w->n_locs; i++) {
        wloc_t *l = &w->locs[i];
        for (uint32_t j = 0; j < l->n_lines; j++) {
            if (match_simplified(w, rx, cache, l->lines[j].fn)) {
                beneath[i] = 1;
                l->lines += j;
                l->n_lines -= j;
                break;
            }
        }
    }
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        for (uint32_t j = 0; j < s->n_locs; j++) {
            if (beneath[s->locs[j]]) {
                s->locs += j;
                s->n_locs -= j;
                break;
            }
        }
    }
out:
    free(cache);
    free(beneath);
}

static void prune(work_t *w, const rx_t *drop, const rx_t *keep)
{
    uint8_t *dc = calloc(w->n_funcs + 1, 1), *kc = calloc(w->n_funcs + 1, 1);
    uint8_t *mark = calloc(w->n_locs + 1, 1); /* 1 prune beneath, 2 prune */
    if (!dc || !kc || !mark)
        goto out;
    for (size_t i = 0; i < w->n_locs; i++) {
        wloc_t *l = &w->locs[i];
        int64_t j;
        for (j = (int64_t)l->n_lines - 1; j >= 0; j--) {
            uint32_t fn = l->lines[j].fn;
            if (match_simplified(w, drop, dc, fn) && (!keep || !match_simplified(w, keep, kc, fn)))
                break;
        }
        if (j >= 0) {
            if ((uint32_t)j == l->n_lines - 1) {
                mark[i] = 2;
            } else {
                mark[i] = 1;
                l->lines += j + 1;
                l->n_lines -= (uint32_t)(j + 1);
            }
        }
    }
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        bool user = false;
        for (int64_t j = (int64_t)s->n_locs - 1; j >= 0; j--) {
            uint8_t m = mark[s->locs[j]];
            if (!m) {
                user = true;
                continue;
            }
            if (!user)
                continue;
            if (m == 2) {
                s->locs += j + 1;
                s->n_locs -= (uint32_t)(j + 1);
            } else {
                s->locs += j;
                s->n_locs -= (uint32_t)j;
            }
            break;
        }
    }
out:
    free(dc);
    free(kc);
    free(mark);
}

int filter_remove_uninteresting(work_t *w, char *err, size_t errlen)
{
    const char *df = work_str(w, w->p->drop_frames), *kf = work_str(w, w->p->keep_frames);
    if (!*df)
        return 0;
    sbuf_t b = {0};
    sb_printf(&b, "^(%s)$", df);
    rx_t *drop = rx_compile(sb_cstr(&b), err, errlen), *keep = NULL;
    if (!drop) {
        sb_free(&b);
        return -EINVAL;
    }
    if (*kf) {
        sb_reset(&b);
        sb_printf(&b, "^(%s)$", kf);
        keep = rx_compile(sb_cstr(&b), err, errlen);
        if (!keep) {
            rx_free(drop);
            sb_free(&b);
            return -EINVAL;
        }
    }
    sb_free(&b);
    prune(w, drop, keep);
    rx_free(drop);
    rx_free(keep);
    return 0;
}

/* --- tags ---------------------------------------------------------------------- */

typedef enum { TF_EQ, TF_GE, TF_LE, TF_RANGE } tf_op_t;

struct tagfilter {
    const work_t *w;
    const numunits_t *units;
    char *key; /* restrict to this key; NULL = any */
    bool numeric;
    tf_op_t op;
    double lo, hi;
    const char *unit;
    char unitbuf[16];
    rx_t **rx;
    size_t nrx;
};

void tagfilter_free(tagfilter_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nrx; i++)
        rx_free(f->rx[i]);
    free(f->rx);
    free(f->key);
    free(f);
}

/* One match of ([+-]?[[:digit:]]+)([[:alpha:]]+)? starting at or after *pos. */
typedef struct {
    size_t start, end, num_start, num_end, unit_start, unit_end;
} rmatch_t;

static bool find_range(const char *s, size_t from, rmatch_t *m)
{
    size_t n = strlen(s);
    for (size_t i = from; i < n; i++) {
        size_t j = i;
        if ((s[j] == '+' || s[j] == '-') && isdigit((unsigned char)s[j + 1]))
            j++;
        else if (!isdigit((unsigned char)s[j]))
            continue;
        m->start = m->num_start = i;
        while (isdigit((unsigned char)s[j]))
            j++;
        m->num_end = m->unit_start = j;
        while (isalpha((unsigned char)s[j]))
            j++;
        m->unit_end = m->end = j;
        return true;
    }
    return false;
}

static double num_scale(int64_t v, const char *from, const char *to, const char **unit)
{
    return measure_scale(v, from, to, unit);
}

static bool parse_range(tagfilter_t *f, const char *filter)
{
    rmatch_t r[2];
    int nr = 0;
    size_t pos = 0;
    while (nr < 2 && find_range(filter, pos, &r[nr])) {
        pos = r[nr].end > r[nr].start ? r[nr].end : r[nr].start + 1;
        nr++;
    }
    if (nr == 0)
        return false;
    char u0[32] = "", u1[32] = "";
    snprintf(u0, sizeof(u0), "%.*s", (int)(r[0].unit_end - r[0].unit_start),
             filter + r[0].unit_start);
    long long v0 = strtoll(filter + r[0].num_start, NULL, 10);
    const char *unit;
    double sv = num_scale(v0, u0, u0, &unit);
    snprintf(f->unitbuf, sizeof(f->unitbuf), "%s", unit);
    f->unit = f->unitbuf;
    size_t mlen = r[0].end - r[0].start;
    size_t flen = strlen(filter);
    if (nr == 1) {
        f->lo = sv;
        if (r[0].start == 0 && flen == mlen)
            f->op = TF_EQ;
        else if (r[0].start == 0 && flen == mlen + 1 && filter[mlen] == ':')
            f->op = TF_GE;
        else if (r[0].start == 1 && filter[0] == ':' && flen == mlen + 1)
            f->op = TF_LE;
        else
            return false;
        return true;
    }
    /* filter must be exactly m0 ":" m1 */
    if (!(r[0].start == 0 && filter[r[0].end] == ':' && r[1].start == r[0].end + 1 &&
          r[1].end == flen))
        return false;
    snprintf(u1, sizeof(u1), "%.*s", (int)(r[1].unit_end - r[1].unit_start),
             filter + r[1].unit_start);
    long long v1 = strtoll(filter + r[1].num_start, NULL, 10);
    const char *unit2;
    double sv2 = num_scale(v1, u1, f->unit, &unit2);
    if (strcmp(unit2, f->unit) != 0)
        return false;
    f->op = TF_RANGE;
    f->lo = sv;
    f->hi = sv2;
    return true;
}

static bool num_match(const tagfilter_t *f, int64_t v, const char *u)
{
    const char *su;
    double sv = measure_scale(v, u, f->unit, &su);
    if (strcmp(su, f->unit) != 0)
        return false;
    switch (f->op) {
    case TF_EQ: return sv == f->lo;
    case TF_GE: return sv >= f->lo;
    case TF_LE: return sv <= f->lo;
    case TF_RANGE: return sv >= f->lo && sv <= f->hi;
    }
    return false;
}

int tagfilter_compile(const char *name, const char *value, const work_t *w,
                      const numunits_t *units, tagfilter_t **out, char *note, size_t notelen,
                      char *err, size_t errlen)
{
    *out = NULL;
    if (note && notelen)
        note[0] = '\0';
    if (!value || !*value)
        return 0;
    tagfilter_t *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    f->w = w;
    f->units = units;
    const char *eq = strchr(value, '=');
    if (eq) {
        f->key = strndup(value, (size_t)(eq - value));
        value = eq + 1;
    }
    if (parse_range(f, value)) {
        f->numeric = true;
        if (note)
            snprintf(note, notelen, "%s:Interpreted '%s' as range, not regexp", name, value);
        *out = f;
        return 0;
    }
    /* comma-separated regexps */
    const char *p = value;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char *pat = strndup(p, len);
        rx_t **nr = realloc(f->rx, (f->nrx + 1) * sizeof(*nr));
        if (!pat || !nr) {
            free(pat);
            if (nr)
                f->rx = nr;
            tagfilter_free(f);
            return -ENOMEM;
        }
        f->rx = nr;
        char e[200];
        rx_t *rx = rx_compile(pat, e, sizeof(e));
        free(pat);
        if (!rx) {
            snprintf(err, errlen, "parsing %s regexp: %s", name, e);
            tagfilter_free(f);
            return -EINVAL;
        }
        f->rx[f->nrx++] = rx;
        if (!c)
            break;
        p = c + 1;
    }
    *out = f;
    return 0;
}

static bool tag_match(const tagfilter_t *f, const wsample_t *s)
{
    const work_t *w = f->w;
    if (f->numeric) {
        for (uint32_t i = 0; i < s->n_labels; i++) {
            const profile_label_t *l = &s->labels[i];
            if (!label_is_num(l))
                continue;
            const char *key = work_str(w, l->key);
            if (f->key && strcmp(key, f->key) != 0)
                continue;
            if (num_match(f, l->num, numunits_get(f->units, l->key)))
                return true;
        }
        return false;
    }
    if (!f->key) {
        sbuf_t b = {0};
        bool all = true;
        for (size_t r = 0; r < f->nrx && all; r++) {
            bool hit = false;
            for (uint32_t i = 0; i < s->n_labels && !hit; i++) {
                const profile_label_t *l = &s->labels[i];
                if (!label_is_str(l))
                    continue;
                sb_reset(&b);
                sb_printf(&b, "%s:%s", work_str(w, l->key), work_str(w, l->str));
                hit = rx_match(f->rx[r], sb_cstr(&b));
            }
            all = hit;
        }
        sb_free(&b);
        return all;
    }
    for (uint32_t i = 0; i < s->n_labels; i++) {
        const profile_label_t *l = &s->labels[i];
        if (!label_is_str(l) || strcmp(work_str(w, l->key), f->key) != 0)
            continue;
        for (size_t r = 0; r < f->nrx; r++)
            if (rx_match(f->rx[r], work_str(w, l->str)))
                return true;
    }
    return false;
}

void filter_by_tag(work_t *w, const tagfilter_t *focus, const tagfilter_t *ignore, bool *fm,
                   bool *im)
{
    *fm = *im = false;
    size_t k = 0;
    for (size_t i = 0; i < w->n_samples; i++) {
        bool focused = true, ignored = false;
        if (focus)
            focused = tag_match(focus, &w->samples[i]);
        if (ignore)
            ignored = tag_match(ignore, &w->samples[i]);
        *fm = *fm || focused;
        *im = *im || ignored;
        if (focused && !ignored)
            w->samples[k++] = w->samples[i];
    }
    w->n_samples = k;
}

int filter_tags_by_name(work_t *w, const rx_t *show, const rx_t *hide, bool *sm, bool *hm)
{
    *sm = *hm = false;
    size_t total = 0;
    for (size_t i = 0; i < w->n_samples; i++)
        total += w->samples[i].n_labels;
    profile_label_t *store = malloc((total + 1) * sizeof(*store));
    if (!store)
        return -ENOMEM;
    profile_label_t *o = store;
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        profile_label_t *start = o;
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (!label_is_str(l) && !label_is_num(l))
                continue;
            const char *key = work_str(w, l->key);
            bool ms = !show || rx_match(show, key);
            bool mh = hide && rx_match(hide, key);
            if (ms)
                *sm = true;
            if (mh)
                *hm = true;
            if (ms && !mh)
                *o++ = *l;
        }
        s->labels = start;
        s->n_labels = (uint32_t)(o - start);
    }
    free(w->label_store);
    w->label_store = store;
    return 0;
}

/* --- aggregation --------------------------------------------------------------- */

void filter_aggregate(work_t *w, bool inlines, bool function, bool filename, bool linenumber,
                      bool address)
{
    if (!function || !filename)
        for (size_t i = 0; i < w->n_funcs; i++) {
            if (!function)
                w->funcs[i].name = w->funcs[i].system_name = 0;
            if (!filename)
                w->funcs[i].filename = 0;
        }
    if (!inlines || !address || !linenumber)
        for (size_t i = 0; i < w->n_locs; i++) {
            wloc_t *l = &w->locs[i];
            if (!inlines && l->n_lines > 1) {
                l->lines += l->n_lines - 1;
                l->n_lines = 1;
            }
            if (!linenumber)
                for (uint32_t j = 0; j < l->n_lines; j++)
                    l->lines[j].line = 0;
            if (!address)
                l->address = 0;
        }
}
