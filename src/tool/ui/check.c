/* check.c — `cprof check`: limits and growth of a profile, for CI. */
#include "tool/ui/check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "tool/driver/driver.h"
#include "tool/graph/measure.h"
#include "tool/ui/checkspec.h"

#define ERRLEN 1024
#define MAX_SELS 64
#define TOP_STACKS 5 /* stacks printed per failure */
#define STACK_FRAMES 8 /* frames printed per stack, leaf first */

static void usage(FILE *f)
{
    fputs("usage: cprof check [-base OLD] [-max 'TYPE[:SETTING=VALUE]...=LIMIT']...\n"
          "                   [-tolerance PCT%] [-junit FILE] NEW\n"
          "\n"
          "Exits 0 when every limit holds on profile NEW and, with -base, NEW has\n"
          "not grown past the tolerance against OLD; 1 otherwise, printing the\n"
          "checks that failed and the top stacks that grew; 2 for bad usage.\n"
          "\n"
          "  -max SPEC       TYPE is a sample type (inuse_space, alloc_objects,\n"
          "                  cpu, ...); each :SETTING=VALUE filters the samples\n"
          "                  first (focus, ignore, tagfocus: any report setting);\n"
          "                  LIMIT is a number with an optional unit (64MB, 2s).\n"
          "                  Repeatable. Example: 'alloc_objects:focus=parse=1000'\n"
          "  -base OLD       also fail when a -max selection (or, without -max,\n"
          "                  the default sample type) grew past the tolerance\n"
          "  -tolerance PCT  growth allowed against OLD, in percent (default 5%)\n"
          "  -junit FILE     write the results as JUnit XML to FILE\n"
          "\n"
          "NEW and OLD are profile files or URLs, as for cprof itself.\n",
          f);
}

/* One selection of samples: a sample type under its filters, with an
 * optional limit. */
typedef struct {
    checkspec_t sp;
    double limit; /* sp.limit_text in the sample type's unit */
    int64_t value, base_value;
} sel_t;

typedef struct {
    const char *base, *junit;
    double tolerance; /* percent */
    const char *sources[1];
    sel_t sels[MAX_SELS];
    size_t n_sels;
} opts_t;

/* A flag's value: -f=v, or the next argument. NULL if missing. */
static const char *flag_value(int argc, char **argv, int *i, const char *eq)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* Command line, with the rules of Go's flag package: flags first. */
static int parse_args(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    int i = 1;
    o->tolerance = 5;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !a[1])
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
#define IS(f) (nl == strlen(f) && strncmp(name, f, nl) == 0)
        if (IS("h") || IS("help"))
            return 1;
        const char *v = NULL;
        if (!IS("base") && !IS("max") && !IS("tolerance") && !IS("junit")) {
            snprintf(err, errlen, "flag provided but not defined: %s", a);
            return -EINVAL;
        }
        if (!(v = flag_value(argc, argv, &i, eq))) {
            snprintf(err, errlen, "flag needs an argument: %s", a);
            return -EINVAL;
        }
        if (IS("base")) {
            o->base = v;
        } else if (IS("junit")) {
            o->junit = v;
        } else if (IS("tolerance")) {
            if (checkspec_tolerance(v, &o->tolerance) < 0) {
                snprintf(err, errlen, "-tolerance %s: want a percentage, as 5%%", v);
                return -EINVAL;
            }
        } else {
            if (o->n_sels == MAX_SELS) {
                snprintf(err, errlen, "more than %d -max flags", MAX_SELS);
                return -EINVAL;
            }
            sel_t *s = &o->sels[o->n_sels++];
            int rc = checkspec_parse(&s->sp, v, err, errlen);
            if (rc < 0)
                return rc;
        }
#undef IS
    }
    if (argc - i != 1) {
        snprintf(err, errlen, argc - i ? "one profile to check, not %d" : "no profile to check",
                 argc - i);
        return -EINVAL;
    }
    o->sources[0] = argv[i];
    if (o->n_sels == 0 && !o->base) {
        snprintf(err, errlen, "nothing to check: give -max or -base");
        return -EINVAL;
    }
    return 0;
}

