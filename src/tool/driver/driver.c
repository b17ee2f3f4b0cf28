/* driver.c — the cprof pipeline (pprof's internal/driver): sources →
 * merged, symbolized profile → report or shell. */
#include "tool/driver/driver.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cpus.h"
#include "profile/merge.h"
#include "profile/strkeys.h"
#include "tool/driver/browser.h"
#include "tool/fetch/ahead.h"
#include "tool/fetch/combine.h"
#include "tool/report/commands.h"
#include "tool/fetch/fetch.h"
#include "tool/graph/filter.h"
#include "tool/driver/flags.h"
#include "tool/report/list.h"
#include "tool/report/report.h"
#include "tool/symbolize/symbolize.h"
#include "tool/fetch/symbolz.h"
#include "tool/graph/tagroot.h"
#include "tool/graph/work.h"

#define ERRLEN 1024

/* Where driver_report_with also copies messages (the web UI's page). */
static __thread FILE *msg_copy;

void driver_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (msg_copy) {
        va_start(ap, fmt);
        vfprintf(msg_copy, fmt, ap);
        va_end(ap);
        fputc('\n', msg_copy);
    }
}

/* --- sample selection ----------------------------------------------------------- */

int driver_sample_index(const profile_t *p, const char *si, char *err, size_t errlen)
{
    size_t n = p->n_sample_types;
    const char *dst = p->default_sample_type > 0 ? p->strings[p->default_sample_type] : "";
    if (!si || !*si) {
        if (*dst)
            for (size_t i = 0; i < n; i++)
                if (strcmp(p->strings[p->sample_types[i].type], dst) == 0)
                    return (int)i;
        return (int)n - 1;
    }
    char *end;
    errno = 0;
    long v = strtol(si, &end, 10);
    if (*end == '\0' && errno == 0) {
        if (v < 0 || (size_t)v >= n) {
            snprintf(err, errlen, "sample_index %s is outside the range [0..%zu]", si,
                     n ? n - 1 : 0);
            return -1;
        }
        return (int)v;
    }
    const char *noinuse = strncmp(si, "inuse_", 6) == 0 ? si + 6 : si;
    for (size_t i = 0; i < n; i++) {
        const char *t = p->strings[p->sample_types[i].type];
        if (strcmp(t, si) == 0 || strcmp(t, noinuse) == 0)
            return (int)i;
    }
    size_t l = (size_t)snprintf(err, errlen, "sample_index \"%s\" must be one of: [", si);
    for (size_t i = 0; i < n && l < errlen; i++)
        l += (size_t)snprintf(err + l, errlen - l, "%s%s", i ? " " : "",
                              p->strings[p->sample_types[i].type]);
    if (l < errlen)
        snprintf(err + l, errlen - l, "]");
    return -1;
}

/* --- focus & co ------------------------------------------------------------------- */

static int compile_opt(const char *name, const char *value, rx_t **out)
{
    *out = NULL;
    if (!value || !*value)
        return 0;
    char e[256];
    *out = rx_compile(value, e, sizeof(e));
    if (!*out) {
        driver_msg("parsing %s regexp: %s", name, e);
        return -1;
    }
    return 0;
}

static void warn_nomatch(bool matched, const char *option)
{
    if (!matched)
        driver_msg("%s expression matched no samples", option);
}

