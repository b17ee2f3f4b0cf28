/* legacy.c — the legacy profile formats (see legacy.h), read the way
 * go tool pprof 1.19's profile/legacy_profile.go reads them.
 *
 * Each parser fills a small intermediate form (locations keyed by address,
 * samples as slices of one stack pool, mappings with owned strings), because
 * pprof's post-processing works on that shape: merge adjacent pieces of one
 * mapped file, move the main binary first, renumber locations in order of
 * first use, attach each location to the mapping containing its address
 * (inventing an unnamed catch-all mapping when none does). Only then is the
 * profile_t built.
 *
 * Line matching uses POSIX extended regular expressions (libc) translated
 * from pprof's Go regexps; for the inputs these formats hold, POSIX's
 * leftmost-longest and Go's leftmost-first matching agree. Unlike Go's
 * bufio.Scanner, lines of any length are accepted.
 */
#include "legacy.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#include "base/err.h"
#include "base/hash.h"

/* --- errors ------------------------------------------------------------------ */

/* --- intermediate form -------------------------------------------------------- */

enum {
    RX_PROCMAPS,
    RX_BRIEF,
    RX_LOGINFO,
    RX_COUNT
};

typedef struct {
    uint64_t start, limit, offset;
    char *file, *build_id; /* malloc'd, never NULL */
    bool dead;             /* merged into its predecessor */
} lmap_t;

typedef struct {
    uint64_t addr;
    int32_t map;    /* index into maps, or -1 */
    uint32_t newid; /* 1.. in order of first use by a sample; 0 unused */
} lloc_t;

typedef struct {
    size_t first; /* stack: pool[first .. first + n) (location indexes) */
    uint32_t n;
    int64_t v[4];
    bool has_bytes;
    int64_t bytes; /* numeric label "bytes" (heap profiles) */
} lsample_t;

typedef struct {
    /* regexps, compiled on first use within one parse */
    regex_t rx[RX_COUNT];
    bool rx_have[RX_COUNT];
    bool rx_failed; /* a regcomp failed (out of memory) */

    lloc_t *locs;
    size_t n_locs, cap_locs;
    uint32_t *hslots; /* addr -> loc index + 1, open addressing */
    size_t hmask;

    uint32_t *pool;
    size_t n_pool, cap_pool;
    lsample_t *samples;
    size_t n_samples, cap_samples;

    lmap_t *maps;
    size_t n_maps, cap_maps;

    /* header */
    const char *types[4][2];
    unsigned n_types;
    const char *period_type[2];
    int64_t period;
    int64_t duration_nanos;
    char *owned; /* a type name parsed from the input (count profiles) */

    char *err;
    size_t errlen;
} lp_t;

static int oom(lp_t *lp)
{
    return err_fmt(lp->err, lp->errlen, -ENOMEM, "out of memory while parsing a legacy profile");
}

/* Index of the location at addr, created if new (pprof's locs map). */
static int64_t loc_for(lp_t *lp, uint64_t addr)
{
    if ((lp->n_locs + 1) * 2 > lp->hmask + 1) {
        size_t ns = lp->hmask ? (lp->hmask + 1) * 2 : 1024;
        uint32_t *s = calloc(ns, sizeof(*s));
        if (!s)
            return -1;
        for (size_t i = 0; i < lp->n_locs; i++) {
            size_t h = hash_mix64(lp->locs[i].addr) & (ns - 1);
            while (s[h])
                h = (h + 1) & (ns - 1);
            s[h] = (uint32_t)i + 1;
        }
        free(lp->hslots);
        lp->hslots = s;
        lp->hmask = ns - 1;
    }
    size_t h = hash_mix64(addr) & lp->hmask;
    for (; lp->hslots[h]; h = (h + 1) & lp->hmask)
        if (lp->locs[lp->hslots[h] - 1].addr == addr)
            return lp->hslots[h] - 1;
    if (lp->n_locs >= UINT32_MAX - 1 ||
        err_grow((void **)&lp->locs, &lp->cap_locs, lp->n_locs + 1, sizeof(*lp->locs)) < 0)
        return -1;
    lp->locs[lp->n_locs] = (lloc_t){addr, -1, 0};
    lp->hslots[h] = (uint32_t)lp->n_locs + 1;
    return (int64_t)lp->n_locs++;
}

/* Appends a sample whose stack is addrs[0..n), each decremented by 1
 * except the first when leaf_exact (a CPU leaf is no return address). */
static int add_sample(lp_t *lp, const uint64_t *addrs, size_t n, bool leaf_exact,
                      const int64_t *v, bool has_bytes, int64_t bytes)
{
    if (n > UINT32_MAX ||
        err_grow((void **)&lp->pool, &lp->cap_pool, lp->n_pool + n, sizeof(*lp->pool)) < 0 ||
        err_grow((void **)&lp->samples, &lp->cap_samples, lp->n_samples + 1, sizeof(*lp->samples)) < 0)
        return oom(lp);
    lsample_t *s = &lp->samples[lp->n_samples];
    memset(s, 0, sizeof(*s));
    s->first = lp->n_pool;
    s->n = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = addrs[i];
        if (!(leaf_exact && i == 0))
            a--; /* return address -> inside the call instruction */
        int64_t li = loc_for(lp, a);
        if (li < 0)
            return oom(lp);
        lp->pool[lp->n_pool++] = (uint32_t)li;
    }
    memcpy(s->v, v, lp->n_types * sizeof(*v));
    s->has_bytes = has_bytes;
    s->bytes = bytes;
    lp->n_samples++;
    return 0;
}

static void lp_free(lp_t *lp)
{
    for (int i = 0; i < RX_COUNT; i++)
        if (lp->rx_have[i])
            regfree(&lp->rx[i]);
    free(lp->locs);
    free(lp->hslots);
    free(lp->pool);
    free(lp->samples);
    for (size_t i = 0; i < lp->n_maps; i++) {
        free(lp->maps[i].file);
        free(lp->maps[i].build_id);
    }
    free(lp->maps);
    free(lp->owned);
}

/* Forgets the data of a parser that gave up, keeping the regexps. */
static void lp_reset(lp_t *lp)
{
    lp->n_locs = lp->n_pool = lp->n_samples = 0;
    if (lp->hslots)
        memset(lp->hslots, 0, (lp->hmask + 1) * sizeof(*lp->hslots));
    for (size_t i = 0; i < lp->n_maps; i++) {
        free(lp->maps[i].file);
        free(lp->maps[i].build_id);
    }
    lp->n_maps = 0;
    memset(lp->types, 0, sizeof(lp->types));
    lp->n_types = 0;
    lp->period_type[0] = lp->period_type[1] = NULL;
    lp->period = 0;
    lp->duration_nanos = 0;
    free(lp->owned);
    lp->owned = NULL;
}

/* Translations of pprof's regexps (legacy_profile.go) to POSIX EREs. */
#define SP "[[:space:]]"
#define HEX "[[:xdigit:]]"
static const char *const rx_pattern[RX_COUNT] = {
    /* start 2, end 4, perm 6, offset 8, file 10 */
    [RX_PROCMAPS] = "^" SP "*(0x)?(" HEX "+)[-[:space:]]?" SP "*(0x)?(" HEX "+):?"
                    "(" SP "+([-rwxp]+))?(" SP "+(" HEX "+))?" SP "+" HEX "+:" HEX "+" SP
                    "+[0-9]+(" SP "+([^[:space:]]+))?",
    /* start 2, end 4, perm 6, file 8, offset 10, build id 12 */
    [RX_BRIEF] = "^" SP "*(0x)?(" HEX "+)[-[:space:]]?" SP "*(0x)?(" HEX "+):?"
                 "(" SP "+([-rwxp]+))?(" SP "+([^[:space:]]+))?(" SP "+\\(@(" HEX "+)\\))?"
                 "(" SP "+(" HEX "+))?",
    [RX_LOGINFO] = ("^[^][]+:[0-9]+]" SP),
};

/* regexec with pattern `which`, compiled on first use (a parse usually
 * needs a few of them, and regcomp is not cheap). A compile failure (out
 * of memory) reads as "no match" and is reported by legacy_parse. */
