/* combine.c — unit normalization, merging and base subtraction. */
#include "tool/fetch/combine.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpus.h"
#include "profile/merge.h"
#include "profile/strkeys.h"
#include "tool/fetch/ahead.h"
#include "tool/graph/measure.h"

static const char *str(const profile_t *p, int64_t i)
{
    return i > 0 && (size_t)i < p->n_strings ? p->strings[i] : "";
}

/* The finest of n compatible value types (pprof's CommonValueType);
 * returns -1 when n <= 1 (nothing to do), -EINVAL when incompatible. */
static int common_type(profile_t **ps, const profile_value_type_t **ts, size_t n,
                       size_t *which, char *err, size_t errlen)
{
    if (n <= 1)
        return -1;
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        const profile_t *a = ps[m], *b = ps[i];
        if (!measure_compatible(str(a, ts[m]->type), str(a, ts[m]->unit), str(b, ts[i]->type),
                                str(b, ts[i]->unit))) {
            snprintf(err, errlen, "incompatible types: {%s %s} {%s %s}", str(a, ts[m]->type),
                     str(a, ts[m]->unit), str(b, ts[i]->type), str(b, ts[i]->unit));
            return -EINVAL;
        }
        const char *u;
        if (measure_scale(1, str(b, ts[i]->unit), str(a, ts[m]->unit), &u) < 1)
            m = i;
    }
    *which = m;
    return 0;
}

/* What ScaleProfiles brings every profile to: the period's unit (NULL:
 * left alone) and each column's (NULL: left alone). */
typedef struct {
    char *punit;
    char **units;
    size_t nst;
} scale_plan_t;

static void plan_free(scale_plan_t *sp)
{
    for (size_t k = 0; sp->units && k < sp->nst; k++)
        free(sp->units[k]);
    free(sp->units);
    free(sp->punit);
    memset(sp, 0, sizeof(*sp));
}

/* The plan for ps[0..n) (they, or their header copies: only types and
 * units are read). 0, -EINVAL or -ENOMEM with a message. */
static int plan_scale(profile_t **ps, size_t n, scale_plan_t *sp, char *err, size_t errlen)
{
    memset(sp, 0, sizeof(*sp));
    if (n == 0)
        return 0;
    char e[400];
    /* period types (profiles that have one) */
    const profile_value_type_t *pts[n];
    profile_t *pps[n];
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (ps[i]->period_type.type || ps[i]->period_type.unit) {
            pts[np] = &ps[i]->period_type;
            pps[np++] = ps[i];
        }
    size_t pw = 0;
    int rc = common_type(pps, pts, np, &pw, e, sizeof(e));
    if (rc == -EINVAL) {
        snprintf(err, errlen, "period type: %s", e);
        return rc;
    }
    size_t nst = ps[0]->n_sample_types;
    for (size_t i = 1; i < n; i++)
        if (ps[i]->n_sample_types != nst) {
            snprintf(err, errlen, "inconsistent samples type count: %zu != %zu", nst,
                     ps[i]->n_sample_types);
            return -EINVAL;
        }
    /* per column: the finest unit (by profile index), or none */
    sp->nst = nst;
    sp->units = calloc(nst + 1, sizeof(*sp->units));
    if (!sp->units || (rc == 0 && !(sp->punit = strdup(str(pps[pw], pts[pw]->unit)))))
        goto nomem;
    for (size_t c = 0; c < nst; c++) {
        const profile_value_type_t *ts[n];
        for (size_t i = 0; i < n; i++)
            ts[i] = &ps[i]->sample_types[c];
        size_t wi = 0;
        rc = common_type(ps, ts, n, &wi, e, sizeof(e));
        if (rc == -EINVAL) {
            snprintf(err, errlen, "sample types: %s", e);
            plan_free(sp);
            return rc;
        }
        if (rc == 0 && !(sp->units[c] = strdup(str(ps[wi], ts[wi]->unit))))
            goto nomem;
    }
    return 0;
nomem:
    plan_free(sp);
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

/* The index of unit in p, where *idx already names it (the common case:
 * a profile in the plan's units) without interning: a profile read is not
 * indexed for interning, and building that index costs as much as half
 * its decoding. 0 or -ENOMEM. */
static int set_unit(profile_t *p, int64_t *idx, const char *unit)
{
    if (strcmp(str(p, *idx), unit) == 0)
        return 0;
    return (*idx = profile_intern(p, unit)) < 0 ? -ENOMEM : 0;
}

/* Brings p's period and columns to the plan's units. 0 or -ENOMEM. */
static int apply_scale(profile_t *p, const scale_plan_t *sp)
{
    if ((p->period_type.type || p->period_type.unit) && sp->punit) {
        const char *u;
        p->period = profile_value_of(
            measure_scale(p->period, str(p, p->period_type.unit), sp->punit, &u));
        if (set_unit(p, &p->period_type.unit, sp->punit) < 0)
            return -ENOMEM;
    }
    double ratios[sp->nst + 1];
    for (size_t c = 0; c < sp->nst; c++) {
        if (!sp->units[c]) {
            ratios[c] = 1;
            continue;
        }
        const char *u;
        ratios[c] = measure_scale(1, str(p, p->sample_types[c].unit), sp->units[c], &u);
        if (set_unit(p, &p->sample_types[c].unit, sp->units[c]) < 0)
            return -ENOMEM;
    }
    profile_scale_n(p, ratios, p->n_sample_types);
    return 0;
}

static int scale_profiles(profile_t **ps, size_t n, char *err, size_t errlen)
{
    scale_plan_t sp;
    int rc = plan_scale(ps, n, &sp, err, errlen);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = apply_scale(ps[i], &sp)) < 0)
            snprintf(err, errlen, "out of memory");
    plan_free(&sp);
    return rc;
}