/* pprof's applyFocus. */
static int apply_focus(work_t *w, const config_t *c, const numunits_t *units)
{
    rx_t *focus = NULL, *ignore = NULL, *hide = NULL, *show = NULL, *show_from = NULL,
         *prune = NULL, *tagshow = NULL, *taghide = NULL;
    tagfilter_t *tf = NULL, *ti = NULL;
    int rc = -1;
    char note[512], e[512];
    if (compile_opt("focus", c->focus, &focus) < 0 || compile_opt("ignore", c->ignore, &ignore) < 0 ||
        compile_opt("hide", c->hide, &hide) < 0 || compile_opt("show", c->show, &show) < 0 ||
        compile_opt("show_from", c->show_from, &show_from) < 0)
        goto out;
    if (tagfilter_compile("tagfocus", c->tagfocus, w, units, &tf, note, sizeof(note), e,
                          sizeof(e)) < 0) {
        driver_msg("%s", e);
        goto out;
    }
    if (*note)
        driver_msg("%s", note);
    if (tagfilter_compile("tagignore", c->tagignore, w, units, &ti, note, sizeof(note), e,
                          sizeof(e)) < 0) {
        driver_msg("%s", e);
        goto out;
    }
    if (*note)
        driver_msg("%s", note);
    if (compile_opt("prune_from", c->prune_from, &prune) < 0)
        goto out;

    name_match_t m;
    filter_by_name(w, focus, ignore, hide, show, &m);
    warn_nomatch(!focus || m.fm, "Focus");
    warn_nomatch(!ignore || m.im, "Ignore");
    warn_nomatch(!hide || m.hm, "Hide");
    warn_nomatch(!show || m.hnm, "Show");
    bool sfm = filter_show_from(w, show_from);
    warn_nomatch(!show_from || sfm, "ShowFrom");
    if (tf || ti) {
        bool fm, im;
        filter_by_tag(w, tf, ti, &fm, &im);
        warn_nomatch(!tf || fm, "TagFocus");
        warn_nomatch(!ti || im, "TagIgnore");
    }
    if (compile_opt("tagshow", c->tagshow, &tagshow) < 0 ||
        compile_opt("taghide", c->taghide, &taghide) < 0)
        goto out;
    if (tagshow || taghide) {
        bool sm, hm;
        if (filter_tags_by_name(w, tagshow, taghide, &sm, &hm) < 0) {
            driver_msg("out of memory");
            goto out;
        }
        warn_nomatch(!tagshow || sm, "TagShow");
        warn_nomatch(!taghide || hm, "TagHide");
    }
    if (prune)
        filter_prune_from(w, prune);
    rc = 0;
out:
    rx_free(focus);
    rx_free(ignore);
    rx_free(hide);
    rx_free(show);
    rx_free(show_from);
    rx_free(prune);
    rx_free(tagshow);
    rx_free(taghide);
    tagfilter_free(tf);
    tagfilter_free(ti);
    return rc;
}

/* pprof's aggregate(): granularity. */
static int aggregate(work_t *w, const config_t *c)
{
    bool inlines = !c->noinlines, function = false, filename = false, linenumber = false,
         address = false;
    const char *g = c->granularity;
    if (strcmp(g, "addresses") == 0) {
        if (inlines)
            return 0;
        function = filename = linenumber = address = true;
    } else if (strcmp(g, "lines") == 0) {
        function = filename = linenumber = true;
    } else if (strcmp(g, "files") == 0) {
        filename = true;
    } else if (strcmp(g, "functions") == 0) {
        function = true;
    } else if (strcmp(g, "filefunctions") == 0) {
        function = filename = true;
    } else {
        driver_msg("unexpected granularity");
        return -1;
    }
    filter_aggregate(w, inlines, function, filename, linenumber, address);
    return 0;
}

/* The file-name cleanup every graph-based report applies first. */
static void trim_paths(work_t *w, const config_t *c)
{
    for (size_t i = 0; i < w->n_funcs; i++) {
        const char *f = work_str(w, w->funcs[i].filename);
        if (!*f)
            continue;
        const char *t = list_trim_path(f, c->trim_path, c->source_path);
        if (t != f) {
            int64_t s = profile_intern(w->p, t);
            if (s >= 0)
                w->funcs[i].filename = s;
        }
    }
}