static int rx_exec(lp_t *lp, int which, const char *s, size_t n, regmatch_t *m)
{
    if (!lp->rx_have[which]) {
        if (regcomp(&lp->rx[which], rx_pattern[which], REG_EXTENDED) != 0) {
            lp->rx_failed = true;
            return REG_NOMATCH;
        }
        lp->rx_have[which] = true;
    }
    return regexec(&lp->rx[which], s, n, m, 0);
}
#undef SP
#undef HEX

/* --- hand-written matchers ---------------------------------------------------
 *
 * pprof's unanchored regexps over sample and header lines, matched by hand
 * with Go's (leftmost-first, greedy) semantics. A POSIX regexec of an
 * unanchored pattern is quadratic in the line length (it retries at every
 * start), which a hostile 200 KB line turns into minutes; these are linear:
 * a failed attempt from the start of a digit run fails from every position
 * inside the run too, so each run is tried once. Captures are reported as
 * regmatch_t offsets, like regexec's. */

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

static bool islowhex(char c)
{
    return isdig(c) || (c >= 'a' && c <= 'f');
}

static const char *digits(const char *p)
{
    while (isdig(*p))
        p++;
    return p;
}

static const char *spaces(const char *p) /* Go's " *" */
{
    while (*p == ' ')
        p++;
    return p;
}

static void cap(regmatch_t *g, int i, const char *base, const char *a, const char *b)
{
    g[i].rm_so = (regoff_t)(a - base);
    g[i].rm_eo = (regoff_t)(b - base);
}

/* strstr for the matchers' loops: plain C, because ASan's strstr
 * interceptor measures the whole haystack on every call, which makes a
 * loop over the occurrences in a long line quadratic under the sanitizer. */
static const char *find(const char *s, const char *lit)
{
    size_t n = strlen(lit);
    for (; *s; s++)
        if (*s == lit[0] && strncmp(s, lit, n) == 0)
            return s;
    return NULL;
}

/* " *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\]" at p (after "heap profile:"):
 * the position after ']', or NULL. */
static const char *heap_totals(const char *s, const char *p, regmatch_t *g)
{
    for (int i = 1; i <= 4; i++) {
        p = spaces(p);
        const char *a = p;
        p = digits(p);
        if (p == a)
            return NULL;
        cap(g, i, s, a, p);
        char want = i % 2 ? ':' : i == 2 ? '[' : ']';
        if (i % 2 == 0)
            p = spaces(p);
        if (*p != want)
            return NULL;
        p++;
    }
    return p;
}

/* heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] *@ *(heap[_a-z0-9]*)/?(\d*) */
static int match_heap_hdr(const char *s, regmatch_t *g)
{
    for (const char *q = find(s, "heap profile:"); q; q = find(q + 1, "heap profile:")) {
        const char *p = heap_totals(s, q + 13, g);
        if (!p)
            continue;
        p = spaces(p);
        if (*p != '@')
            continue;
        p = spaces(p + 1);
        if (strncmp(p, "heap", 4) != 0)
            continue;
        const char *a = p;
        for (p += 4; *p == '_' || (*p >= 'a' && *p <= 'z') || isdig(*p); p++)
            ;
        cap(g, 5, s, a, p);
        if (*p == '/')
            p++;
        a = p;
        p = digits(p);
        cap(g, 6, s, a, p);
        cap(g, 0, s, q, p);
        return 0;
    }
    return REG_NOMATCH;
}

/* heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ WORDz? */
static int match_heap_other(const char *s, const char *word, regmatch_t *g)
{
    size_t wl = strlen(word);
    for (const char *q = find(s, "heap profile:"); q; q = find(q + 1, "heap profile:")) {
        const char *p = heap_totals(s, q + 13, g);
        if (p && p[0] == ' ' && p[1] == '@' && p[2] == ' ' && strncmp(p + 3, word, wl) == 0)
            return 0;
    }
    return REG_NOMATCH;
}

/* (-?\d+): *(-?\d+) *\[ *(\d+): *(\d+) *] @([ x0-9a-f]*) */
static bool heap_sample_at(const char *s, const char *p, regmatch_t *g)
{
    const char *a = p;
    if (*p == '-')
        p++;
    p = digits(p);
    cap(g, 1, s, a, p);
    if (*p != ':')
        return false;
    p = spaces(p + 1);
    a = p;
    if (*p == '-')
        p++;
    const char *d = p;
    p = digits(p);
    if (p == d)
        return false;
    cap(g, 2, s, a, p);
    p = spaces(p);
    if (*p != '[')
        return false;
    for (int i = 3; i <= 4; i++) {
        p = spaces(p + 1);
        a = p;
        p = digits(p);
        if (p == a)
            return false;
        cap(g, i, s, a, p);
        if (i == 3 && *p != ':')
            return false;
    }
    p = spaces(p);
    if (p[0] != ']' || p[1] != ' ' || p[2] != '@')
        return false;
    a = p += 3;
    while (*p == ' ' || *p == 'x' || islowhex(*p))
        p++;
    cap(g, 5, s, a, p);
    return true;
}

static int match_heap_sample(const char *s, regmatch_t *g)
{
    for (const char *p = s; *p; p++) {
        bool start = (*p == '-' && isdig(p[1])) ||
                     (isdig(*p) && (p == s || (!isdig(p[-1]) && p[-1] != '-')));
        if (!start)
            continue;
        if (heap_sample_at(s, p, g)) {
            cap(g, 0, s, p, s + g[5].rm_eo);
            return 0;
        }
        if (*p == '-')
            p++;
        while (isdig(p[1]))
            p++;
    }
    return REG_NOMATCH;
}

/* (\d+) *(\d+) @([ x0-9a-f]*) */
static int match_cont_sample(const char *s, regmatch_t *g)
{
    for (const char *p = s; *p; p++) {
        if (!isdig(*p) || (p > s && isdig(p[-1])))
            continue;
        const char *q = digits(p), *r = spaces(q), *rest = NULL;
        if (r > q && isdig(*r)) {
            const char *t = digits(r);
            if (t[0] == ' ' && t[1] == '@') {
                cap(g, 1, s, p, q);
                cap(g, 2, s, r, t);
                rest = t + 2;
            }
        }
        /* Backtracking: the second number is the first one's last digit. */
        if (!rest && q - p >= 2 && q[0] == ' ' && q[1] == '@') {
            cap(g, 1, s, p, q - 1);
            cap(g, 2, s, q - 1, q);
            rest = q + 2;
        }
        if (rest) {
            const char *e = rest;
            while (*e == ' ' || *e == 'x' || islowhex(*e))
                e++;
            cap(g, 3, s, rest, e);
            cap(g, 0, s, p, e);
            return 0;
        }
        p = q - 1;
    }
    return REG_NOMATCH;
}

static bool go_space(char c) /* Go's \s: [\t\n\f\r ] */
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* \A(\S+) profile: total \d+\z */
static int match_count_start(const char *s, regmatch_t *g)
{
    const char *p = s;
    while (*p && !go_space(*p))
        p++;
    if (p == s || strncmp(p, " profile: total ", 16) != 0)
        return REG_NOMATCH;
    const char *q = digits(p + 16);
    if (q == p + 16 || *q)
        return REG_NOMATCH;
    cap(g, 1, s, s, p);
    return 0;
}

/* \A(\d+) @(( 0x[0-9a-f]+)+)\z */
static int match_count_line(const char *s, regmatch_t *g)
{
    const char *p = digits(s);
    if (p == s || p[0] != ' ' || p[1] != '@')
        return REG_NOMATCH;
    cap(g, 1, s, s, p);
    const char *a = p + 2, *q = a;
    do {
        if (q[0] != ' ' || q[1] != '0' || q[2] != 'x' || !islowhex(q[3]))
            return REG_NOMATCH;
        for (q += 3; islowhex(*q); q++)
            ;
    } while (*q);
    cap(g, 2, s, a, q);
    return 0;
}

/* --- threadz \d+ --- */
static bool match_threadz(const char *s)
{
    for (const char *q = find(s, "--- threadz "); q; q = find(q + 1, "--- threadz ")) {
        const char *p = digits(q + 12);
        if (p > q + 12 && strncmp(p, " ---", 4) == 0)
            return true;
    }
    return false;
}

