/* symbolz.c — remote symbolization through a symbolz endpoint (see
 * symbolz.h); pprof's internal/symbolz. */
#include "tool/fetch/symbolz.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/symbolize/demangle.h"
#include "tool/symbolize/symbolize.h"

static const char *str(const profile_t *p, int64_t i)
{
    return i > 0 && (size_t)i < p->n_strings ? p->strings[i] : "";
}

static int add_source(symbolz_sources_t *s, const char *key, const char *url, uint64_t start,
                      long timeout_ms)
{
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 8;
        symbolz_source_t *v = realloc(s->v, c * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = c;
    }
    symbolz_source_t *e = &s->v[s->n];
    e->key = strdup(key);
    e->url = strdup(url);
    e->start = start;
    e->timeout_ms = timeout_ms;
    if (!e->key || !e->url) {
        free(e->key);
        free(e->url);
        return -ENOMEM;
    }
    s->n++;
    return 0;
}

int symbolz_collect(profile_t *p, const char *url, long timeout_ms, symbolz_sources_t *s)
{
    for (size_t i = 0; i < p->n_mappings; i++) {
        profile_mapping_t *m = &p->mappings[i];
        const char *key = str(p, m->build_id);
        if (!*key)
            key = str(p, m->filename);
        if (!*key) {
            int64_t f = profile_intern(p, url);
            if (f < 0)
                return -ENOMEM;
            p->mappings[i].filename = f;
            key = url;
        }
        if (add_source(s, key, url, m->memory_start, timeout_ms) < 0)
            return -ENOMEM;
    }
    return 0;
}

void symbolz_sources_free(symbolz_sources_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].key);
        free(s->v[i].url);
    }
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* --- URLs ------------------------------------------------------------------------ */

/* Go's path.Clean of an absolute path, into a new string. */
static char *clean_path(const char *p)
{
    size_t n = strlen(p);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    size_t o = 0;
    out[o++] = '/';
    const char *s = p;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = s;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - s);
        if (l == 0)
            break;
        if (l == 1 && s[0] == '.') {
            /* nothing */
        } else if (l == 2 && s[0] == '.' && s[1] == '.') {
            if (o > 1) {
                o--; /* the '/' ending the last element */
                while (o > 1 && out[o - 1] != '/')
                    o--;
            }
        } else {
            memcpy(out + o, s, l);
            o += l;
            out[o++] = '/';
        }
        s = e;
    }
    if (o > 1)
        o--; /* no trailing slash */
    out[o] = '\0';
    return out;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
    size_t l = strlen(suf);
    return n >= l && memcmp(s + n - l, suf, l) == 0;
}

char *symbolz_url(const char *url)
{
    const char *sep = strstr(url, "://");
    if (!sep)
        return NULL;
    const char *host = sep + 3;
    size_t hl = strcspn(host, "/?#");
    if (hl == 0)
        return NULL;
    const char *path = host + hl;
    size_t pl = strcspn(path, "?#");
    const char *frag = strchr(path + pl, '#');
    char *np = NULL;
    /* All paths of Go's net/http/pprof contain /debug/pprof/; gperftools'
     * handlers end in these. */
    char *pcopy = strndup(path, pl);
    if (!pcopy)
        return NULL;
    if (strstr(pcopy, "/debug/pprof/") || has_suffix(pcopy, pl, "/pprof/heap") ||
        has_suffix(pcopy, pl, "/pprof/growth") || has_suffix(pcopy, pl, "/pprof/profile") ||
        has_suffix(pcopy, pl, "/pprof/pmuprofile") || has_suffix(pcopy, pl, "/pprof/contention")) {
        char *j;
        if (asprintf(&j, "%s/../symbol", pcopy) >= 0) {
            np = clean_path(j);
            free(j);
        }
    } else {
        np = strdup("/symbolz");
    }
    free(pcopy);
    if (!np)
        return NULL;
    char *out;
    if (asprintf(&out, "%.*s%s%s", (int)(host + hl - url), url, np, frag ? frag : "") < 0)
        out = NULL;
    free(np);
    return out;
}

/* --- symbolization ------------------------------------------------------------------ */

/* pprof's adjust: addr + offset, or false on overflow. */
static bool adjust(uint64_t addr, int64_t off, uint64_t *out)
{
    uint64_t a = (uint64_t)((int64_t)addr + off);
    if (off < 0 ? a >= addr : a < addr)
        return false;
    *out = a;
    return true;
}

typedef struct {
    uint64_t addr;
    uint64_t fn;
    size_t ord; /* line number in the answer */
} hit_t;

