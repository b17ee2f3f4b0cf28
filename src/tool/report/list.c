/* list.c — the -list report: annotated source of matching functions. */
#include "tool/report/list.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/path.h"
#include "tool/graph/measure.h"
#include "tool/report/report.h"

const char *list_trim_path(const char *path, const char *trim, const char *search)
{
    if (!trim || !*trim) {
        /* For each dir of the search path: "/" + basename(dir) + "/". */
        const char *d = search ? search : "";
        while (*d) {
            const char *e = strchr(d, ':');
            size_t len = e ? (size_t)(e - d) : strlen(d);
            char dir[4096], bb[4096];
            snprintf(dir, sizeof(dir), "%.*s", (int)len, d);
            const char *b = path_base(dir, bb, sizeof(bb));
            char want[4200];
            snprintf(want, sizeof(want), "/%s/", b);
            const char *f = strstr(path, want);
            if (f)
                return f + strlen(want);
            if (!e)
                break;
            d = e + 1;
        }
    }
    /* Configured prefixes, then /proc/self/cwd ones. */
    const char *t = trim ? trim : "";
    for (int pass = 0; pass < 3; pass++) {
        const char *list = pass == 0 ? t : pass == 1 ? "/proc/self/cwd/./" : "/proc/self/cwd/";
        while (*list) {
            const char *e = pass == 0 ? strchr(list, ':') : NULL;
            size_t len = e ? (size_t)(e - list) : strlen(list);
            char pre[4096];
            snprintf(pre, sizeof(pre), "%.*s", (int)len, list);
            if (len == 0 || pre[len - 1] != '/')
                strncat(pre, "/", sizeof(pre) - strlen(pre) - 1);
            if (strncmp(path, pre, strlen(pre)) == 0)
                return path + strlen(pre);
            if (!e)
                break;
            list = e + 1;
        }
    }
    return path;
}

FILE *list_open_source(const char *path, const char *search, const char *trim, char *err,
                       size_t errlen)
{
    path = list_trim_path(path, trim, search);
    if (path[0] == '/') {
        FILE *f = fopen(path, "r");
        if (!f)
            snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return f;
    }
    const char *d = search;
    while (d && *d) {
        const char *e = strchr(d, ':');
        size_t len = e ? (size_t)(e - d) : strlen(d);
        char dir[4096];
        snprintf(dir, sizeof(dir), "%.*s", (int)len, d);
        for (;;) {
            char name[8192];
            snprintf(name, sizeof(name), "%s/%s", dir, path);
            FILE *f = fopen(name, "r");
            if (f)
                return f;
            /* parent directory */
            size_t l = strlen(dir);
            while (l > 1 && dir[l - 1] == '/')
                dir[--l] = '\0';
            char *s = strrchr(dir, '/');
            if (!s || (s == dir && l == 1) || l == 0)
                break;
            if (s == dir)
                s[1] = '\0';
            else
                *s = '\0';
        }
        if (!e)
            break;
        d = e + 1;
    }
    snprintf(err, errlen, "could not find file %s on path %s", path, search ? search : "");
    return NULL;
}

typedef struct {
    char **lines; /* lines[0] unused */
    size_t n;
    char *err;
} srcfile_t;