/* --- Thread ([[:xdigit:]]+) \(name: (.*)/(\d+)\) stack: --- */
static bool match_thread(const char *s)
{
    /* The rightmost "/\d+) stack: ---" decides for every start: (.*) can
     * reach it whenever it can reach any. */
    const char *last = NULL;
    for (const char *t = find(s, ") stack: ---"); t; t = find(t + 1, ") stack: ---")) {
        const char *d = t;
        while (d > s && isdig(d[-1]))
            d--;
        if (d < t && d > s && d[-1] == '/')
            last = d - 1;
    }
    if (!last)
        return false;
    for (const char *q = find(s, "--- Thread "); q; q = find(q + 1, "--- Thread ")) {
        const char *p = q + 11;
        while (isxdigit((unsigned char)*p))
            p++;
        if (p > q + 11 && strncmp(p, " (name: ", 8) == 0 && p + 8 <= last)
            return true;
    }
    return false;
}

/* --- lines ---------------------------------------------------------------------- */

/* Iterates lines like bufio.ScanLines: split at '\n', drop one trailing
 * '\r'; a last line without '\n' counts. Lines are copied NUL-terminated
 * (regexec needs that; an embedded NUL ends the line for matching). */
typedef struct {
    const char *pos, *end;
    char *buf;
    size_t cap;
    const char *text; /* current line ("" before the first and at the end) */
    size_t len;
    bool eof;
} lines_t;

static void lines_init(lines_t *it, const uint8_t *data, size_t len)
{
    memset(it, 0, sizeof(*it));
    it->pos = (const char *)data;
    it->end = (const char *)data + len;
    it->text = "";
}