static int hit_cmp(const void *a, const void *b)
{
    const hit_t *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int addr_cmp(const void *a, const void *b)
{
    uint64_t x = ((const hit_t *)a)->addr, y = ((const hit_t *)b)->addr;
    return x < y ? -1 : x > y;
}

/* One "...0xHEX<space>name" line as pprof's symbolzRE reads it
 * (`(0x[[:xdigit:]]+)\s+(.*)`, unanchored); false if it does not match. */
static bool parse_line(const char *l, size_t n, const char **hex, size_t *hexlen,
                       const char **name, size_t *namelen)
{
    for (size_t i = 0; i + 2 < n; i++) {
        if (l[i] != '0' || l[i + 1] != 'x')
            continue;
        size_t j = i + 2;
        while (j < n && isxdigit((unsigned char)l[j]))
            j++;
        if (j == i + 2)
            continue;
        size_t k = j;
        while (k < n && strchr(" \t\n\f\r\v", l[k]))
            k++;
        if (k == j)
            continue;
        *hex = l + i;
        *hexlen = j - i;
        *name = l + k;
        size_t e = k;
        while (e < n && l[e] != '\n')
            e++;
        *namelen = e - k;
        return true;
    }
    return false;
}

typedef struct {
    char *name;
    uint64_t id;
} fname_t;

/* pprof's symbolizeMapping. */
static int symbolize_mapping(profile_t *p, profile_mapping_t *m, const symbolz_source_t *src,
                             const char *zurl, symbolz_post_fn post, demangle_mode_t dm,
                             char *err, size_t errlen)
{
    int64_t off = (int64_t)src->start - (int64_t)m->memory_start;
    size_t cap = 4096, len = 0;
    char *q = malloc(cap);
    if (!q)
        return -ENOMEM;
    q[0] = '\0';
    for (size_t i = 0; i < p->n_locations; i++) {
        const profile_location_t *l = &p->locations[i];
        if (l->mapping_id != m->id || l->address == 0 || l->n_lines)
            continue;
        uint64_t a;
        if (!adjust(l->address, off, &a)) {
            snprintf(err, errlen, "cannot adjust address %" PRIu64 " by %" PRId64
                                  ", it would overflow (mapping %s)",
                     l->address, off, str(p, m->filename));
            free(q);
            return -EINVAL;
        }
        if (len + 24 > cap) {
            char *nq = realloc(q, cap *= 2);
            if (!nq) {
                free(q);
                return -ENOMEM;
            }
            q = nq;
        }
        len += (size_t)sprintf(q + len, "%s0x%" PRIx64, len ? "+" : "", a);
    }
    if (len == 0) {
        free(q);
        return 0;
    }
    char *resp = NULL;
    size_t rlen = 0;
    int rc = post(zurl, q, len, src->timeout_ms, &resp, &rlen, err, errlen);
    free(q);
    if (rc < 0)
        return rc;

    hit_t *hits = NULL;
    size_t nh = 0, ch = 0;
    fname_t *fns = NULL;
    size_t nf = 0, cf = 0;
    uint64_t next_id = 1;
    for (size_t i = 0; i < p->n_functions; i++)
        if (p->functions[i].id >= next_id)
            next_id = p->functions[i].id + 1;
    rc = 0;
    /* lines end with '\n': a last line without one is not read (as Go's
     * ReadString loop stops at EOF) */
    for (size_t s = 0; s < rlen && rc == 0;) {
        const char *nl = memchr(resp + s, '\n', rlen - s);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (resp + s)) + 1;
        const char *hex, *name;
        size_t hl, nml;
        if (parse_line(resp + s, n, &hex, &hl, &name, &nml)) {
            char hb[64];
            char *end;
            snprintf(hb, sizeof(hb), "%.*s", (int)(hl < 63 ? hl : 63), hex);
            errno = 0;
            unsigned long long orig = strtoull(hb, &end, 0);
            uint64_t a;
            if (hl > 18 || errno || *end) {
                snprintf(err, errlen, "unexpected parse failure %s: value out of range", hb);
                rc = -EINVAL;
                break;
            }
            if (!adjust(orig, -off, &a)) {
                snprintf(err, errlen,
                         "cannot adjust symbolz address %llu by %" PRId64 ", it would overflow",
                         orig, -off);
                rc = -EINVAL;
                break;
            }
            uint64_t fid = 0;
            for (size_t k = 0; k < nf; k++)
                if (strlen(fns[k].name) == nml && memcmp(fns[k].name, name, nml) == 0) {
                    fid = fns[k].id;
                    break;
                }
            if (!fid) {
                if (nf == cf) {
                    cf = cf ? 2 * cf : 16;
                    fname_t *nfns = realloc(fns, cf * sizeof(*fns));
                    if (!nfns) {
                        rc = -ENOMEM;
                        break;
                    }
                    fns = nfns;
                }
                int64_t si = profile_intern_n(p, name, nml);
                profile_function_t *f = si < 0 ? NULL : profile_add_function(p);
                fns[nf].name = strndup(name, nml);
                if (!f || !fns[nf].name) {
                    free(fns[nf].name);
                    rc = -ENOMEM;
                    break;
                }
                f->id = fid = next_id++;
                f->system_name = si;
                f->name = si;
                char *dn = demangle_symbol(p->strings[si], dm);
                if (dn) {
                    int64_t di = profile_intern(p, dn);
                    free(dn);
                    if (di < 0) {
                        rc = -ENOMEM;
                        break;
                    }
                    p->functions[p->n_functions - 1].name = di;
                }
                fns[nf++].id = fid;
            }
            if (nh == ch) {
                ch = ch ? 2 * ch : 64;
                hit_t *nhits = realloc(hits, ch * sizeof(*hits));
                if (!nhits) {
                    rc = -ENOMEM;
                    break;
                }
                hits = nhits;
            }
            /* a later line for the same address wins, as in pprof's map */
            hits[nh].addr = a;
            hits[nh].ord = nh;
            hits[nh++].fn = fid;
        }
        s += n;
    }
    free(resp);
    if (rc == 0 && nh) {
        /* one entry per address: the last line naming it */
        qsort(hits, nh, sizeof(*hits), hit_cmp);
        size_t k = 0;
        for (size_t i = 0; i < nh; i++) {
            if (k && hits[k - 1].addr == hits[i].addr)
                k--;
            hits[k++] = hits[i];
        }
        nh = k;
    }
    for (size_t i = 0; rc == 0 && i < p->n_locations; i++) {
        profile_location_t *l = &p->locations[i];
        if (l->mapping_id != m->id || nh == 0)
            continue;
        hit_t key = {l->address, 0, 0};
        hit_t *h = bsearch(&key, hits, nh, sizeof(*hits), addr_cmp);
        if (!h)
            continue;
        profile_line_t *ln = profile_alloc(p, sizeof(*ln));
        if (!ln) {
            rc = -ENOMEM;
            break;
        }
        ln->function_id = h->fn;
        ln->line = 0;
        l->lines = ln;
        l->n_lines = 1;
    }
    for (size_t k = 0; k < nf; k++)
        free(fns[k].name);
    free(fns);
    free(hits);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    return rc;
}