static profile_t *load(const char *src, const char *base)
{
    source_opts_t so;
    memset(&so, 0, sizeof(so));
    so.sources = (char **)&src;
    so.n_sources = 1;
    so.base = base;
    so.diff_base = base != NULL; /* base samples labelled, as pprof's -diff_base */
    so.seconds = so.timeout = -1;
    return driver_fetch(&so);
}

/* --- measuring a selection, with the driver's filters and sample index ------ */

static int gen_sum(report_t *r, void *arg, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    int64_t sum = 0;
    for (size_t i = 0; i < r->w->n_samples; i++)
        sum = profile_value_add(sum, r->w->samples[i].values[r->value_index]);
    *(int64_t *)arg = sum;
    return 0;
}

/* The selection's total in p; -1 after the driver's message. */
static int measure(profile_t *p, const config_t *cfg, int64_t *out)
{
    return driver_report_with(p, "top", NULL, cfg, stdout, NULL, gen_sum, out);
}

typedef struct {
    char *stack; /* "leaf < caller < ..." */
    int64_t v;
} stk_t;

typedef struct {
    stk_t *a;
    size_t n, cap;
    const char *unit;
} stacks_t;

static int by_stack(const void *a, const void *b)
{
    return strcmp(((const stk_t *)a)->stack, ((const stk_t *)b)->stack);
}

static int by_value_desc(const void *a, const void *b)
{
    int64_t x = ((const stk_t *)a)->v, y = ((const stk_t *)b)->v;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Every sample's stack (function names after the report's aggregation),
 * summed per stack: on the diff profile, what grew is what is positive. */
static int gen_stacks(report_t *r, void *arg, char *err, size_t errlen)
{
    stacks_t *st = arg;
    work_t *w = r->w;
    st->unit = r->sample_unit;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        sbuf_t b = {0};
        size_t frames = 0;
        for (uint32_t j = 0; j < s->n_locs && frames <= STACK_FRAMES; j++) {
            const wloc_t *l = &w->locs[s->locs[j]];
            for (uint32_t k = 0; k < l->n_lines && frames <= STACK_FRAMES; k++, frames++) {
                if (frames)
                    sb_puts(&b, " < ");
                if (frames == STACK_FRAMES) {
                    sb_puts(&b, "...");
                    break;
                }
                uint32_t fn = l->lines[k].fn;
                sb_puts(&b, fn ? work_str(w, w->funcs[fn - 1].name) : "?");
            }
            if (l->n_lines == 0 && frames < STACK_FRAMES) {
                sb_printf(&b, "%s0x%llx", frames ? " < " : "", (unsigned long long)l->address);
                frames++;
            }
        }
        if (err_grow((void **)&st->a, &st->cap, st->n + 1, sizeof(*st->a)) < 0) {
            sb_free(&b);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        st->a[st->n].stack = sb_steal(&b);
        st->a[st->n++].v = s->values[r->value_index];
    }
    if (st->n == 0)
        return 0;
    qsort(st->a, st->n, sizeof(*st->a), by_stack);
    size_t k = 0;
    for (size_t i = 1; i < st->n; i++) {
        if (strcmp(st->a[i].stack, st->a[k].stack) == 0) {
            st->a[k].v = profile_value_add(st->a[k].v, st->a[i].v);
            free(st->a[i].stack);
        } else {
            st->a[++k] = st->a[i];
        }
    }
    st->n = k + 1;
    qsort(st->a, st->n, sizeof(*st->a), by_value_desc);
    return 0;
}

static void stacks_free(stacks_t *st)
{
    for (size_t i = 0; i < st->n; i++)
        free(st->a[i].stack);
    free(st->a);
}

/* The top stacks of the selection that grew (diff: NEW - OLD) or, without
 * a base, the largest, appended to out. */