/* false at the end (then text is ""), or -1 via *rc on OOM. */
static bool lines_next(lines_t *it, int *rc)
{
    if (it->pos >= it->end) {
        it->eof = true;
        it->text = "";
        it->len = 0;
        return false;
    }
    const char *nl = memchr(it->pos, '\n', (size_t)(it->end - it->pos));
    const char *e = nl ? nl : it->end;
    size_t n = (size_t)(e - it->pos);
    if (n && it->pos[n - 1] == '\r')
        n--;
    if (n + 1 > it->cap) {
        size_t nc = it->cap ? it->cap : 256;
        while (nc < n + 1)
            nc *= 2;
        char *nb = realloc(it->buf, nc);
        if (!nb) {
            *rc = -ENOMEM;
            it->eof = true;
            it->text = "";
            return false;
        }
        it->buf = nb;
        it->cap = nc;
    }
    memcpy(it->buf, it->pos, n);
    it->buf[n] = '\0';
    it->text = it->buf;
    it->len = strnlen(it->buf, n);
    it->pos = nl ? nl + 1 : it->end;
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* strings.TrimSpace (ASCII): the start of the trimmed text, its length. */
static const char *trim(const char *s, size_t *len)
{
    size_t n = strlen(s);
    while (n && is_space(s[n - 1]))
        n--;
    while (n && is_space(*s)) {
        s++;
        n--;
    }
    if (len)
        *len = n;
    return s;
}

static bool space_or_comment(const char *line)
{
    size_t n;
    const char *t = trim(line, &n);
    return n == 0 || t[0] == '#';
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool memory_map_sentinel(const char *line)
{
    return strstr(line, "--- Memory map: ---") || strstr(line, "MAPPED_LIBRARIES:");
}

/* Copies submatch i of line into buf (NUL-terminated, truncated to n). */
static const char *sub(const char *line, const regmatch_t *m, int i, char *buf, size_t n)
{
    if (m[i].rm_so < 0) {
        buf[0] = '\0';
        return buf;
    }
    size_t l = (size_t)(m[i].rm_eo - m[i].rm_so);
    if (l >= n)
        l = n - 1;
    memcpy(buf, line + m[i].rm_so, l);
    buf[l] = '\0';
    return buf;
}

/* The digits of p in base (2..16), all of them, into *v; false when empty,
 * not a digit of the base, or over 64 bits. */
static bool parse_digits(const char *p, int base, uint64_t *out)
{
    if (!*p)
        return false;
    uint64_t v = 0;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return false;
        if (d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

/* strconv.ParseInt(s, base, 64) / ParseUint: the whole string, no sign for
 * unsigned, no overflow. base 0 follows Go's prefixes (0x, 0o, 0b, 0). */
static bool parse_i64(const char *s, int base, int64_t *out)
{
    if (!*s || is_space(*s))
        return false;
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if (base == 0) {
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            base = 16;
            p += 2;
        } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
            base = 8;
            p += 2;
        } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
            base = 2;
            p += 2;
        } else if (p[0] == '0' && p[1]) {
            base = 8;
            p += 1;
        } else {
            base = 10;
        }
    }
    uint64_t v;
    if (!parse_digits(p, base, &v))
        return false;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

static bool parse_u64(const char *s, int base, uint64_t *out)
{
    if (!*s || *s == '+' || *s == '-')
        return false;
    const char *p = s;
    if (base == 0) {
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            base = 16;
            p += 2;
        } else if (p[0] == '0' && p[1]) {
            base = 8;
            p++;
        } else {
            base = 10;
        }
    }
    uint64_t v;
    if (!parse_digits(p, base, &v))
        return false;
    *out = v;
    return true;
}

/* Every "0x[0-9a-f]+" in s (pprof's parseHexAddresses). Returns the count,
 * or -1 when one does not fit in 64 bits (*bad names it), -2 on OOM. */
static long hex_addresses(const char *s, uint64_t **arr, size_t *cap, char *bad, size_t badlen)
{
    size_t n = 0;
    for (const char *p = s; (p = find(p, "0x"));) {
        const char *q = p + 2;
        while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'))
            q++;
        if (q == p + 2) {
            p += 2;
            continue;
        }
        uint64_t v = 0;
        bool ovf = false;
        for (const char *c = p + 2; c < q; c++) {
            unsigned d = (unsigned)(*c <= '9' ? *c - '0' : *c - 'a' + 10);
            if (v >> 60)
                ovf = true;
            v = v << 4 | d;
        }
        if (ovf) {
            snprintf(bad, badlen, "%.*s", (int)(q - p) > 40 ? 40 : (int)(q - p), p);
            return -1;
        }
        if (err_grow((void **)arr, cap, n + 1, sizeof(**arr)) < 0)
            return -2;
        (*arr)[n++] = v;
        p = q;
    }
    return (long)n;
}

/* --- memory maps ------------------------------------------------------------------ */

/* Applies the "$name" substitutions defined by earlier "name=value" lines
 * (strings.NewReplacer: at each position the first matching name wins). */
static char *substitute(const char *line, char **attrs, size_t nattrs)
{
    size_t cap = strlen(line) + 1, n = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (const char *p = line; *p;) {
        size_t i = nattrs;
        if (*p == '$') /* every name starts with '$' */
            for (i = 0; i < nattrs; i += 2)
                if (has_prefix(p, attrs[i]))
                    break;
        const char *add = p;
        size_t addn = 1;
        if (i < nattrs) {
            add = attrs[i + 1];
            addn = strlen(add);
            p += strlen(attrs[i]);
        } else {
            p++;
        }
        if (n + addn + 1 > cap) {
            cap = (n + addn + 1) * 2;
            char *no = realloc(out, cap);
            if (!no) {
                free(out);
                return NULL;
            }
            out = no;
        }
        memcpy(out + n, add, addn);
        n += addn;
    }
    out[n] = '\0';
    return out;
}

/* 1: parsed a mapping into *m; 0: not executable, skip; -1: unrecognized. */
static int mapping_entry(lp_t *lp, const char *l, lmap_t *m)
{
    regmatch_t g[13];
    char start[64], end[64], perm[64], off[64];
    const char *file_s = l, *bid_s = l;
    regoff_t file_so = -1, file_eo = -1, bid_so = -1, bid_eo = -1;
    if (rx_exec(lp, RX_PROCMAPS, l, 13, g) == 0) {
        sub(l, g, 2, start, sizeof(start));
        sub(l, g, 4, end, sizeof(end));
        sub(l, g, 6, perm, sizeof(perm));
        sub(l, g, 8, off, sizeof(off));
        file_so = g[10].rm_so;
        file_eo = g[10].rm_eo;
    } else if (rx_exec(lp, RX_BRIEF, l, 13, g) == 0) {
        sub(l, g, 2, start, sizeof(start));
        sub(l, g, 4, end, sizeof(end));
        sub(l, g, 6, perm, sizeof(perm));
        sub(l, g, 10, off, sizeof(off));
        file_so = g[8].rm_so;
        file_eo = g[8].rm_eo;
        bid_so = g[12].rm_so;
        bid_eo = g[12].rm_eo;
    } else {
        return -1;
    }
    if (perm[0] && !strchr(perm, 'x'))
        return 0;
    memset(m, 0, sizeof(*m));
    if (!parse_u64(start, 16, &m->start) || !parse_u64(end, 16, &m->limit))
        return -1;
    if (off[0] && !parse_u64(off, 16, &m->offset))
        return -1;
    m->file = file_so >= 0 ? strndup(file_s + file_so, (size_t)(file_eo - file_so)) : strdup("");
    m->build_id = bid_so >= 0 ? strndup(bid_s + bid_so, (size_t)(bid_eo - bid_so)) : strdup("");
    if (!m->file || !m->build_id) {
        free(m->file);
        free(m->build_id);
        return -2;
    }
    return 1;
}

/* parseProcMapsFromScanner: every following line that is a mapping. */
static int parse_maps(lp_t *lp, lines_t *it)
{
    char **attrs = NULL;
    size_t nattrs = 0, capattrs = 0;
    int rc = 0;
    while (rc == 0 && lines_next(it, &rc)) {
        const char *line = it->text;
        regmatch_t g[1];
        if (rx_exec(lp, RX_LOGINFO, line, 1, g) == 0)
            line += g[0].rm_eo;
        char *l = substitute(line, attrs, nattrs);
        if (!l) {
            rc = -ENOMEM;
            break;
        }
        lmap_t m;
        int r = mapping_entry(lp, l, &m);
        if (r == -2) {
            rc = -ENOMEM;
        } else if (r == -1) {
            /* "name=value" defines $name for later lines. */
            char *eq = strchr(l, '=');
            /* Only the first definition of a name is ever used (the first
             * match wins), so the table is bounded to keep the cost of
             * substituting linear on hostile input. */
            if (eq && nattrs < 2 * 256) {
                size_t kn, vn;
                *eq = '\0';
                const char *k = trim(l, &kn), *v = trim(eq + 1, &vn);
                if (err_grow((void **)&attrs, &capattrs, nattrs + 2, sizeof(*attrs)) < 0) {
                    rc = -ENOMEM;
                } else {
                    char *key = malloc(kn + 2);
                    char *val = strndup(v, vn);
                    if (key) {
                        key[0] = '$';
                        memcpy(key + 1, k, kn);
                        key[kn + 1] = '\0';
                    }
                    attrs[nattrs++] = key;
                    attrs[nattrs++] = val;
                    if (!key || !val)
                        rc = -ENOMEM;
                }
            }
        } else if (r == 1) {
            if (err_grow((void **)&lp->maps, &lp->cap_maps, lp->n_maps + 1, sizeof(*lp->maps)) < 0) {
                free(m.file);
                free(m.build_id);
                rc = -ENOMEM;
            } else {
                lp->maps[lp->n_maps++] = m;
            }
        }
        free(l);
    }
    for (size_t i = 0; i < nattrs; i++)
        free(attrs[i]);
    free(attrs);
    return rc < 0 ? oom(lp) : 0;
}

/* Skips to the memory map sentinel (unless the current line is one) and
 * parses what follows (parseAdditionalSections). */
static int additional_sections(lp_t *lp, lines_t *it)
{
    int rc = 0;
    while (!memory_map_sentinel(it->text) && lines_next(it, &rc))
        ;
    if (rc < 0)
        return oom(lp);
    return parse_maps(lp, it);
}

/* --- what the text parsers share ----------------------------------------------- */

/* The first line of data (not blank nor a comment, with skip_comments) in
 * it->text: 0, else the lines are freed and LEGACY_UNRECOGNIZED (no such
 * line) or the out-of-memory error. */
static int first_line(lp_t *lp, lines_t *it, const uint8_t *data, size_t len,
                      bool skip_comments)
{
    lines_init(it, data, len);
    int rc = 0;
    bool got;
    while ((got = lines_next(it, &rc)) && skip_comments && space_or_comment(it->text))
        ;
    if (got)
        return 0;
    free(it->buf);
    return rc < 0 ? oom(lp) : LEGACY_UNRECOGNIZED;
}

/* One more sample of v (add_sample's has_bytes, bytes) whose stack is the
 * hex addresses of s[0..n) (*addrs: the caller's scratch array). An
 * address that does not fit in 64 bits is an error of the `what` profile,
 * at line lineno when nonzero. */
static int stack_sample(lp_t *lp, const char *s, size_t n, uint64_t **addrs, size_t *cap,
                        const int64_t *v, bool has_bytes, int64_t bytes, const char *what,
                        size_t lineno)
{
    char *stk = strndup(s, n), bad[48];
    long k = stk ? hex_addresses(stk, addrs, cap, bad, sizeof(bad)) : -2;
    free(stk);
    if (k == -2)
        return -ENOMEM;
    if (k < 0 && lineno)
        return err_fmt(lp->err, lp->errlen, -EINVAL,
                       "%s profile line %zu: address %s does not fit in 64 bits", what, lineno,
                       bad);
    if (k < 0)
        return err_fmt(lp->err, lp->errlen, -EINVAL,
                       "%s profile: address %s does not fit in 64 bits", what, bad);
    return add_sample(lp, *addrs, (size_t)k, false, v, has_bytes, bytes);
}

/* pprof's cleanupDuplicateLocations: a CPU or thread profiler may record
 * the leaf twice, from the signal context and from unwinding (adjusted by
 * -1); the adjusted copy goes. */
static void cleanup_duplicate_locations(lp_t *lp)
{
    for (size_t i = 0; i < lp->n_samples; i++) {
        lsample_t *s = &lp->samples[i];
        uint32_t *st = lp->pool + s->first;
        if (s->n > 1 && lp->locs[st[0]].addr == lp->locs[st[1]].addr + 1) {
            memmove(st + 1, st + 2, (s->n - 2) * sizeof(*st));
            s->n--;
        }
    }
}

/* The end of a text parser that read its samples with rc: the sections
 * after them (a memory map) when all went well, the scratch array and the
 * lines freed. */
static int parse_end(lp_t *lp, lines_t *it, uint64_t *addrs, int rc)
{
    free(addrs);
    if (rc == 0)
        rc = additional_sections(lp, it);
    else if (rc == -ENOMEM)
        rc = oom(lp);
    free(it->buf);
    return rc;
}

/* pprof's libRx: "[.]so$" or "[.]so[._][0-9]+". */
static bool is_lib(const char *f)
{
    for (const char *p = strstr(f, ".so"); p; p = strstr(p + 1, ".so")) {
        if (p[3] == '\0')
            return true;
        if ((p[3] == '.' || p[3] == '_') && p[4] >= '0' && p[4] <= '9')
            return true;
    }
    return false;
}

static bool adjacent(const lmap_t *a, const lmap_t *b)
{
    if (a->file[0] && b->file[0] && strcmp(a->file, b->file) != 0)
        return false;
    if (a->build_id[0] && b->build_id[0] && strcmp(a->build_id, b->build_id) != 0)
        return false;
    if (a->limit != b->start)
        return false;
    if (a->offset != 0 && b->offset != 0 && a->offset + (a->limit - a->start) != b->offset)
        return false;
    return true;
}

/* massageMappings: merge adjacent pieces, main binary first. */
static void massage_mappings(lp_t *lp)
{
    if (lp->n_maps > 1) {
        size_t kept = 1;
        for (size_t i = 1; i < lp->n_maps; i++) {
            lmap_t *last = &lp->maps[kept - 1], *m = &lp->maps[i];
            if (adjacent(last, m)) {
                last->limit = m->limit;
                if (m->file[0]) {
                    free(last->file);
                    last->file = m->file;
                    m->file = NULL;
                }
                if (m->build_id[0]) {
                    free(last->build_id);
                    last->build_id = m->build_id;
                    m->build_id = NULL;
                }
                free(m->file);
                free(m->build_id);
                continue;
            }
            lp->maps[kept++] = *m;
        }
        lp->n_maps = kept;
    }
    for (size_t i = 0; i < lp->n_maps; i++) {
        /* strings.TrimSpace(strings.Replace(file, "(deleted)", "", -1)) */
        const char *f = lp->maps[i].file;
        char *clean = malloc(strlen(f) + 1);
        if (!clean)
            continue;
        size_t n = 0;
        for (const char *p = f; *p;) {
            if (has_prefix(p, "(deleted)")) {
                p += 9;
                continue;
            }
            clean[n++] = *p++;
        }
        clean[n] = '\0';
        size_t tl;
        const char *t = trim(clean, &tl);
        char *name = strndup(t, tl);
        bool candidate = name && tl > 0 && !is_lib(name) && name[0] != '[';
        free(name);
        free(clean);
        if (candidate) {
            lmap_t tmp = lp->maps[0];
            lp->maps[0] = lp->maps[i];
            lp->maps[i] = tmp;
            break;
        }
    }
}

/* --- building the profile ----------------------------------------------------- */

static const char alloc_rx[] =
    "calloc|cfree|malloc|free|memalign|do_memalign|(__)?posix_memalign|pvalloc|valloc|realloc|"
    "tcmalloc::.*|tc_calloc|tc_cfree|tc_malloc|tc_free|tc_memalign|tc_posix_memalign|"
    "tc_pvalloc|tc_valloc|tc_realloc|tc_new|tc_delete|tc_newarray|tc_deletearray|"
    "tc_new_nothrow|tc_newarray_nothrow|malloc_zone_malloc|malloc_zone_calloc|"
    "malloc_zone_valloc|malloc_zone_realloc|malloc_zone_memalign|malloc_zone_free|"
    "runtime\\..*|BaseArena::.*|(::)?do_malloc_no_errno|(::)?do_malloc_pages|(::)?do_malloc|"
    "DoSampledAllocation|MallocedMemBlock::MallocedMemBlock|_M_allocate|"
    "__builtin_(vec_)?delete|__builtin_(vec_)?new|__gnu_cxx::new_allocator::allocate|"
    "__libc_malloc|__malloc_alloc_template::allocate|allocate|cpp_alloc|operator new(\\[\\])?|"
    "simple_alloc::allocate";
static const char alloc_skip_rx[] = "runtime\\.panic|runtime\\.reflectcall|runtime\\.call[0-9]*";
static const char cpu_rx[] = "ProfileData::Add|ProfileData::prof_handler|CpuProfiler::prof_handler|"
                             "__pthread_sighandler|__restore";
static const char lock_rx[] =
    "RecordLockProfileData|(base::)?RecordLockProfileData.*|(base::)?SubmitMutexProfileData.*|"
    "(base::)?SubmitSpinLockProfileData.*|(base::Mutex::)?AwaitCommon.*|"
    "(base::Mutex::)?Unlock.*|(base::Mutex::)?UnlockSlow.*|(base::Mutex::)?ReaderUnlock.*|"
    "(base::MutexLock::)?~MutexLock.*|(Mutex::)?AwaitCommon.*|(Mutex::)?Unlock.*|"
    "(Mutex::)?UnlockSlow.*|(Mutex::)?ReaderUnlock.*|(MutexLock::)?~MutexLock.*|"
    "(SpinLock::)?Unlock.*|(SpinLock::)?SlowUnlock.*|(SpinLockHolder::)?~SpinLockHolder.*";

/* addLegacyFrameInfo: which frames reports should cut. */
static void frame_info(const lp_t *lp, const char **drop, const char **keep)
{
    static const char *const heapz[][4] = {
        {"allocations", "size", NULL, NULL},
        {"objects", "space", NULL, NULL},
        {"inuse_objects", "inuse_space", NULL, NULL},
        {"alloc_objects", "alloc_space", NULL, NULL},
        {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"},
    };
    for (size_t i = 0; i < sizeof(heapz) / sizeof(heapz[0]); i++) {
        unsigned n = heapz[i][2] ? 4 : 2;
        if (n != lp->n_types)
            continue;
        bool same = true;
        for (unsigned j = 0; j < n && same; j++)
            same = strcmp(lp->types[j][0], heapz[i][j]) == 0;
        if (same) {
            *drop = alloc_rx;
            *keep = alloc_skip_rx;
            return;
        }
    }
    if (lp->n_types == 2 && strcmp(lp->types[0][0], "contentions") == 0 &&
        strcmp(lp->types[1][0], "delay") == 0) {
        *drop = lock_rx;
        *keep = "";
        return;
    }
    *drop = cpu_rx;
    *keep = "";
}

/* Sorts mapping indexes by start address: a heap sort, O(n log n) with
 * neither recursion nor allocation (a hostile input may list very many
 * mappings). */
static void sift(size_t *a, size_t i, size_t n, const lmap_t *m)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && m[a[c + 1]].start > m[a[c]].start)
            c++;
        if (m[a[c]].start <= m[a[i]].start)
            return;
        size_t t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

static void sort_by_start(size_t *a, size_t n, const lmap_t *m)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(a, i, n, m);
    for (size_t e = n; e-- > 1;) {
        size_t t = a[0];
        a[0] = a[e];
        a[e] = t;
        sift(a, 0, e, m);
    }
}