/* One source's strings keyed on a second thread while it merges
 * (profile_merge_keyed): its strings are hashed there, not on the
 * merging thread. */
typedef struct {
    const profile_t *p;
    ahead_t *a;
    strkeys_t *k; /* taken: NULL on OOM */
    bool taken;
} keying_t;

static void key_job(void *ctx, size_t i, void *slot)
{
    (void)i;
    strkeys_t *k = strkeys_new(((const keying_t *)ctx)->p);
    memcpy(slot, &k, sizeof(k));
}

static const uint32_t *key_wait(void *ctx)
{
    keying_t *kg = ctx;
    if (!kg->taken && ahead_take(kg->a, &kg->k) < 0)
        kg->k = NULL;
    kg->taken = true;
    return kg->k ? strkeys_keys(kg->k) : NULL;
}

static uint32_t key_of(void *ctx, const char *s)
{
    return strkeys_of(((keying_t *)ctx)->k, s);
}

static void drop_keys(void *slot)
{
    strkeys_t *k;
    memcpy(&k, slot, sizeof(k));
    strkeys_free(k);
}

/* profile_merge_owned of one profile, its strings keyed on a second
 * thread; a machine of one CPU, or a failure to start one, merges as is. */
static int merge_one(profile_t **ps, profile_t **out, char *err, size_t errlen)
{
    keying_t kg = {ps[0], NULL, NULL, false};
    if (cpus_usable() < 2 ||
        ahead_start(&kg.a, 1, sizeof(strkeys_t *), 1, 1, false, key_job, &kg) < 0)
        return profile_merge_owned(ps, 1, out, err, errlen);
    profile_keyer_t keyer = {key_wait, key_of, &kg};
    int rc = profile_merge_keyed(ps, &keyer, out, err, errlen);
    ahead_end(kg.a, drop_keys);
    strkeys_free(kg.k);
    return rc;
}

int combine_profiles(profile_t **ps, size_t n, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = 0;
    /* Each input as read (merging saturates; driver_fetch checks the result). */
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = profile_check_sums(ps[i], err, errlen);
    if (rc < 0 || (rc = scale_profiles(ps, n, err, errlen)) < 0)
        goto fail;
    return n == 1 ? merge_one(ps, out, err, errlen) : profile_merge_owned(ps, n, out, err, errlen);
fail:
    for (size_t i = 0; i < n; i++)
        profile_free(ps[i]);
    return rc;
}

typedef struct {
    profile_source_fn next;
    void *ctx;
    const scale_plan_t *plan;
} scaled_src_t;

/* The caller's next source, scaled to the plan. */
static int next_scaled(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    const scaled_src_t *ss = ctx;
    int rc = ss->next(ss->ctx, i, p, err, errlen);
    if (rc == 0 && (rc = apply_scale(*p, ss->plan)) < 0) {
        profile_free(*p);
        *p = NULL;
        snprintf(err, errlen, "out of memory");
    }
    return rc;
}

int combine_stream(profile_t **heads, size_t n, profile_source_fn next, void *ctx,
                   profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    scale_plan_t sp;
    int rc = plan_scale(heads, n, &sp, err, errlen);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = apply_scale(heads[i], &sp)) < 0)
            snprintf(err, errlen, "out of memory");
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            profile_free(heads[i]);
        plan_free(&sp);
        return rc;
    }
    scaled_src_t ss = {next, ctx, &sp};
    rc = profile_merge_stream(heads, n, next_scaled, &ss, out, err, errlen);
    plan_free(&sp);
    return rc;
}