/* Where a binary report goes when stdout is a terminal: profileNNN.EXT. */
static FILE *away_from_tty(const char *ext, char *name, size_t n)
{
    for (int i = 1; i < 10000; i++) {
        snprintf(name, n, "profile%03d.%s", i, ext);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
            return fdopen(fd, "w");
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

/* Shows a report written to a temporary file (web, eog, evince, gv, the
 * shell's flame): in the viewer, waiting for it on the command line as
 * pprof does; its path when there is none. A failed report's file goes.
 * -1 when the viewer failed (said, naming the command). */
static int show_file(const char *path, const char *viewer, bool interactive, bool ok)
{
    if (!ok) {
        unlink(path);
        return 0;
    }
    bool browser = strcmp(viewer, "browser") == 0;
    char why[1024] = "";
    int rc = browser_open(path, browser ? NULL : viewer, !interactive, why, sizeof(why));
    if (rc == -ENOENT && browser)
        driver_msg("no browser found (set $BROWSER); the report is in %s", path);
    else if (rc == -ENOENT)
        driver_msg("%s: not found; the report is in %s", viewer, path);
    else if (rc < 0)
        driver_msg("%s", why);
    return rc < 0 && rc != -ENOENT ? -1 : 0;
}

/* driver_report, to dest when given (then -output is not looked at),
 * through gen instead of report_generate when given. */
static int report_to(profile_t *p, const char *cmdname, const char *param, const config_t *cfg0,
                     bool interactive, bool last, FILE *dest, driver_gen_fn gen, void *gen_arg)
{
    const command_t *cmd = command_find(cmdname);
    if (!cmd) {
        driver_msg("unrecognized command: \"%s\"", cmdname);
        return -1;
    }
    if (!cmd->render) {
        driver_msg("%s: not available in this version of cprof", cmd->name);
        return -1;
    }
    config_t cfg;
    if (config_copy(&cfg, cfg0) < 0) {
        driver_msg("out of memory");
        return -1;
    }
    command_apply_defaults(cmd, &cfg);
    /* The viewer commands (web, eog, ...) and a shell's flame without >file
     * write a temporary file and show it; -flame FILE names its output. */
    const char *viewer = NULL, *view_ext = NULL;
    char view_path[4096] = "";
    if (cmd->param_is_file) {
        if (param && strcmp(param, "-") == 0)
            config_set_str(&cfg.output, "");
        else if (param && *param)
            config_set_str(&cfg.output, param);
        else if (!dest && !(cfg.output && *cfg.output))
            viewer = "browser", view_ext = "html";
        param = NULL;
    } else if (!dest && !(cfg.output && *cfg.output) && cmd->dot.viewer) {
        viewer = cmd->dot.viewer;
        view_ext = cmd->dot.format;
    }
    int rc = -1;
    char err[ERRLEN];
    work_t *w = NULL;
    numunits_t units = {0};
    rx_t *symbol = NULL;
    FILE *out = dest ? dest : stdout;
    bool close_out = false;
    char *filters[16];
    size_t nfilters = 0;

    /* The last report's view takes the stacks, locations and functions. */
    if ((last ? work_take : work_new)(p, &w, err, sizeof(err)) < 0) {
        driver_msg("%s", err);
        goto done;
    }
    if (last) /* their chunks lie among others on malloc's heap: free alone
               * would keep the pages */
        malloc_trim(0);
    char *conflicts = NULL;
    if (numunits_compute(w, &units, &conflicts) < 0) {
        driver_msg("out of memory");
        goto done;
    }
    if (conflicts && *conflicts)
        fputs(conflicts, stderr);
    free(conflicts);
    if (filter_remove_uninteresting(w, err, sizeof(err)) < 0) {
        driver_msg("failed to compile regexp %s", err);
        goto done;
    }
    /* Before the filters, which may then match the label frames (pprof drops
     * the uninteresting frames earlier, when it fetches). */
    bool root_match, leaf_match;
    if (tagroot_add(w, cfg.tagroot, cfg.tagleaf, cfg.unit, &root_match, &leaf_match) < 0) {
        driver_msg("out of memory");
        goto done;
    }
    if (cfg.tagroot && *cfg.tagroot && !root_match)
        driver_msg("TagRoot expression matched no samples");
    if (cfg.tagleaf && *cfg.tagleaf && !leaf_match)
        driver_msg("TagLeaf expression matched no samples");
    if (cfg.relative_percentages && apply_focus(w, &cfg, &units) < 0)
        goto done;

    if (p->n_sample_types == 0) {
        driver_msg("profile has no samples");
        goto done;
    }
    int vi = driver_sample_index(p, cfg.sample_index, err, sizeof(err));
    if (vi < 0) {
        driver_msg("%s", err);
        goto done;
    }
    if (cfg.divide_by == 0) {
        driver_msg("zero divisor specified");
        goto done;
    }
    static const struct {
        const char *name;
        size_t off;
    } fl[] = {{"focus", offsetof(config_t, focus)},         {"ignore", offsetof(config_t, ignore)},
              {"hide", offsetof(config_t, hide)},           {"show", offsetof(config_t, show)},
              {"show_from", offsetof(config_t, show_from)}, {"tagfocus", offsetof(config_t, tagfocus)},
              {"tagignore", offsetof(config_t, tagignore)}, {"tagshow", offsetof(config_t, tagshow)},
              {"taghide", offsetof(config_t, taghide)}};
    for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
        const char *v = *(char **)((char *)&cfg + fl[i].off);
        if (v && *v && asprintf(&filters[nfilters], "%s=%s", fl[i].name, v) >= 0)
            nfilters++;
    }
    char stype[256];
    snprintf(stype, sizeof(stype), "%s%s", cfg.mean ? "mean_" : "",
             p->strings[p->sample_types[vi].type]);

    if (param) {
        symbol = rx_compile(param, err, sizeof(err));
        if (!symbol) {
            driver_msg("parsing argument regexp %s: %s", param, err);
            goto done;
        }
    }

    report_t r = {0};
    r.w = w;
    r.cmd = cmd;
    r.cfg = &cfg;
    r.symbol = symbol;
    r.value_index = vi;
    r.mean_index = cfg.mean ? 0 : -1;
    r.sample_type = stype;
    r.sample_unit = p->strings[p->sample_types[vi].unit];
    snprintf(r.output_unit, sizeof(r.output_unit), "%s", cfg.unit);
    r.ratio = 1 / cfg.divide_by;
    r.total = report_compute_total(w, r.value_index, r.mean_index);
    r.filters = (const char *const *)filters;
    r.n_filters = nfilters;
    r.units = &units;

    if (!cfg.relative_percentages && apply_focus(w, &cfg, &units) < 0)
        goto done;
    if (aggregate(w, &cfg) < 0)
        goto done;
    if (cmd->graph)
        trim_paths(w, &cfg);

    if (dest) {
        /* the caller's stream */
    } else if (cfg.output && *cfg.output) {
        driver_msg("Generating report in %s", cfg.output);
        out = fopen(cfg.output, cmd->binary ? "wb" : "w");
        if (!out) {
            driver_msg("open %s: %s", cfg.output, strerror(errno));
            goto done;
        }
        close_out = true;
    } else if (viewer) {
        const char *td = getenv("TMPDIR");
        snprintf(view_path, sizeof(view_path), "%s/cprof-XXXXXX.%s", td && *td ? td : "/tmp",
                 view_ext);
        int fd = mkstemps(view_path, (int)strlen(view_ext) + 1);
        if (fd < 0 || !(out = fdopen(fd, "w"))) {
            driver_msg("creating a temporary file: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            view_path[0] = '\0';
            goto done;
        }
        close_out = true;
    } else if (cmd->binary && (interactive || isatty(STDOUT_FILENO))) {
        char name[64];
        out = away_from_tty(cmd->dot.format ? cmd->dot.format : "pb.gz", name, sizeof(name));
        if (!out) {
            driver_msg("creating a temporary file: %s", strerror(errno));
            goto done;
        }
        driver_msg("Generating report in %s", name);
        close_out = true;
    }
    /* Like pprof, a report that fails prints nothing but its error. Only
     * -peek can fail after it started printing (no node matched), so only
     * it is built in memory first; the others stream. */
    char *text = NULL;
    size_t tlen = 0;
    r.out = cmd->format == FMT_TREE && symbol ? open_memstream(&text, &tlen) : out;
    if (!r.out) {
        driver_msg("out of memory");
        goto done;
    }
    int grc = gen ? gen(&r, gen_arg, err, sizeof(err)) : report_generate(&r, err, sizeof(err));
    if (r.out != out)
        fclose(r.out);
    if (grc == 0 && text && tlen && fwrite(text, 1, tlen, out) != tlen) {
        snprintf(err, sizeof(err), "writing report: %s", strerror(errno));
        grc = -EIO;
    }
    free(text);
    if (grc < 0) {
        driver_msg("%s", err);
        goto done;
    }
    rc = 0;
done:
    if (close_out) {
        if (fclose(out) != 0 && rc == 0) {
            driver_msg("writing %s: %s", cfg.output ? cfg.output : "report", strerror(errno));
            rc = -1;
        }
    } else {
        fflush(out);
    }
    if (*view_path && show_file(view_path, viewer, interactive, rc == 0) < 0)
        rc = -1;
    for (size_t i = 0; i < nfilters; i++)
        free(filters[i]);
    rx_free(symbol);
    numunits_free(&units);
    work_free(w);
    config_free(&cfg);
    return rc;
}

int driver_report(profile_t *p, const char *cmdname, const char *param, const config_t *cfg0,
                  bool interactive, bool last)
{
    return report_to(p, cmdname, param, cfg0, interactive, last, NULL, NULL, NULL);
}

int driver_report_with(profile_t *p, const char *cmdname, const char *param, const config_t *cfg,
                       FILE *out, FILE *messages, driver_gen_fn gen, void *arg)
{
    FILE *saved = msg_copy;
    msg_copy = messages;
    int rc = report_to(p, cmdname, param, cfg, false, false, out, gen, arg);
    msg_copy = saved;
    return rc;
}

/* --- loading -------------------------------------------------------------------------- */

/* locateBinaries' overrides: a mapping for mapping-less profiles, and the
 * BINARY / -buildid overrides of mapping[0]. */
static int override_mappings(profile_t *p, const source_opts_t *s)
{
    if (p->n_mappings == 0) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m)
            return -ENOMEM;
        m->id = 1;
        for (size_t i = 0; i < p->n_locations; i++)
            p->locations[i].mapping_id = 1;
        if (profile_index(p) < 0)
            return -ENOMEM;
    }
    if (s->exec_name) {
        int64_t f = profile_intern(p, s->exec_name);
        if (f < 0)
            return -ENOMEM;
        p->mappings[0].filename = f;
    }
    if (s->build_id) {
        int64_t b = profile_intern(p, s->build_id);
        if (b < 0)
            return -ENOMEM;
        p->mappings[0].build_id = b;
    }
    return 0;
}