/* remapLocationIDs + remapMappingIDs + conversion to profile_t. */
static int build(lp_t *lp, profile_t **out)
{
    massage_mappings(lp);
    /* Locations in order of first use by a sample; unused ones vanish. */
    uint32_t *order = malloc((lp->n_locs ? lp->n_locs : 1) * sizeof(*order));
    if (!order)
        return oom(lp);
    size_t nused = 0;
    for (size_t i = 0; i < lp->n_samples; i++) {
        const lsample_t *s = &lp->samples[i];
        for (uint32_t j = 0; j < s->n; j++) {
            lloc_t *l = &lp->locs[lp->pool[s->first + j]];
            if (!l->newid) {
                l->newid = (uint32_t)nused + 1;
                order[nused++] = lp->pool[s->first + j];
            }
        }
    }
    /* Heuristics for mappings of the main executable (remapMappingIDs). */
    size_t m0 = 0;
    if (lp->n_maps > 1 && has_prefix(lp->maps[0].file, "/anon_hugepage") &&
        lp->maps[0].limit == lp->maps[1].start)
        m0 = 1;
    if (lp->n_maps > m0 && lp->maps[m0].start - lp->maps[m0].offset == 0x400000) {
        lp->maps[m0].start = 0x400000;
        lp->maps[m0].offset = 0;
    }
    size_t nmaps = lp->n_maps - m0;
    lmap_t *maps = lp->maps ? lp->maps + m0 : NULL;
    bool fake = false;
    /* pprof takes the first mapping containing the address. When the
     * ranges do not overlap there is at most one, found by bisection over
     * the mappings sorted by start; otherwise (or once the workaround below
     * moved a start) the scan in order is the rule. */
    size_t *by_start = nmaps > 8 ? malloc(nmaps * sizeof(*by_start)) : NULL;
    size_t nsorted = 0;
    if (by_start) {
        for (size_t i = 0; i < nmaps; i++)
            if (maps[i].start < maps[i].limit)
                by_start[nsorted++] = i;
        sort_by_start(by_start, nsorted, maps);
        for (size_t i = 1; i < nsorted && by_start; i++)
            if (maps[by_start[i - 1]].limit > maps[by_start[i]].start) {
                free(by_start);
                by_start = NULL;
            }
    }
    for (size_t k = 0; k < nused; k++) {
        lloc_t *l = &lp->locs[order[k]];
        uint64_t a = l->addr;
        if (a == 0)
            continue;
        size_t i = nmaps;
        if (by_start) {
            size_t lo = 0, hi = nsorted;
            while (lo < hi) { /* first with start > a */
                size_t mid = lo + (hi - lo) / 2;
                if (maps[by_start[mid]].start <= a)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo > 0 && a < maps[by_start[lo - 1]].limit)
                i = by_start[lo - 1];
        } else {
            for (i = 0; i < nmaps; i++)
                if (maps[i].start <= a && a < maps[i].limit)
                    break;
        }
        if (i == nmaps) {
            /* Legacy writers that lost the first piece of a split mapping. */
            for (i = 0; i < nmaps; i++) {
                lmap_t *m = &maps[i];
                if (m->offset != 0 && m->start - m->offset <= a && a < m->start) {
                    m->start -= m->offset;
                    m->offset = 0;
                    free(by_start);
                    by_start = NULL;
                    break;
                }
            }
        }
        if (i == nmaps) {
            fake = true; /* the catch-all mapping, appended last */
        }
        l->map = (int32_t)i;
    }
    free(by_start);
    profile_t *p = profile_new();
    if (!p) {
        free(order);
        return oom(lp);
    }
    for (unsigned i = 0; i < lp->n_types; i++)
        if (profile_add_sample_type(p, lp->types[i][0], lp->types[i][1]) < 0)
            goto nomem;
    p->period_type.type = profile_intern(p, lp->period_type[0]);
    p->period_type.unit = profile_intern(p, lp->period_type[1]);
    p->period = lp->period;
    p->duration_nanos = lp->duration_nanos;
    const char *drop, *keep;
    frame_info(lp, &drop, &keep);
    p->drop_frames = profile_intern(p, drop);
    p->keep_frames = profile_intern(p, keep);
    if (p->period_type.type < 0 || p->period_type.unit < 0 || p->drop_frames < 0 ||
        p->keep_frames < 0)
        goto nomem;
    for (size_t i = 0; i < nmaps + fake; i++) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m)
            goto nomem;
        m->id = i + 1;
        if (i == nmaps) {
            m->memory_limit = UINT64_MAX;
            continue;
        }
        m->memory_start = maps[i].start;
        m->memory_limit = maps[i].limit;
        m->file_offset = maps[i].offset;
        m->filename = profile_intern(p, maps[i].file);
        m->build_id = profile_intern(p, maps[i].build_id);
        if (m->filename < 0 || m->build_id < 0)
            goto nomem;
    }
    for (size_t k = 0; k < nused; k++) {
        const lloc_t *l = &lp->locs[order[k]];
        profile_location_t *pl = profile_add_location(p, NULL, 0);
        if (!pl)
            goto nomem;
        pl->id = k + 1;
        pl->address = l->addr;
        pl->mapping_id = l->addr ? (uint64_t)l->map + 1 : 0;
    }
    int64_t key_bytes = profile_intern(p, "bytes");
    uint64_t *ids = malloc(64 * sizeof(*ids));
    size_t capids = 64;
    if (key_bytes < 0 || !ids) {
        free(ids);
        goto nomem;
    }
    for (size_t i = 0; i < lp->n_samples; i++) {
        const lsample_t *s = &lp->samples[i];
        if (err_grow((void **)&ids, &capids, s->n + 1, sizeof(*ids)) < 0) {
            free(ids);
            goto nomem;
        }
        for (uint32_t j = 0; j < s->n; j++)
            ids[j] = lp->locs[lp->pool[s->first + j]].newid;
        profile_sample_t *ps = profile_add_sample(p, ids, s->n, s->v);
        if (!ps) {
            free(ids);
            goto nomem;
        }
        if (s->has_bytes) {
            /* Kept even when 0, as in pprof's model (it tells samples
             * apart when merging); the wire format then drops it. */
            profile_label_t l = {key_bytes, 0, s->bytes, 0};
            if (profile_sample_add_label(p, ps, &l) < 0) {
                free(ids);
                goto nomem;
            }
        }
    }
    free(ids);
    free(order);
    if (profile_index(p) < 0) {
        profile_free(p);
        return oom(lp);
    }
    *out = p;
    return 0;