static void top_stacks(profile_t *p, const config_t *cfg, bool diff, sbuf_t *out)
{
    stacks_t st = {0};
    if (driver_report_with(p, "top", NULL, cfg, stdout, NULL, gen_stacks, &st) == 0) {
        sb_puts(out, diff ? "  top stacks that grew:\n" : "  top stacks:\n");
        size_t shown = 0;
        for (size_t i = 0; i < st.n && shown < TOP_STACKS && st.a[i].v > 0; i++, shown++) {
            char v[64];
            sb_printf(out, "    %s%s  %s\n", diff ? "+" : "", measure_label(v, sizeof(v), st.a[i].v, st.unit),
                      st.a[i].stack);
        }
        if (!shown)
            sb_puts(out, "    (none)\n");
    }
    stacks_free(&st);
}

/* --- results ---------------------------------------------------------------- */

typedef struct {
    char *name;    /* "max inuse_space=64MB", "growth inuse_space" */
    char *message; /* NULL when it passed */
    char *detail;  /* the stacks */
} result_t;

static void xml_text(FILE *f, const char *s)
{
    sbuf_t b = {0};
    sb_html(&b, s);
    for (const char *c = sb_cstr(&b); *c; c++) /* XML 1.0 has no other control characters */
        fputc((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t' ? '?' : *c, f);
    sb_free(&b);
}

static int write_junit(const char *path, const char *profile, const result_t *rs, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += rs[i].message != NULL;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"cprof check\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n"
               "  <testsuite name=\"",
            n, failed);
    xml_text(f, profile);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", n, failed);
    for (size_t i = 0; i < n; i++) {
        fputs("    <testcase classname=\"cprof.check\" name=\"", f);
        xml_text(f, rs[i].name);
        if (!rs[i].message) {
            fputs("\"/>\n", f);
            continue;
        }
        fputs("\">\n      <failure type=\"cprof.check\" message=\"", f);
        xml_text(f, rs[i].message);
        fputs("\">", f);
        xml_text(f, rs[i].detail ? rs[i].detail : "");
        fputs("</failure>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    int rc = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int add_result(result_t *rs, size_t *n, char *name, char *message, const char *detail)
{
    if (!name || (message && !*message && (free(message), message = NULL, false))) {
        free(name);
        free(message);
        return -ENOMEM;
    }
    rs[*n].name = name;
    rs[*n].message = message;
    rs[*n].detail = message && detail ? strdup(detail) : NULL;
    (*n)++;
    return 0;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Runs the checks; 0 all passed, 1 one failed or a profile was unreadable,
 * 2 a selection names no sample type of the profile. */
static int run(opts_t *o)
{
    profile_t *pnew = load(o->sources[0], NULL), *pbase = NULL, *pdiff = NULL;
    int status = 1;
    result_t rs[2 * MAX_SELS + 1];
    size_t nr = 0;
    if (!pnew)
        return 1;
    if (o->base && (!(pbase = load(o->base, NULL)) || !(pdiff = load(o->sources[0], o->base))))
        goto out;
    if (o->n_sels == 0) { /* -base alone: the default sample type grows */
        sel_t *s = &o->sels[o->n_sels++];
        config_default(&s->sp.cfg);
        char err[ERRLEN];
        int vi = driver_sample_index(pnew, "", err, sizeof(err));
        const char *t = vi >= 0 ? pnew->strings[pnew->sample_types[vi].type] : "";
        if (!(s->sp.name = strdup(t)) || config_set_str(&s->sp.cfg.sample_index, t) < 0) {
            driver_msg("out of memory");
            goto out;
        }
        s->sp.spec = s->sp.name;
    }
    for (size_t i = 0; i < o->n_sels; i++) {
        sel_t *s = &o->sels[i];
        char err[ERRLEN];
        int vi = driver_sample_index(pnew, s->sp.cfg.sample_index, err, sizeof(err));
        const char *unit = vi >= 0 ? pnew->strings[pnew->sample_types[vi].unit] : "";
        if (vi < 0) {
            driver_msg("cprof check: %s: %s", s->sp.spec, err);
            status = 2;
            goto out;
        }
        if (s->sp.limit_text && checkspec_limit(s->sp.limit_text, unit, &s->limit) < 0) {
            driver_msg("cprof check: -max %s: limit \"%s\" is not a number with a unit of %s",
                       s->sp.spec, s->sp.limit_text, unit);
            status = 2;
            goto out;
        }
    }
    size_t failed = 0;
    for (size_t i = 0; i < o->n_sels; i++) {
        sel_t *s = &o->sels[i];
        if (measure(pnew, &s->sp.cfg, &s->value) < 0 || (pbase && measure(pbase, &s->sp.cfg, &s->base_value) < 0))
            goto out;
        char vnew[64], vbase[64], lim[64];
        char err[ERRLEN];
        int vi = driver_sample_index(pnew, s->sp.cfg.sample_index, err, sizeof(err));
        const char *unit = pnew->strings[pnew->sample_types[vi].unit];
        measure_label(vnew, sizeof(vnew), s->value, unit);
        bool over = s->sp.limit_text && (double)s->value > s->limit;
        double allowed = (double)s->base_value + fabs((double)s->base_value) * o->tolerance / 100;
        bool grew = pbase && (double)s->value > allowed;
        sbuf_t stacks = {0};
        if (over || grew)
            top_stacks(pbase ? pdiff : pnew, &s->sp.cfg, pbase != NULL, &stacks);
        if (s->sp.limit_text) {
            measure_label(lim, sizeof(lim), profile_value_of(s->limit), unit);
            printf("%s max %s: %s%s%s\n", over ? "FAIL" : "ok  ", s->sp.spec, vnew, over ? " > " : "",
                   over ? s->sp.limit_text : "");
            if (add_result(rs, &nr, fmt("max %s", s->sp.spec),
                           over ? fmt("%s: %s > %s", s->sp.spec, vnew, s->sp.limit_text) : NULL,
                           sb_cstr(&stacks)) < 0)
                goto oom;
            failed += over;
        }
        if (pbase) {
            measure_label(vbase, sizeof(vbase), s->base_value, unit);
            char pct[32] = "new";
            if (s->base_value)
                snprintf(pct, sizeof(pct), "%+.1f%%",
                         100.0 * ((double)s->value - (double)s->base_value) / fabs((double)s->base_value));
            char *msg = fmt("%s: %s, base %s (%s, tolerance %g%%)", s->sp.name, vnew, vbase, pct, o->tolerance);
            printf("%s growth %s\n", grew ? "FAIL" : "ok  ", msg ? msg : s->sp.name);
            if (add_result(rs, &nr, fmt("growth %s", s->sp.name), grew ? msg : (free(msg), NULL),
                           sb_cstr(&stacks)) < 0)
                goto oom;
            failed += grew;
        }
        if (over || grew)
            fputs(sb_cstr(&stacks), stdout);
        sb_free(&stacks);
    }
    printf("cprof check: %zu of %zu checks failed\n", failed, nr);
    status = failed ? 1 : 0;
    if (o->junit) {
        int jrc = write_junit(o->junit, o->sources[0], rs, nr);
        if (jrc < 0) {
            driver_msg("cprof check: writing %s: %s", o->junit, strerror(-jrc));
            status = 1;
        }
    }
    goto out;
oom:
    driver_msg("out of memory");
    status = 1;
out:
    fflush(stdout);
    for (size_t i = 0; i < nr; i++) {
        free(rs[i].name);
        free(rs[i].message);
        free(rs[i].detail);
    }
    profile_free(pnew);
    profile_free(pbase);
    profile_free(pdiff);
    return status;
}

int check_main(int argc, char **argv)
{
    opts_t *o = calloc(1, sizeof(*o));
    char err[ERRLEN];
    if (!o) {
        driver_msg("out of memory");
        return 1;
    }
    int rc = parse_args(argc, argv, o, err, sizeof(err));
    if (rc == 1) {
        usage(stdout);
        rc = 0;
    } else if (rc < 0) {
        driver_msg("cprof check: %s (cprof check -h for usage)", err);
        rc = 2;
    } else {
        rc = run(o);
    }
    for (size_t i = 0; i < o->n_sels; i++)
        checkspec_free(&o->sels[i].sp);
    free(o);
    return rc;
}