/* What fetching leaves for later: where remote mappings came from
 * (remote symbolization) and whether anything was fetched over HTTP (then
 * the result is saved, as pprof does). */
typedef struct {
    symbolz_sources_t zs;
    bool remote;
} fetched_t;

/* A group of local files merged as they are read (combine_eager), or,
 * when their headers differ, as they are read a second time, one at a time
 * (combine_stream): the group's profiles are then header copies. */
typedef struct {
    const char *const *names;
    const size_t *which; /* group position -> index in names */
    const source_opts_t *s;
    profile_t *first;      /* the first source as read: the merge's first, not read again */
    char sums_err[ERRLEN]; /* the first source whose sums fail, as read */
    combine_eager_t *eager; /* the sources merged as read; NULL once a header differs */
    bool no_eager;          /* a header differed: combine_stream reads them again */
} stream_t;

/* Reads the i-th file of a streamed group again (the first: hands it over). */
static int refetch(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    stream_t *st = ctx;
    if (i == 0 && st->first) {
        *p = st->first;
        st->first = NULL;
        return 0;
    }
    const char *name = st->names[st->which[i]];
    char e[ERRLEN];
    int rc = fetch_file(name, p, e, sizeof(e));
    if (rc < 0) {
        for (char *c = e; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        snprintf(err, errlen, "%s: %s", name, e);
        return rc;
    }
    if (override_mappings(*p, st->s) < 0) {
        profile_free(*p);
        *p = NULL;
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* A local source as read ahead of the merge (read_ahead, on the worker):
 * what grab's loop would otherwise compute when it reaches it. */
typedef struct {
    profile_t *p;     /* NULL when rc < 0 or oom */
    int rc;           /* fetch_file's */
    bool oom;         /* override_mappings failed */
    int sums_rc;      /* profile_check_sums' */
    char err[ERRLEN]; /* fetch_file's message, or else the sums' */
    uint32_t *keys;   /* p's strings' keys (strkeys_series_add), NULL on OOM */
} loaded_t;

/* Sources are read and decoded by up to this many workers and, while it
 * waits for one, by the main thread (a series' sources are independent):
 * on 2 CPUs, one worker beside the main thread, which merges. One worker
 * alone was the busier thread, ~0.9 s CPU against the main thread's
 * ~0.6 s (50 snapshots, -top). */
#define WORKERS_MAX 3
/* At most workers + 2 sources are decoded, or being decoded, ahead of the
 * one being merged (~10 MB each for a 50,000-location snapshot): one for
 * each decoder, and one more, so that a worker done with its source while
 * the main thread decodes the next starts the one after: with workers + 1
 * the worker waited 0.91-1.08 s of a 50-snapshot -top (3 runs, load 3;
 * 48 MB peak), with workers + 2 0.002-0.027 s (56 MB). (With one
 * worker and no help, two ahead were no faster than one: 50 snapshots,
 * -top, 5 runs each, load 1: 2.18 s against 2.25 s median, 68 MB at the
 * peak against 58.) */
#define AHEAD_MAX (WORKERS_MAX + 2)

/* Merged sources given back for the decoders to decode later ones into
 * (profile_clear): their memory is in use already, where a new profile's
 * would be faulted in a page at a time (113,700 page faults for 50
 * snapshots of 50,000 locations, 15% of the CPU time). As many as are
 * decoded or merged at once at most, so the series holds no more
 * sources' memory than it has held already. */
#define SPARES (AHEAD_MAX + 1)
typedef struct {
    pthread_mutex_t mu;
    profile_t *p[SPARES];
    size_t n;
} spare_t;

static profile_t *spare_take(spare_t *sp)
{
    pthread_mutex_lock(&sp->mu);
    profile_t *p = sp->n ? sp->p[--sp->n] : NULL;
    pthread_mutex_unlock(&sp->mu);
    return p;
}

/* Keeps p (taken) for spare_take, or frees it when SPARES are kept. */
static void spare_give(spare_t *sp, profile_t *p)
{
    pthread_mutex_lock(&sp->mu);
    if (p && sp->n < SPARES) {
        sp->p[sp->n++] = p;
        p = NULL;
    }
    pthread_mutex_unlock(&sp->mu);
    profile_free(p);
}

static void spare_free(spare_t *sp)
{
    while (sp->n)
        profile_free(sp->p[--sp->n]);
}

typedef struct {
    const char *const *names;
    const source_opts_t *s;
    /* the decoders': keys of the sources' strings, hashed and compared
     * there, so that the merge interns each distinct one once
     * (profile_merger_add_keyed); keys_mu serializes them (a key stands
     * for one string whichever source was keyed first) */
    strkeys_series_t *keys;
    pthread_mutex_t keys_mu;
    spare_t spare; /* the main thread gives, the decoders take */
} ahead_ctx_t;

/* Reads, decodes and checks source i: nothing here touches what the other
 * decoders and the main thread do meanwhile (the decoder has no global
 * state; keys and spares have their locks). */
static void read_ahead(void *ctx, size_t i, void *slot)
{
    ahead_ctx_t *c = ctx;
    loaded_t *l = slot;
    memset(l, 0, sizeof(*l));
    if ((l->rc = fetch_file_reuse(c->names[i], spare_take(&c->spare), &l->p, l->err,
                                  sizeof(l->err))) < 0)
        return;
    if (override_mappings(l->p, c->s) < 0) {
        profile_free(l->p);
        l->p = NULL;
        l->oom = true;
        return;
    }
    l->sums_rc = profile_check_sums(l->p, l->err, sizeof(l->err));
    if (c->keys) { /* NULL on OOM: the merge then interns them itself */
        pthread_mutex_lock(&c->keys_mu);
        l->keys = strkeys_series_add(c->keys, l->p);
        pthread_mutex_unlock(&c->keys_mu);
    }
}

static void drop_loaded(void *slot)
{
    profile_free(((loaded_t *)slot)->p);
    free(((loaded_t *)slot)->keys);
}

/* Merges the profiles of one group (sources or bases); NULL (after
 * messages) if none could be fetched. ps are consumed; st: the group is
 * streamed. */
static profile_t *combine_group(profile_t **ps, size_t got, size_t n, bool base, stream_t *st)
{
    char err[ERRLEN];
    if (got == 0) {
        driver_msg(base ? "failed to fetch any base profiles" : "failed to fetch any source profiles");
        return NULL;
    }
    if (got != n)
        driver_msg("Fetched %zu %s profiles out of %zu", got, base ? "base" : "source", n);
    profile_t *out;
    int rc;
    if (st && st->sums_err[0]) {
        for (size_t i = 0; i < got; i++)
            profile_free(ps[i]);
        snprintf(err, sizeof(err), "%s", st->sums_err);
        rc = -1;
    } else if (st && st->eager) {
        rc = combine_eager_end(st->eager, ps, got, &out, err, sizeof(err));
        st->eager = NULL;
    } else if (st) {
        rc = combine_stream(ps, got, refetch, st, &out, err, sizeof(err));
    } else {
        rc = combine_profiles(ps, got, &out, err, sizeof(err));
    }
    if (st) { /* the first source is left when the merge did not reach it */
        profile_free(st->first);
        st->first = NULL;
        combine_eager_free(st->eager);
        st->eager = NULL;
    }
    if (rc < 0) {
        driver_msg("%s", err);
        return NULL;
    }
    return out;
}

/* Fetches every source and the base (URLs all at once, as pprof fetches
 * them concurrently) and merges each group. 0, or -1 after messages. */
static int grab(const source_opts_t *s, fetched_t *f, profile_t **src, profile_t **base)
{
    size_t n = s->n_sources + (s->base ? 1 : 0);
    const char **names = calloc(n + 1, sizeof(*names));
    profile_t **ps = calloc(n + 1, sizeof(*ps));
    fetch_target_t *tg = calloc(n + 1, sizeof(*tg));
    bool *is_url = calloc(n + 1, sizeof(*is_url));
    fetch_target_t *urls = calloc(n + 1, sizeof(*urls));
    fetch_body_t *bodies = calloc(n + 1, sizeof(*bodies));
    size_t *which = calloc(n + 1, sizeof(*which)); /* streamed sources' names */
    int rc = -1;
    *src = *base = NULL;
    if (!names || !ps || !tg || !is_url || !urls || !bodies || !which) {
        driver_msg("out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n_sources; i++)
        names[i] = s->sources[i];
    if (s->base)
        names[n - 1] = s->base;
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(is_url[i] = fetch_adjust_url(names[i], s->seconds, s->timeout, &tg[i])))
            continue;
        driver_msg("Fetching profile over HTTP from %s", tg[i].url);
        if (s->seconds > 0) {
            char d[32];
            fetch_go_duration(d, sizeof(d), (long long)s->seconds * 1000);
            driver_msg("Please wait... (%s)", d);
        }
        urls[nu++] = tg[i];
    }
    fetch_get_all(urls, nu, bodies);
    /* Several local sources (a series of snapshots, say) are streamed:
     * holding every decoded source until the merge cost ~10 MB for each
     * 50,000-location snapshot. Each is merged as it is read while the
     * headers agree; else the first read keeps each one's header and
     * checks its sums, and the merge reads it again. */
    stream_t st = {names, which, s, NULL, "", NULL, false};
    bool stream = s->n_sources > 1;
    for (size_t i = 0; i < s->n_sources; i++)
        stream = stream && !is_url[i];
    /* A streamed series is read and decoded on other threads (and on this
     * one while it waits) while this one merges: in order, so the result
     * and the messages are the same. */
    ahead_ctx_t actx = {names, s, stream ? strkeys_series_new() : NULL,
                        PTHREAD_MUTEX_INITIALIZER, {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0}};
    size_t workers = (size_t)cpus_usable() - 1;
    if (workers > WORKERS_MAX)
        workers = WORKERS_MAX;
    ahead_t *ra = NULL;
    if (stream && ahead_start(&ra, s->n_sources, sizeof(loaded_t), workers + 2, workers, true,
                              read_ahead, &actx) < 0) {
        strkeys_series_free(actx.keys);
        driver_msg("out of memory");
        goto out;
    }
    size_t got_src = 0, got_base = 0;
    for (size_t i = 0, u = 0; i < n; i++) {
        char err[ERRLEN];
        profile_t *p = NULL;
        int frc, sums_rc = 0;
        bool ahead = ra && i < s->n_sources, oom = false; /* ahead: read_ahead's work is done */
        uint32_t *keys = NULL; /* p's strings' keys, when ahead */
        size_t n_keys = 0;
        if (ahead) {
            loaded_t l;
            ahead_take(ra, &l);
            p = l.p;
            keys = l.keys;
            n_keys = p && keys ? p->n_strings : 0;
            frc = l.rc;
            oom = l.oom;
            sums_rc = l.sums_rc;
            memcpy(err, l.err, sizeof(err));
        } else if (is_url[i]) {
            fetch_body_t *b = &bodies[u++];
            frc = b->rc;
            if (frc < 0)
                snprintf(err, sizeof(err), "%s", b->err);
            else
                frc = fetch_parse_body(b, &p, err, sizeof(err));
            fetch_body_free(b);
        } else {
            frc = fetch_file_ahead(names[i], &p, err, sizeof(err));
        }
        if (frc < 0) {
            free(keys);
            /* one line: decoders may quote the input's bytes */
            for (char *c = err; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = '?';
            driver_msg("%s: %s", names[i], err);
            continue;
        }
        if (oom || (!ahead && override_mappings(p, s) < 0) ||
            (is_url[i] && symbolz_collect(p, tg[i].url, tg[i].timeout_ms, &f->zs) < 0)) {
            driver_msg("out of memory");
            profile_free(p);
            free(keys);
            continue;
        }
        f->remote = f->remote || is_url[i];
        if (s->base && i == n - 1) {
            free(keys); /* none: the base is not read ahead */
            ps[s->n_sources + got_base++] = p;
            continue;
        }
        if (stream) {
            profile_t *h;
            if (!ahead)
                sums_rc = profile_check_sums(p, err, sizeof(err));
            if (!st.sums_err[0] && sums_rc < 0)
                snprintf(st.sums_err, sizeof(st.sums_err), "%s", err);
            if (profile_header_copy(p, &h) < 0) {
                driver_msg("out of memory");
                profile_free(p);
                free(keys);
                continue;
            }
            if (!st.no_eager && !st.sums_err[0]) {
                profile_t *spent;
                int erc = combine_eager_add(&st.eager, h, p, keys, n_keys, &spent);
                p = NULL;
                spare_give(&actx.spare, spent);
                if (erc != 0) { /* read them again: combine_stream */
                    combine_eager_free(st.eager);
                    st.eager = NULL;
                    st.no_eager = true;
                }
            } else if (st.eager) { /* a sum failed: nothing is merged */
                combine_eager_free(st.eager);
                st.eager = NULL;
                st.no_eager = true;
            }
            if (got_src == 0 && p)
                st.first = p;
            else
                profile_free(p);
            p = h;
            which[got_src] = i;
        }
        free(keys);
        ps[got_src++] = p;
    }
    ahead_end(ra, drop_loaded);
    strkeys_series_free(actx.keys);
    spare_free(&actx.spare);
    /* sources first, then the base group (at index n_sources) */
    *src = combine_group(ps, got_src, s->n_sources, false, stream ? &st : NULL);
    profile_t **bps = ps + s->n_sources;
    if (*src && s->base) {
        *base = combine_group(bps, got_base, 1, true, NULL);
        got_base = 0;
        if (!*base) {
            profile_free(*src);
            *src = NULL;
        }
    }
    for (size_t i = 0; i < got_base; i++)
        profile_free(bps[i]);
    rc = *src ? 0 : -1;
out:
    for (size_t i = 0; tg && i < n; i++)
        fetch_target_free(&tg[i]);
    free(names);
    free(ps);
    free(tg);
    free(is_url);
    free(urls);
    free(bodies);
    free(which);
    return rc;
}

/* Saves a profile fetched over HTTP as go tool pprof does. */
static void save_fetched(const profile_t *p)
{
    char path[4096], warn[2048] = "", err[ERRLEN];
    int rc = fetch_save(p, path, sizeof(path), warn, sizeof(warn), err, sizeof(err));
    if (*warn)
        fputs(warn, stderr);
    if (rc == 0)
        driver_msg("Saved profile in %s", path);
    else
        driver_msg("Could not save profile: %s", err);
}

/* pprof's fetchProfiles: fetch, merge, subtract the base, symbolize
 * (locally, then remotely for what came over HTTP), save a fetched
 * profile. NULL after messages. */
profile_t *driver_fetch(const source_opts_t *s)
{
    fetched_t f = {{0}, false};
    profile_t *p, *base;
    if (grab(s, &f, &p, &base) < 0) {
        symbolz_sources_free(&f.zs);
        return NULL;
    }
    char err[ERRLEN];
    if (base) {
        profile_t *out;
        if (combine_base(p, base, s->diff_base, s->normalize, &out, err, sizeof(err)) < 0) {
            driver_msg("%s", err);
            symbolz_sources_free(&f.zs);
            return NULL;
        }
        p = out;
    }
    /* One source, no base: combine_profiles checked it as read, and its
     * merge only adds terms of that sum (no unit to scale to), which then
     * holds for the result too. Several may scale up, a base subtract. */
    if ((s->n_sources > 1 || s->base) && profile_check_sums(p, err, sizeof(err)) < 0) {
        driver_msg("%s", err);
        symbolz_sources_free(&f.zs);
        profile_free(p);
        return NULL;
    }
    symbolize_opts_t so = {s->symbolize, s->exec_name};
    int rc = symbolize_profile(p, &so, err, sizeof(err));
    if (rc == 0 && f.zs.n)
        rc = symbolz_profile(p, s->symbolize, &f.zs, fetch_post, err, sizeof(err));
    symbolz_sources_free(&f.zs);
    if (rc < 0) {
        driver_msg("%s", err);
        profile_free(p);
        return NULL;
    }
    symbolz_unsource(p);
    if (s->comment && *s->comment && profile_add_comment(p, s->comment) < 0) {
        driver_msg("out of memory");
        profile_free(p);
        return NULL;
    }
    /* Indexed: symbolize_profile and symbolz_profile leave it so, and
     * what came after them added no element. */
    if (f.remote)
        save_fetched(p);
    return p;
}

profile_t *driver_fetch_with(const source_opts_t *s, FILE *messages)
{
    FILE *saved = msg_copy;
    msg_copy = messages;
    profile_t *p = driver_fetch(s);
    msg_copy = saved;
    return p;
}