nomem:
    free(order);
    profile_free(p);
    return oom(lp);
}

/* --- heap ------------------------------------------------------------------------- */

/* Go converts float64 to int64 with CVTTSD2SQ on amd64: out-of-range and
 * NaN give INT64_MIN. C leaves that undefined, so spell it out. */
static int64_t f2i(double d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)d;
}

/* Divides a sampled (count, size) by the probability 1 - exp(-avg/rate)
 * that Go's Poisson sampler with mean interval `rate` records an object of
 * the average size (pprof's scaleHeapSample). */
static void scale_heap(int64_t *count, int64_t *size, int64_t rate)
{
    if (*count == 0 || *size == 0) {
        *count = *size = 0;
        return;
    }
    if (rate <= 1)
        return;
    double avg = (double)*size / (double)*count;
    double scale = 1 / (1 - exp(-avg / (double)rate));
    *count = f2i((double)*count * scale);
    *size = f2i((double)*size * scale);
}

static int heap_values(lp_t *lp, const char *line, const char *cs, const char *ss,
                       const char *what, bool v2, int64_t *vals, unsigned *nv, int64_t *block)
{
    int64_t count, size;
    if (!parse_i64(cs, 10, &count) || !parse_i64(ss, 10, &size))
        return err_fmt(lp->err, lp->errlen, -EINVAL, "malformed heap sample: %.80s", line);
    if (count == 0 && size != 0)
        return err_fmt(lp->err, lp->errlen, -EINVAL, "%s count was 0 but %s bytes was %lld", what,
                    what, (long long)size);
    if (count != 0) {
        *block = count == -1 && size == INT64_MIN ? INT64_MIN : size / count;
        if (v2)
            scale_heap(&count, &size, lp->period);
    }
    vals[(*nv)++] = count;
    vals[(*nv)++] = size;
    return 0;
}