static void read_lines(FILE *f, srcfile_t *sf)
{
    size_t cap = 64;
    sf->lines = calloc(cap, sizeof(char *));
    sf->n = 1;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while (sf->lines && (len = getline(&line, &lcap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = '\0';
        if (sf->n == cap) {
            cap *= 2;
            char **nl = realloc(sf->lines, cap * sizeof(char *));
            if (!nl)
                break;
            sf->lines = nl;
        }
        sf->lines[sf->n++] = strdup(line);
    }
    free(line);
}

static void srcfile_free(srcfile_t *sf)
{
    for (size_t i = 1; i < sf->n; i++)
        free(sf->lines[i]);
    free(sf->lines);
    free(sf->err);
}

static const char *value_or_dot(const report_t *r, int64_t v, char *buf, size_t n)
{
    if (v == 0)
        return ".";
    return report_format_value(r, v, buf, n);
}

int report_list(report_t *r, char *err, size_t errlen)
{
    work_t *w = r->w;
    graph_opts_t go = {.value_index = r->value_index,
                       .mean_index = r->mean_index,
                       .obj_names = true,
                       .drop_negative = r->cfg->drop_negative};
    graph_t *g;
    if (graph_new(w, &go, &g) < 0 || graph_build(g, NULL) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    /* Matching nodes, grouped by function name: sort them by name (then by
     * file, start line, and info) so groups are contiguous. */
    uint32_t *m = malloc((g->n_sel + 1) * sizeof(*m));
    size_t nm = 0;
    if (!m) {
        graph_free(g);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < g->n_sel; i++)
        if (rx_match(r->symbol, work_str(w, g->nodes[g->sel[i]].info.name)))
            m[nm++] = g->sel[i];
    if (nm == 0) {
        free(m);
        graph_free(g);
        snprintf(err, errlen, "no matches found for regexp: %s", rx_pattern(r->symbol));
        return -ENOENT;
    }
    graph_sort_nodes(g, m, nm, GORDER_NAME);

    char cwd[4096];
    const char *search = r->cfg->source_path;
    if (!search || !*search) {
        if (!getcwd(cwd, sizeof(cwd))) {
            free(m);
            graph_free(g);
            snprintf(err, errlen, "could not stat current dir: %s", strerror(errno));
            return -errno;
        }
        search = cwd;
    }

    /* Source files read so far, by file string index. */
    int64_t *fkeys = NULL;
    srcfile_t *files = NULL;
    size_t nfiles = 0;

    char a[64], b[64], pct[32];
    fprintf(r->out, "Total: %s\n", report_format_value(r, r->total, a, sizeof(a)));
    for (size_t i = 0; i < nm;) {
        int64_t name = g->nodes[m[i]].info.name;
        size_t j = i;
        while (j < nm && g->nodes[m[j]].info.name == name)
            j++;
        /* nodes of this function with a file, ordered by file */
        uint32_t *fn = malloc((j - i) * sizeof(*fn));
        size_t nf = 0;
        for (size_t k = i; fn && k < j; k++)
            if (g->nodes[m[k]].info.file)
                fn[nf++] = m[k];
        if (nf == 0) {
            fprintf(r->out, "No source information for %s\n", work_str(w, name));
            free(fn);
            i = j;
            continue;
        }
        graph_sort_nodes(g, fn, nf, GORDER_FILE);
        for (size_t k = 0; k < nf;) {
            int64_t file = g->nodes[fn[k]].info.file;
            size_t e = k;
            int64_t flat_sum = 0, cum_sum = 0;
            /* FileOrder sorts by file first, so one file's nodes are adjacent. */
            while (e < nf && g->nodes[fn[e]].info.file == file) {
                flat_sum += g->nodes[fn[e]].flat;
                cum_sum += g->nodes[fn[e]].cum;
                e++;
            }
            const char *fname = work_str(w, file);
            fprintf(r->out, "ROUTINE ======================== %s in %s\n", work_str(w, name), fname);
            fprintf(r->out, "%10s %10s (flat, cum) %s of Total\n",
                    report_format_value(r, flat_sum, a, sizeof(a)),
                    report_format_value(r, cum_sum, b, sizeof(b)),
                    measure_percentage(pct, sizeof(pct), cum_sum, r->total));
            size_t fi;
            for (fi = 0; fi < nfiles && fkeys[fi] != file; fi++)
                ;
            if (fi == nfiles) {
                srcfile_t *nfl = realloc(files, (nfiles + 1) * sizeof(*files));
                int64_t *nk = realloc(fkeys, (nfiles + 1) * sizeof(*fkeys));
                if (nfl)
                    files = nfl;
                if (nk)
                    fkeys = nk;
                if (!nfl || !nk)
                    break;
                srcfile_t *sf = &files[nfiles];
                memset(sf, 0, sizeof(*sf));
                fkeys[nfiles++] = file;
                char e2[4300];
                FILE *f = list_open_source(fname, search, r->cfg->trim_path, e2, sizeof(e2));
                if (!f) {
                    sf->err = strdup(e2);
                } else {
                    read_lines(f, sf);
                    fclose(f);
                }
            }
            srcfile_t *sf = &files[fi];
            if (sf->err) {
                fprintf(r->out, " Error: %s\n", sf->err);
                k = e;
                continue;
            }
            /* line range: pprof's margins around the sampled lines */
            const ninfo_t *f0 = &g->nodes[fn[k]].info;
            int64_t start = f0->start_line ? f0->start_line : f0->lineno - 5;
            int64_t end = f0->lineno + 5;
            for (size_t x = k; x < e; x++) {
                const ninfo_t *ni = &g->nodes[fn[x]].info;
                int64_t ns = ni->start_line ? ni->start_line : ni->lineno - 5;
                int64_t ne = ni->lineno + 5;
                if (ns < start)
                    start = ns;
                else if (ne > end)
                    end = ne;
            }
            if (start < 1)
                start = 1;
            for (int64_t ln = start; ln <= end; ln++) {
                if (ln <= 0 || (size_t)ln >= sf->n)
                    break;
                int64_t fl = 0, cu = 0;
                for (size_t x = k; x < e; x++)
                    if (g->nodes[fn[x]].info.lineno == ln) {
                        fl += g->nodes[fn[x]].flat;
                        cu += g->nodes[fn[x]].cum;
                    }
                fprintf(r->out, "%10s %10s %6lld:%s\n", value_or_dot(r, fl, a, sizeof(a)),
                        value_or_dot(r, cu, b, sizeof(b)), (long long)ln, sf->lines[ln]);
            }
            k = e;
        }
        free(fn);
        i = j;
    }
    for (size_t i = 0; i < nfiles; i++)
        srcfile_free(&files[i]);
    free(files);
    free(fkeys);
    free(m);
    graph_free(g);
    return 0;
}