/* The sources merged as they are read. plan: ScaleProfiles' plan of a
 * series whose every header is the first's (that of [first, first]), which
 * profile_merger_same_header makes the whole series'. */
struct combine_eager {
    profile_t *first; /* the first source's header */
    scale_plan_t plan;
    profile_merger_t *m;
};

void combine_eager_free(combine_eager_t *e)
{
    if (!e)
        return;
    profile_merger_free(e->m);
    profile_free(e->first);
    plan_free(&e->plan);
    free(e);
}

/* src, done with: the caller's again when it asked (spent), else freed. */
static void spend(profile_t *src, profile_t **spent)
{
    if (spent)
        *spent = src;
    else
        profile_free(src);
}

int combine_eager_add(combine_eager_t **ep, const profile_t *head, profile_t *src,
                      const uint32_t *keys, size_t n_keys, profile_t **spent)
{
    combine_eager_t *e = *ep;
    char err[8];
    int rc = 0;
    if (spent)
        *spent = NULL;
    if (!e) {
        if (!(e = calloc(1, sizeof(*e))) || profile_header_copy(head, &e->first) < 0) {
            free(e);
            spend(src, spent);
            return -ENOMEM;
        }
        profile_t *two[2] = {e->first, e->first};
        if ((rc = plan_scale(two, 2, &e->plan, err, sizeof(err))) < 0 ||
            (rc = apply_scale(e->first, &e->plan)) < 0 || (rc = profile_merger_new(e->first, &e->m)) < 0) {
            combine_eager_free(e);
            spend(src, spent);
            return rc;
        }
        *ep = e;
    } else if (!profile_merger_same_header(e->first, head)) {
        spend(src, spent);
        return 1;
    }
    if ((rc = apply_scale(src, &e->plan)) < 0) {
        spend(src, spent);
        return rc;
    }
    rc = profile_merger_add_kept(e->m, src, keys, n_keys);
    spend(src, spent);
    return rc;
}

int combine_eager_end(combine_eager_t *e, profile_t **heads, size_t n, profile_t **out, char *err,
                      size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = apply_scale(heads[i], &e->plan);
    if (rc == 0) {
        rc = profile_merger_end(e->m, heads, n, out, err, errlen);
        e->m = NULL;
    } else {
        snprintf(err, errlen, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        profile_free(heads[i]);
    combine_eager_free(e);
    return rc;
}

static int set_base_label(profile_t *p)
{
    int64_t key = profile_intern(p, "pprof::base"), val = profile_intern(p, "true");
    if (key < 0 || val < 0)
        return -ENOMEM;
    for (size_t i = 0; i < p->n_samples; i++) {
        profile_sample_t *s = &p->samples[i];
        uint32_t k = 0;
        for (uint32_t j = 0; j < s->n_labels; j++)
            if (s->labels[j].key != key)
                s->labels[k++] = s->labels[j];
        s->n_labels = k;
        profile_label_t l = {key, val, 0, 0};
        if (profile_sample_add_label(p, s, &l) < 0)
            return -ENOMEM;
    }
    return 0;
}

int combine_base(profile_t *p, profile_t *base, bool diff, bool normalize, profile_t **out,
                 char *err, size_t errlen)
{
    *out = NULL;
    int rc = 0;
    if (diff && (rc = set_base_label(base)) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    size_t nst = p->n_sample_types;
    size_t nr = base->n_sample_types > nst ? base->n_sample_types : nst;
    double *r = malloc((nr + 1) * sizeof(*r));
    if (!r) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (normalize) {
        if (base->n_sample_types != nst) {
            free(r);
            snprintf(err, errlen, "incompatible sample types");
            rc = -EINVAL;
            goto fail;
        }
        for (size_t c = 0; c < nst; c++) {
            int64_t bv = 0, sv = 0;
            for (size_t i = 0; i < base->n_samples; i++)
                bv = profile_value_add(bv, base->samples[i].values[c]);
            for (size_t i = 0; i < p->n_samples; i++)
                sv = profile_value_add(sv, p->samples[i].values[c]);
            r[c] = sv == 0 ? 0.0 : (double)bv / (double)sv;
        }
        profile_scale_n(p, r, p->n_sample_types);
    }
    for (size_t c = 0; c < base->n_sample_types; c++)
        r[c] = -1;
    profile_scale_n(base, r, base->n_sample_types);
    free(r);
    profile_t *two[2] = {p, base};
    return combine_profiles(two, 2, out, err, errlen);
fail:
    profile_free(p);
    profile_free(base);
    return rc;
}