static int parse_heap(lp_t *lp, const uint8_t *data, size_t len)
{
    lines_t it;
    int rc = first_line(lp, &it, data, len, false);
    if (rc < 0)
        return rc;
    regmatch_t g[7];
    bool v2 = false, has_alloc = false;
    lp->period_type[0] = "space";
    lp->period_type[1] = "bytes";
    const char *line = it.text;
    /* Every header form contains this: skip the regexps for other input. */
    if (!find(line, "heap profile:")) {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    if (match_heap_hdr(line, g) == 0) {
        char h[6][64], tag[64];
        for (int i = 1; i <= 4; i++)
            sub(line, g, i, h[i], sizeof(h[i]));
        sub(line, g, 5, tag, sizeof(tag));
        sub(line, g, 6, h[5], sizeof(h[5]));
        int64_t period = 0;
        if (h[5][0] && !parse_i64(h[5], 10, &period)) {
            free(it.buf);
            return LEGACY_UNRECOGNIZED;
        }
        /* Compared as strings, as pprof does. */
        has_alloc = (strcmp(h[3], h[1]) != 0 && strcmp(h[3], "0") != 0) ||
                    (strcmp(h[4], h[2]) != 0 && strcmp(h[4], "0") != 0);
        if (strcmp(tag, "heapz_v2") == 0 || strcmp(tag, "heap_v2") == 0) {
            v2 = true;
            lp->period = period;
        } else if (strcmp(tag, "heapprofile") == 0) {
            lp->period = 1;
        } else if (strcmp(tag, "heap") == 0) {
            /* The C++ heap profiler wrote twice the rate; Go kept that. */
            v2 = true;
            lp->period = period / 2;
        } else {
            free(it.buf);
            return LEGACY_UNRECOGNIZED;
        }
    } else if (match_heap_other(line, "growth", g) == 0 ||
               match_heap_other(line, "fragmentation", g) == 0) {
        lp->period = 1;
    } else {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    if (has_alloc) {
        /* alloc first, so that the default (last) column is inuse_space. */
        static const char *const t4[4][2] = {{"alloc_objects", "count"},
                                              {"alloc_space", "bytes"},
                                              {"inuse_objects", "count"},
                                              {"inuse_space", "bytes"}};
        memcpy(lp->types, t4, sizeof(t4));
        lp->n_types = 4;
    } else {
        lp->types[0][0] = "objects";
        lp->types[0][1] = "count";
        lp->types[1][0] = "space";
        lp->types[1][1] = "bytes";
        lp->n_types = 2;
    }
    uint64_t *addrs = NULL;
    size_t capaddrs = 0;
    size_t lineno = 1;
    while (rc == 0 && lines_next(&it, &rc)) {
        lineno++;
        size_t tl;
        const char *t = trim(it.text, &tl);
        char *l = strndup(t, tl);
        if (!l) {
            rc = oom(lp);
            break;
        }
        if (space_or_comment(l)) {
            free(l);
            continue;
        }
        if (memory_map_sentinel(l)) {
            free(l);
            break;
        }
        if (match_heap_sample(l, g) != 0) {
            rc = err_fmt(lp->err, lp->errlen, -EINVAL,
                      "heap profile line %zu is not a sample: \"%.60s\"", lineno, l);
            free(l);
            break;
        }
        char io[32], ib[32], ao[32], ab[32];
        sub(l, g, 1, io, sizeof(io));
        sub(l, g, 2, ib, sizeof(ib));
        sub(l, g, 3, ao, sizeof(ao));
        sub(l, g, 4, ab, sizeof(ab));
        int64_t vals[4], block = 0;
        unsigned nv = 0;
        if (has_alloc)
            rc = heap_values(lp, l, ao, ab, "allocation", v2, vals, &nv, &block);
        if (rc == 0)
            rc = heap_values(lp, l, io, ib, "inuse", v2, vals, &nv, &block);
        if (rc == 0)
            rc = stack_sample(lp, l + g[5].rm_so, (size_t)(g[5].rm_eo - g[5].rm_so), &addrs,
                              &capaddrs, vals, true, block, "heap", lineno);
        free(l);
    }
    return parse_end(lp, &it, addrs, rc);
}

/* --- Go count profiles (goroutine, threadcreate) ------------------------------- */

static int parse_count(lp_t *lp, const uint8_t *data, size_t len)
{
    lines_t it;
    int rc = first_line(lp, &it, data, len, true);
    if (rc < 0)
        return rc;
    regmatch_t g[3];
    if (!find(it.text, " profile: total ") || match_count_start(it.text, g) != 0) {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    char *tname = strndup(it.text + g[1].rm_so, (size_t)(g[1].rm_eo - g[1].rm_so));
    lp->owned = tname; /* types[] otherwise point at literals */
    if (!tname) {
        free(it.buf);
        return oom(lp);
    }
    lp->types[0][0] = tname;
    lp->types[0][1] = "count";
    lp->n_types = 1;
    lp->period_type[0] = tname;
    lp->period_type[1] = "count";
    lp->period = 1;
    uint64_t *addrs = NULL;
    size_t capaddrs = 0;
    while (rc == 0 && lines_next(&it, &rc)) {
        const char *line = it.text;
        if (space_or_comment(line))
            continue;
        if (has_prefix(line, "---"))
            break;
        regmatch_t m[3];
        char num[32];
        int64_t n;
        if (match_count_line(line, m) != 0 ||
            !parse_i64(sub(line, m, 1, num, sizeof(num)), 0, &n)) {
            rc = err_fmt(lp->err, lp->errlen, -EINVAL, "%s profile: malformed line \"%.60s\"", tname,
                      line);
            break;
        }
        rc = stack_sample(lp, line + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so), &addrs,
                          &capaddrs, &n, false, 0, tname, 0);
    }
    return parse_end(lp, &it, addrs, rc);
}

/* --- contention profiles ------------------------------------------------------- */

static int parse_contention(lp_t *lp, const uint8_t *data, size_t len)
{
    lines_t it;
    int rc = first_line(lp, &it, data, len, false);
    if (rc < 0)
        return rc;
    if (!has_prefix(it.text, "--- contentionz ") && !has_prefix(it.text, "--- mutex:") &&
        !has_prefix(it.text, "--- contention:")) {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    lp->period_type[0] = "contentions";
    lp->period_type[1] = "count";
    lp->period = 1;
    lp->types[0][0] = "contentions";
    lp->types[0][1] = "count";
    lp->types[1][0] = "delay";
    lp->types[1][1] = "nanoseconds";
    lp->n_types = 2;
    int64_t cpuhz = 0;
    /* "attribute = value" lines before the samples. */
    while (lines_next(&it, &rc)) {
        size_t tl;
        const char *t = trim(it.text, &tl);
        if (tl == 0 || t[0] == '#')
            continue;
        if (has_prefix(t, "---"))
            break;
        const char *eq = memchr(t, '=', tl);
        if (!eq)
            break;
        size_t kn, vn;
        char *k = strndup(t, (size_t)(eq - t)), *v = strndup(eq + 1, tl - (size_t)(eq - t) - 1);
        if (!k || !v) {
            free(k);
            free(v);
            free(it.buf);
            return oom(lp);
        }
        const char *key = trim(k, &kn), *val = trim(v, &vn);
        char kb[64], vb[64];
        snprintf(kb, sizeof(kb), "%.*s", (int)(kn < 63 ? kn : 63), key);
        snprintf(vb, sizeof(vb), "%.*s", (int)(vn < 63 ? vn : 63), val);
        bool longv = vn >= 63 || kn >= 63;
        free(k);
        free(v);
        bool ok = !longv;
        int64_t x = 0;
        if (ok && strcmp(kb, "cycles/second") == 0)
            ok = parse_i64(vb, 0, &cpuhz);
        else if (ok && strcmp(kb, "sampling period") == 0)
            ok = parse_i64(vb, 0, &lp->period);
        else if (ok && strcmp(kb, "ms since reset") == 0) {
            ok = parse_i64(vb, 0, &x);
            lp->duration_nanos = (int64_t)((uint64_t)x * 1000 * 1000);
        } else if (ok && strcmp(kb, "discarded samples") == 0)
            ;
        else
            ok = false; /* incl. "format"/"resolution" of C++ contentionz */
        if (!ok) {
            free(it.buf);
            return LEGACY_UNRECOGNIZED;
        }
    }
    if (rc < 0) {
        free(it.buf);
        return oom(lp);
    }
    uint64_t *addrs = NULL;
    size_t capaddrs = 0;
    for (;;) {
        size_t tl;
        const char *t = trim(it.text, &tl);
        char *l = strndup(t, tl);
        if (!l) {
            rc = -ENOMEM;
            break;
        }
        if (has_prefix(l, "---")) {
            free(l);
            break;
        }
        if (!space_or_comment(l)) {
            regmatch_t g[4];
            char a[32], b[32];
            int64_t v1, v2;
            if (match_cont_sample(l, g) != 0) {
                free(l);
                rc = LEGACY_UNRECOGNIZED;
                break;
            }
            if (!parse_i64(sub(l, g, 1, a, sizeof(a)), 10, &v1) ||
                !parse_i64(sub(l, g, 2, b, sizeof(b)), 10, &v2)) {
                rc = err_fmt(lp->err, lp->errlen, -EINVAL, "malformed contention sample: %.60s", l);
                free(l);
                break;
            }
            /* Unsample: delays from cycles to nanoseconds, times period. */
            if (lp->period > 0) {
                if (cpuhz > 0) {
                    double ghz = (double)cpuhz / 1e9;
                    v1 = f2i((double)v1 * (double)lp->period / ghz);
                }
                v2 = (int64_t)((uint64_t)v2 * (uint64_t)lp->period);
            }
            int64_t vals[2] = {v2, v1};
            rc = stack_sample(lp, l + g[3].rm_so, (size_t)(g[3].rm_eo - g[3].rm_so), &addrs,
                              &capaddrs, vals, false, 0, "contention", 0);
        }
        free(l);
        if (rc != 0 || !lines_next(&it, &rc))
            break;
    }
    return parse_end(lp, &it, addrs, rc);
}

/* --- threadz -------------------------------------------------------------------- */

static int parse_thread(lp_t *lp, const uint8_t *data, size_t len)
{
    lines_t it;
    int rc = first_line(lp, &it, data, len, true);
    if (rc < 0)
        return rc;
    if (!find(it.text, "--- threadz ") && !find(it.text, "--- Thread ")) {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    if (match_threadz(it.text)) {
        while (lines_next(&it, &rc))
            if (memory_map_sentinel(it.text) || has_prefix(it.text, "-"))
                break;
    } else if (!match_thread(it.text)) {
        free(it.buf);
        return LEGACY_UNRECOGNIZED;
    }
    lp->types[0][0] = "thread";
    lp->types[0][1] = "count";
    lp->n_types = 1;
    lp->period_type[0] = "thread";
    lp->period_type[1] = "count";
    lp->period = 1;
    uint64_t *addrs = NULL;
    size_t capaddrs = 0;
    /* The current line is kept in `cur` across parse_thread_sample. */
    char *cur = strdup(it.text);
    while (rc == 0 && cur && !memory_map_sentinel(cur)) {
        if (has_prefix(cur, "---- no stack trace for")) {
            cur[0] = '\0';
            break;
        }
        if (!match_thread(cur)) {
            rc = LEGACY_UNRECOGNIZED;
            break;
        }
        /* One stack: hex addresses up to the next "---" line. */
        size_t n = 0;
        bool same = false;
        char *next = NULL;
        while (rc == 0 && lines_next(&it, &rc)) {
            size_t tl;
            const char *t = trim(it.text, &tl);
            if (tl == 0)
                continue;
            if (has_prefix(t, "---")) {
                next = strndup(t, tl);
                break;
            }
            if (strstr(t, "same as previous thread")) {
                same = true;
                continue;
            }
            char *l = strndup(t, tl), bad[48];
            uint64_t *more = NULL;
            size_t capmore = 0;
            long k = l ? hex_addresses(l, &more, &capmore, bad, sizeof(bad)) : -2;
            free(l);
            if (k == -2 || err_grow((void **)&addrs, &capaddrs, n + (size_t)(k > 0 ? k : 0) + 1,
                                sizeof(*addrs)) < 0)
                rc = -ENOMEM;
            else if (k < 0)
                rc = err_fmt(lp->err, lp->errlen, -EINVAL,
                          "thread profile: address %s does not fit in 64 bits", bad);
            else if (k > 0) {
                memcpy(addrs + n, more, (size_t)k * sizeof(*addrs));
                n += (size_t)k;
            }
            free(more);
        }
        free(cur);
        cur = next ? next : strdup("");
        if (rc != 0)
            break;
        if (same || n == 0) {
            /* "same as previous thread": count it on the previous sample. */
            if (lp->n_samples)
                lp->samples[lp->n_samples - 1].v[0]++;
            continue;
        }
        int64_t one = 1;
        rc = add_sample(lp, addrs, n, true, &one, false, 0);
    }
    if (!cur && rc == 0)
        rc = -ENOMEM;
    free(cur);
    rc = parse_end(lp, &it, addrs, rc);
    if (rc == 0)
        cleanup_duplicate_locations(lp);
    return rc;
}

/* --- gperftools binary CPU profile ----------------------------------------------- */

typedef struct {
    unsigned width; /* 4 or 8 */
    bool big;
} wordfmt_t;

static bool word(const uint8_t **p, const uint8_t *end, wordfmt_t f, uint64_t *v)
{
    if ((size_t)(end - *p) < f.width) {
        *v = 0;
        return false;
    }
    uint64_t x = 0;
    for (unsigned i = 0; i < f.width; i++) {
        unsigned sh = f.big ? 8 * (f.width - 1 - i) : 8 * i;
        x |= (uint64_t)(*p)[i] << sh;
    }
    *p += f.width;
    *v = x;
    return true;
}

static int parse_cpu(lp_t *lp, const uint8_t *data, size_t len)
{
    static const wordfmt_t fmts[] = {{4, false}, {4, true}, {8, false}, {8, true}};
    const uint8_t *end = data + len, *p = NULL;
    wordfmt_t f = {0, false};
    uint64_t h[5];
    for (size_t i = 0; i < 4; i++) {
        const uint8_t *q = data;
        bool ok = true;
        for (int k = 0; k < 5; k++)
            ok = word(&q, end, fmts[i], &h[k]) && ok;
        if (ok && h[0] == 0 && h[1] == 3 && h[2] == 0 && h[3] > 0 && h[4] == 0) {
            f = fmts[i];
            p = q;
            break;
        }
        /* h[2] == 1 is the Java variant, not read here. */
    }
    if (!p)
        return LEGACY_UNRECOGNIZED;
    lp->period = (int64_t)(h[3] * 1000); /* microseconds -> nanoseconds */
    lp->period_type[0] = "cpu";
    lp->period_type[1] = "nanoseconds";
    lp->types[0][0] = "samples";
    lp->types[0][1] = "count";
    lp->types[1][0] = "cpu";
    lp->types[1][1] = "nanoseconds";
    lp->n_types = 2;
    uint64_t *addrs = NULL;
    size_t capaddrs = 0;
    int rc = 0;
    while (p < end) {
        uint64_t count, nstk;
        bool ok = word(&p, end, f, &count);
        ok = word(&p, end, f, &nstk) && ok;
        /* pprof bounds the depth by a quarter of the bytes left, whatever
         * the word size. */
        if (!ok || nstk > (uint64_t)(end - p) / 4) {
            free(addrs);
            return LEGACY_UNRECOGNIZED;
        }
        if (err_grow((void **)&addrs, &capaddrs, (size_t)nstk + 1, sizeof(*addrs)) < 0) {
            free(addrs);
            return oom(lp);
        }
        bool short_read = false;
        for (uint64_t i = 0; i < nstk; i++)
            if (!word(&p, end, f, &addrs[i]))
                short_read = true;
        if (short_read)
            p = end; /* Go's reader is then at a nil slice: the loop ends */
        if (count == 0 && nstk == 1 && addrs[0] == 0)
            break; /* end-of-data marker */
        int64_t v[2] = {(int64_t)count, (int64_t)(count * (uint64_t)lp->period)};
        rc = add_sample(lp, addrs, (size_t)nstk, true, v, false, 0);
        if (rc < 0)
            break;
    }
    free(addrs);
    if (rc < 0)
        return rc;
    /* A frame pushed by the signal handler shows up as the same second
     * frame in (nearly) every sample: strip it, up to twice. */
    size_t margin = lp->n_samples / 32;
    for (int iter = 0; iter < 2; iter++) {
        /* The candidate must be in at least n - margin samples, more than
         * half of them, so it is the majority element (Boyer-Moore). */
        uint64_t cand = 0;
        size_t votes = 0, with2 = 0;
        for (size_t i = 0; i < lp->n_samples; i++) {
            const lsample_t *s = &lp->samples[i];
            if (s->n < 2)
                continue;
            uint64_t a = lp->locs[lp->pool[s->first + 1]].addr;
            with2++;
            if (votes == 0) {
                cand = a;
                votes = 1;
            } else {
                votes += a == cand ? 1 : (size_t)-1;
            }
        }
        if (with2 == 0)
            break;
        size_t cnt = 0;
        for (size_t i = 0; i < lp->n_samples; i++) {
            const lsample_t *s = &lp->samples[i];
            cnt += s->n >= 2 && lp->locs[lp->pool[s->first + 1]].addr == cand;
        }
        if (cnt + margin < lp->n_samples)
            continue;
        for (size_t i = 0; i < lp->n_samples; i++) {
            lsample_t *s = &lp->samples[i];
            uint32_t *st = lp->pool + s->first;
            if (s->n >= 2 && lp->locs[st[1]].addr == cand) {
                memmove(st + 1, st + 2, (s->n - 2) * sizeof(*st));
                s->n--;
            }
        }
    }
    lines_t it;
    lines_init(&it, p, (size_t)(end - p));
    rc = parse_maps(lp, &it);
    free(it.buf);
    if (rc < 0)
        return rc;
    cleanup_duplicate_locations(lp);
    return 0;
}

/* --- entry point ------------------------------------------------------------------ */

int legacy_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    lp_t lp;
    memset(&lp, 0, sizeof(lp));
    lp.err = err;
    lp.errlen = errlen;
    int rc;
    static int (*const parsers[])(lp_t *, const uint8_t *, size_t) = {
        parse_cpu, parse_heap, parse_count, parse_thread, parse_contention,
    };
    rc = LEGACY_UNRECOGNIZED;
    for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
        lp_reset(&lp);
        rc = parsers[i](&lp, data, len);
        if (rc != LEGACY_UNRECOGNIZED)
            break;
    }
    if (lp.rx_failed)
        rc = err_fmt(err, errlen, -ENOMEM, "out of memory compiling a regular expression");
    if (rc == LEGACY_UNRECOGNIZED)
        err_fmt(err, errlen, rc, "unrecognized profile format");
    if (rc == 0)
        rc = build(&lp, out);
    if (rc == 0) {
        rc = profile_validate(*out, err, errlen);
        if (rc < 0) {
            profile_free(*out);
            *out = NULL;
        }
    }
    lp_free(&lp);
    return rc;
}