int symbolz_profile(profile_t *p, const char *mode, const symbolz_sources_t *s,
                    symbolz_post_fn post, char *err, size_t errlen)
{
    symbolize_mode_t z; /* its unknown options are the local symbolizer's to report */
    symbolize_parse_mode(mode, &z);
    if (z.none || !z.remote || !s || s->n == 0)
        return 0;
    int rc = 0;
    for (size_t mi = 0; mi < p->n_mappings && rc == 0; mi++) {
        profile_mapping_t *m = &p->mappings[mi];
        if (!z.force && m->has_functions)
            continue;
        const char *file = str(p, m->filename), *bid = str(p, m->build_id);
        if (profile_mapping_unsymbolizable(file))
            continue;
        /* sources[m.File], then sources[m.BuildID] */
        for (int pass = 0; pass < 2 && rc == 0; pass++) {
            const char *key = pass == 0 ? file : bid;
            if (pass == 1 && !*bid)
                break;
            bool done = false;
            for (size_t i = 0; i < s->n && !done; i++) {
                if (strcmp(s->v[i].key, key) != 0)
                    continue;
                char *zu = symbolz_url(s->v[i].url);
                if (!zu)
                    continue;
                rc = symbolize_mapping(p, m, &s->v[i], zu, post, z.demangle, err, errlen);
                free(zu);
                if (rc == 0) {
                    m = &p->mappings[mi];
                    m->has_functions = true;
                }
                done = true;
            }
            if (done)
                break;
        }
    }
    if (rc == 0 && profile_index(p) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    return rc;
}

void symbolz_unsource(profile_t *p)
{
    for (size_t i = 0; i < p->n_mappings; i++) {
        profile_mapping_t *m = &p->mappings[i];
        if (*str(p, m->build_id))
            continue;
        const char *f = str(p, m->filename);
        /* url.Parse(f).IsAbs(): a scheme */
        if (!isalpha((unsigned char)f[0]))
            continue;
        const char *c = f + 1;
        while (isalnum((unsigned char)*c) || *c == '+' || *c == '-' || *c == '.')
            c++;
        if (*c == ':')
            m->filename = 0;
    }
}
