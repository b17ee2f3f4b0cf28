/* gen.c — random profiles, profile comparison and Go's -raw printer for the
 * format library's tests (see gen.h). */
#include "gen.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- generator ---------------------------------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r) /* splitmix64: tiny, good enough, portable */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(rng_t *r, uint64_t n)
{
    return n ? rnd(r) % n : 0;
}

/* Skewed pick in [0, n): small indexes are much more likely. */
static uint64_t skewed(rng_t *r, uint64_t n)
{
    uint64_t a = below(r, n), b = below(r, n);
    return a < b ? a : b;
}

void profgen_defaults(profgen_opts_t *o, uint64_t seed)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->samples = 50;
    o->locations = 40;
    o->functions = 20;
    o->mappings = 2;
    o->min_depth = 1;
    o->max_depth = 12;
    o->labels = 2;
    o->inline_pct = 20;
    o->sample_types = 4;
}

void profgen_large(profgen_opts_t *o, uint64_t seed)
{
    profgen_defaults(o, seed);
    o->samples = 200000;
    o->locations = 50000;
    o->functions = 20000;
    o->mappings = 2;
    o->min_depth = 20;
    o->max_depth = 60;
    o->labels = 1;
    o->inline_pct = 15;
}

int profgen_shape(profgen_opts_t *o, const char *name, uint64_t seed)
{
    profgen_large(o, seed);
    if (strcmp(name, "samples") == 0) {
        o->samples = 1000000;
        o->locations = 2000;
        o->functions = 1000;
        o->min_depth = 4;
        o->max_depth = 16;
    } else if (strcmp(name, "strings") == 0) {
        o->samples = 100000;
        o->locations = 500000;
        o->functions = 250000;
        o->min_depth = 10;
        o->max_depth = 30;
        o->labels = 3;
    } else if (strcmp(name, "deep") == 0) {
        o->samples = 40000;
        o->min_depth = 300;
        o->max_depth = 600;
    } else if (strcmp(name, "snapshot") == 0) {
        o->samples = 8000;
    } else if (strcmp(name, "large") != 0) {
        return -1;
    }
    return 0;
}

static uint64_t make_id(const profgen_opts_t *o, rng_t *r, size_t i)
{
    if (!o->sparse_ids)
        return i + 1;
    /* Unique: high random bits, index in the low bits. */
    return (rnd(r) & ~0xffffffull) | (i + 1);
}

static const char *const heap_types[4][2] = {
    {"alloc_objects", "count"},
    {"alloc_space", "bytes"},
    {"inuse_objects", "count"},
    {"inuse_space", "bytes"},
};

profile_t *profgen_make(const profgen_opts_t *o)
{
    rng_t r = {o->seed * 0x2545f4914f6cdd1dull + 1};
    profile_t *p = profile_new();
    if (!p)
        return NULL;
    char buf[256];
    unsigned nt = o->sample_types;
    for (unsigned i = 0; i < nt; i++) {
        if (nt == 4) {
            if (profile_add_sample_type(p, heap_types[i][0], heap_types[i][1]) < 0)
                goto oom;
        } else {
            snprintf(buf, sizeof(buf), "type%u", i);
            if (profile_add_sample_type(p, buf, i % 2 ? "bytes" : "count") < 0)
                goto oom;
        }
    }
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = profile_intern(p, "bytes");
    p->period = 524288;
    p->time_nanos = 1700000000000000000ll + (int64_t)below(&r, 1000000000000ull);
    p->duration_nanos = (int64_t)below(&r, 10000000000ull);
    snprintf(buf, sizeof(buf), "profgen seed %" PRIu64, o->seed);
    if (profile_add_comment(p, buf) < 0)
        goto oom;
    if (o->seed % 3 == 1 && nt >= 2)
        p->default_sample_type = p->sample_types[1].type;

    uint64_t *map_ids = calloc(o->mappings + 1, sizeof(*map_ids));
    uint64_t *fn_ids = calloc(o->functions + 1, sizeof(*fn_ids));
    uint64_t *loc_ids = calloc(o->locations + 1, sizeof(*loc_ids));
    if (!map_ids || !fn_ids || !loc_ids)
        goto oom_free;

    uint64_t base = 0x400000;
    for (size_t i = 0; i < o->mappings; i++) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m)
            goto oom_free;
        m->id = map_ids[i] = make_id(o, &r, i);
        m->memory_start = base;
        m->memory_limit = base + 0x100000 + below(&r, 16) * 0x1000;
        m->file_offset = i ? 0x1000 * below(&r, 4) : 0;
        base = m->memory_limit + 0x10000000;
        if (i == 0)
            snprintf(buf, sizeof(buf), "/usr/local/bin/synthetic-%" PRIu64, o->seed % 100);
        else
            snprintf(buf, sizeof(buf), "/usr/lib/libgen%zu.so.%u", i, (unsigned)below(&r, 9));
        m->filename = profile_intern(p, buf);
        if (below(&r, 2)) {
            snprintf(buf, sizeof(buf), "%016" PRIx64 "%016" PRIx64, rnd(&r), rnd(&r));
            m->build_id = profile_intern(p, buf);
        }
        m->has_functions = below(&r, 2);
        m->has_filenames = below(&r, 2);
        m->has_line_numbers = below(&r, 2);
        m->has_inline_frames = below(&r, 2);
    }
    static const char *const pkgs[] = {"io", "net", "json", "db", "rpc", "cache", "sched"};
    for (size_t i = 0; i < o->functions; i++) {
        profile_function_t *f = profile_add_function(p);
        if (!f)
            goto oom_free;
        f->id = fn_ids[i] = make_id(o, &r, i);
        const char *pkg = pkgs[i % (sizeof(pkgs) / sizeof(pkgs[0]))];
        snprintf(buf, sizeof(buf), "%s.component%03u.fn_%zu", pkg, (unsigned)below(&r, 400), i);
        f->name = profile_intern(p, buf);
        if (below(&r, 4) == 0) {
            snprintf(buf, sizeof(buf), "_ZN%s%zuE", pkg, i);
            f->system_name = profile_intern(p, buf);
        } else {
            f->system_name = f->name;
        }
        snprintf(buf, sizeof(buf), "src/%s/file%u.c", pkg, (unsigned)below(&r, 50));
        f->filename = profile_intern(p, buf);
        f->start_line = (int64_t)below(&r, 3000);
    }
    for (size_t i = 0; i < o->locations; i++) {
        profile_line_t lines[3];
        size_t nl = o->functions ? 1 : 0;
        if (nl && below(&r, 100) < o->inline_pct)
            nl = 2 + below(&r, 2);
        for (size_t j = 0; j < nl; j++) {
            lines[j].function_id = fn_ids[skewed(&r, o->functions)];
            lines[j].line = (int64_t)below(&r, 5000);
        }
        profile_location_t *l = profile_add_location(p, lines, nl);
        if (!l)
            goto oom_free;
        l->id = loc_ids[i] = make_id(o, &r, i);
        if (o->mappings) {
            size_t mi = below(&r, 100) < 95 ? 0 : 1 + below(&r, o->mappings);
            if (mi >= o->mappings)
                mi = o->mappings - 1;
            const profile_mapping_t *m = &p->mappings[mi];
            l->mapping_id = m->id;
            l->address = m->memory_start + below(&r, m->memory_limit - m->memory_start);
        } else {
            l->address = below(&r, 2) ? 0x1000 + below(&r, 1u << 30) : 0;
        }
        l->is_folded = below(&r, 50) == 0;
    }
    int64_t key_bytes = profile_intern(p, "bytes");
    static const char *const lkeys[] = {"thread", "handler", "request", "span"};
    uint64_t *stack = calloc(o->max_depth + 1, sizeof(*stack));
    int64_t *vals = calloc(nt + 1, sizeof(*vals));
    if (!stack || !vals) {
        free(stack);
        free(vals);
        goto oom_free;
    }
    if (o->sample_seed)
        r.s = o->sample_seed * 0x9e3779b97f4a7c15ull + 7;
    for (size_t i = 0; i < o->samples && o->locations; i++) {
        unsigned depth = o->min_depth + (unsigned)below(&r, o->max_depth - o->min_depth + 1);
        /* Root-side trunk shared by groups of samples, skewed leaves. */
        uint64_t trunk = below(&r, 64);
        for (unsigned d = 0; d < depth; d++) {
            size_t li;
            if (d >= depth / 2)
                li = (trunk * 7919 + d * 104729) % o->locations;
            else
                li = skewed(&r, o->locations);
            stack[d] = loc_ids[li];
        }
        bool zero = o->zero_values && below(&r, 10) == 0;
        int64_t objs = 1 + (int64_t)below(&r, 1000);
        int64_t size = 8 << below(&r, 16);
        for (unsigned t = 0; t < nt; t++) {
            int64_t v = t % 2 ? objs * size : objs;
            if (t >= 2 && below(&r, 3) == 0)
                v = 0; /* freed */
            if (nt != 4 && below(&r, 8) == 0)
                v = -v;
            vals[t] = zero ? 0 : v;
        }
        profile_sample_t *s = profile_add_sample(p, stack, depth, vals);
        if (!s)
            goto oom_all;
        profile_label_t l = {key_bytes, 0, size, 0};
        if (profile_sample_add_label(p, s, &l) < 0)
            goto oom_all;
        unsigned nlab = o->labels ? (unsigned)below(&r, o->labels + 1) : 0;
        for (unsigned j = 0; j < nlab; j++) {
            const char *k = lkeys[below(&r, 4)];
            memset(&l, 0, sizeof(l));
            l.key = profile_intern(p, k);
            switch (below(&r, 3)) {
            case 0:
                snprintf(buf, sizeof(buf), "%s-%u", k, (unsigned)below(&r, 8));
                l.str = profile_intern(p, buf);
                break;
            case 1:
                l.num = 1 + (int64_t)below(&r, 100000);
                break;
            default:
                l.num = 1 + (int64_t)below(&r, 100000);
                l.num_unit = profile_intern(p, below(&r, 2) ? "bytes" : "nanoseconds");
            }
            if (l.key < 0 || l.str < 0 || l.num_unit < 0 || profile_sample_add_label(p, s, &l) < 0)
                goto oom_all;
        }
    }
    free(stack);
    free(vals);
    free(map_ids);
    free(fn_ids);
    free(loc_ids);
    if (profile_index(p) < 0) {
        profile_free(p);
        return NULL;
    }
    return p;
oom_all:
    free(stack);
    free(vals);
oom_free:
    free(map_ids);
    free(fn_ids);
    free(loc_ids);
oom:
    profile_free(p);
    return NULL;
}

/* --- comparison ----------------------------------------------------------------- */

static const char *str(const profile_t *p, int64_t i)
{
    return i >= 0 && (uint64_t)i < p->n_strings ? p->strings[i] : "<bad index>";
}

static bool diff(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool diff(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return false;
}

#define SAME_STR(what, ia, ib)                                                                 \
    do {                                                                                       \
        if (strcmp(str(a, ia), str(b, ib)) != 0)                                               \
            return diff(why, whylen, "%s: \"%s\" vs \"%s\"", what, str(a, ia), str(b, ib));    \
    } while (0)
#define SAME_NUM(what, x, y)                                                                   \
    do {                                                                                       \
        if ((x) != (y))                                                                        \
            return diff(why, whylen, "%s: %lld vs %lld", what, (long long)(x), (long long)(y)); \
    } while (0)

bool profgen_equal(const profile_t *a, const profile_t *b, char *why, size_t whylen)
{
    char w[96];
    SAME_NUM("sample type count", a->n_sample_types, b->n_sample_types);
    for (size_t i = 0; i < a->n_sample_types; i++) {
        snprintf(w, sizeof(w), "sample_type[%zu].type", i);
        SAME_STR(w, a->sample_types[i].type, b->sample_types[i].type);
        snprintf(w, sizeof(w), "sample_type[%zu].unit", i);
        SAME_STR(w, a->sample_types[i].unit, b->sample_types[i].unit);
    }
    SAME_NUM("sample count", a->n_samples, b->n_samples);
    for (size_t i = 0; i < a->n_samples; i++) {
        const profile_sample_t *x = &a->samples[i], *y = &b->samples[i];
        snprintf(w, sizeof(w), "sample[%zu] depth", i);
        SAME_NUM(w, x->n_location_ids, y->n_location_ids);
        for (uint32_t j = 0; j < x->n_location_ids; j++) {
            snprintf(w, sizeof(w), "sample[%zu] location[%u]", i, j);
            SAME_NUM(w, x->location_ids[j], y->location_ids[j]);
        }
        for (size_t j = 0; j < a->n_sample_types; j++) {
            snprintf(w, sizeof(w), "sample[%zu] value[%zu]", i, j);
            SAME_NUM(w, x->values[j], y->values[j]);
        }
        snprintf(w, sizeof(w), "sample[%zu] label count", i);
        SAME_NUM(w, x->n_labels, y->n_labels);
        for (uint32_t j = 0; j < x->n_labels; j++) {
            const profile_label_t *lx = &x->labels[j], *ly = &y->labels[j];
            snprintf(w, sizeof(w), "sample[%zu] label[%u]", i, j);
            SAME_STR(w, lx->key, ly->key);
            SAME_STR(w, lx->str, ly->str);
            SAME_NUM(w, lx->num, ly->num);
            SAME_STR(w, lx->num_unit, ly->num_unit);
        }
    }
    SAME_NUM("mapping count", a->n_mappings, b->n_mappings);
    for (size_t i = 0; i < a->n_mappings; i++) {
        const profile_mapping_t *x = &a->mappings[i], *y = &b->mappings[i];
        snprintf(w, sizeof(w), "mapping[%zu]", i);
        SAME_NUM(w, x->id, y->id);
        SAME_NUM(w, x->memory_start, y->memory_start);
        SAME_NUM(w, x->memory_limit, y->memory_limit);
        SAME_NUM(w, x->file_offset, y->file_offset);
        SAME_STR(w, x->filename, y->filename);
        SAME_STR(w, x->build_id, y->build_id);
        SAME_NUM(w, x->has_functions, y->has_functions);
        SAME_NUM(w, x->has_filenames, y->has_filenames);
        SAME_NUM(w, x->has_line_numbers, y->has_line_numbers);
        SAME_NUM(w, x->has_inline_frames, y->has_inline_frames);
    }
    SAME_NUM("location count", a->n_locations, b->n_locations);
    for (size_t i = 0; i < a->n_locations; i++) {
        const profile_location_t *x = &a->locations[i], *y = &b->locations[i];
        snprintf(w, sizeof(w), "location[%zu]", i);
        SAME_NUM(w, x->id, y->id);
        SAME_NUM(w, x->mapping_id, y->mapping_id);
        SAME_NUM(w, x->address, y->address);
        SAME_NUM(w, x->is_folded, y->is_folded);
        SAME_NUM(w, x->n_lines, y->n_lines);
        for (uint32_t j = 0; j < x->n_lines; j++) {
            snprintf(w, sizeof(w), "location[%zu] line[%u]", i, j);
            SAME_NUM(w, x->lines[j].function_id, y->lines[j].function_id);
            SAME_NUM(w, x->lines[j].line, y->lines[j].line);
        }
    }
    SAME_NUM("function count", a->n_functions, b->n_functions);
    for (size_t i = 0; i < a->n_functions; i++) {
        const profile_function_t *x = &a->functions[i], *y = &b->functions[i];
        snprintf(w, sizeof(w), "function[%zu]", i);
        SAME_NUM(w, x->id, y->id);
        SAME_STR(w, x->name, y->name);
        SAME_STR(w, x->system_name, y->system_name);
        SAME_STR(w, x->filename, y->filename);
        SAME_NUM(w, x->start_line, y->start_line);
    }
    SAME_STR("drop_frames", a->drop_frames, b->drop_frames);
    SAME_STR("keep_frames", a->keep_frames, b->keep_frames);
    SAME_NUM("time_nanos", a->time_nanos, b->time_nanos);
    SAME_NUM("duration_nanos", a->duration_nanos, b->duration_nanos);
    SAME_STR("period_type.type", a->period_type.type, b->period_type.type);
    SAME_STR("period_type.unit", a->period_type.unit, b->period_type.unit);
    SAME_NUM("period", a->period, b->period);
    SAME_NUM("comment count", a->n_comments, b->n_comments);
    for (size_t i = 0; i < a->n_comments; i++) {
        snprintf(w, sizeof(w), "comment[%zu]", i);
        SAME_STR(w, a->comments[i], b->comments[i]);
    }
    SAME_STR("default_sample_type", a->default_sample_type, b->default_sample_type);
    return true;
}

/* --- Go's Profile.String() ---------------------------------------------------- */

/* time.Duration.String(). */
static void go_duration(int64_t d, char *out, size_t n)
{
    char buf[40];
    size_t w = sizeof(buf) - 1;
    buf[w] = '\0';
    uint64_t u = d < 0 ? -(uint64_t)d : (uint64_t)d;
#define PUT(c) (buf[--w] = (c))
    if (u < 1000000000ull) {
        int prec;
        const char *unit;
        if (u == 0) {
            snprintf(out, n, "0s");
            return;
        } else if (u < 1000) {
            prec = 0;
            unit = "ns";
        } else if (u < 1000000) {
            prec = 3;
            unit = "\xc2\xb5s";
        } else {
            prec = 6;
            unit = "ms";
        }
        for (int i = (int)strlen(unit) - 1; i >= 0; i--)
            PUT(unit[i]);
        bool print = false;
        for (int i = 0; i < prec; i++) {
            unsigned digit = (unsigned)(u % 10);
            print = print || digit != 0;
            if (print)
                PUT((char)('0' + digit));
            u /= 10;
        }
        if (print)
            PUT('.');
        do {
            PUT((char)('0' + u % 10));
            u /= 10;
        } while (u);
    } else {
        PUT('s');
        bool print = false;
        for (int i = 0; i < 9; i++) {
            unsigned digit = (unsigned)(u % 10);
            print = print || digit != 0;
            if (print)
                PUT((char)('0' + digit));
            u /= 10;
        }
        if (print)
            PUT('.');
        uint64_t secs = u % 60;
        u /= 60;
        do {
            PUT((char)('0' + secs % 10));
            secs /= 10;
        } while (secs);
        if (u > 0) {
            PUT('m');
            uint64_t mins = u % 60;
            u /= 60;
            do {
                PUT((char)('0' + mins % 10));
                mins /= 10;
            } while (mins);
            if (u > 0) {
                PUT('h');
                do {
                    PUT((char)('0' + u % 10));
                    u /= 10;
                } while (u);
            }
        }
    }
    if (d < 0)
        PUT('-');
#undef PUT
    snprintf(out, n, "%s", buf + w);
}

/* time.Unix(0, ns).String() in UTC. */
static void go_time(int64_t ns, char *out, size_t n)
{
    int64_t sec = ns / 1000000000, frac = ns % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        sec--;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    gmtime_r(&t, &tm);
    char f[16] = "";
    if (frac) {
        snprintf(f, sizeof(f), ".%09lld", (long long)frac);
        size_t l = strlen(f);
        while (f[l - 1] == '0')
            f[--l] = '\0';
    }
    snprintf(out, n, "%04d-%02d-%02d %02d:%02d:%02d%s +0000 UTC", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, f);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "key:[v1 v2]" entries of one kind of label, sorted, space-joined. */
static void print_labels(const profile_t *p, const profile_sample_t *s, bool numeric, FILE *f)
{
    char **items = calloc(s->n_labels + 1, sizeof(*items));
    size_t ni = 0;
    for (uint32_t i = 0; i < s->n_labels; i++) {
        const profile_label_t *l = &s->labels[i];
        if ((l->str != 0) == numeric)
            continue;
        if (!l->str && !l->num && !l->num_unit)
            continue; /* lost in Go's encode/decode before printing */
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = s->labels[j].key == l->key && (s->labels[j].str != 0) != numeric &&
                   (s->labels[j].str || s->labels[j].num || s->labels[j].num_unit);
        if (seen)
            continue;
        /* Go pads units with "" once any value of the key has one. */
        bool units = false;
        for (uint32_t j = i; j < s->n_labels; j++) {
            const profile_label_t *m = &s->labels[j];
            if (m->key == l->key && m->str == 0 && m->num_unit != 0)
                units = true;
        }
        size_t cap = 64, len = 0;
        char *b = malloc(cap);
        len += (size_t)snprintf(b, cap, "%s:[", str(p, l->key));
        bool first = true;
        for (uint32_t j = i; j < s->n_labels; j++) {
            const profile_label_t *m = &s->labels[j];
            if (m->key != l->key || (m->str != 0) == numeric)
                continue;
            if (!m->str && !m->num && !m->num_unit)
                continue;
            char v[512];
            if (!numeric)
                snprintf(v, sizeof(v), "%s", str(p, m->str));
            else if (units)
                snprintf(v, sizeof(v), "%lld %s", (long long)m->num, str(p, m->num_unit));
            else
                snprintf(v, sizeof(v), "%lld", (long long)m->num);
            size_t need = len + strlen(v) + 4;
            if (need > cap) {
                cap = need * 2;
                b = realloc(b, cap);
            }
            len += (size_t)snprintf(b + len, cap - len, "%s%s", first ? "" : " ", v);
            first = false;
        }
        if (len + 2 > cap)
            b = realloc(b, cap = len + 2);
        b[len++] = ']';
        b[len] = '\0';
        items[ni++] = b;
    }
    qsort(items, ni, sizeof(*items), cmp_cstr);
    if (ni) {
        fprintf(f, "\n                ");
        for (size_t i = 0; i < ni; i++)
            fprintf(f, "%s%s", i ? " " : "", items[i]);
    }
    for (size_t i = 0; i < ni; i++)
        free(items[i]);
    free(items);
}

/* Go's %#x: "0x0" for zero, where C prints "0". */
static void go_hex(uint64_t v, char *out, size_t n)
{
    snprintf(out, n, "0x%" PRIx64, v);
}

void profgen_print_raw(const profile_t *p, FILE *f)
{
    char buf[128];
    for (size_t i = 0; i < p->n_comments; i++)
        fprintf(f, "Comment: %s\n", str(p, p->comments[i]));
    fprintf(f, "PeriodType: %s %s\n", str(p, p->period_type.type), str(p, p->period_type.unit));
    fprintf(f, "Period: %lld\n", (long long)p->period);
    if (p->time_nanos) {
        go_time(p->time_nanos, buf, sizeof(buf));
        fprintf(f, "Time: %s\n", buf);
    }
    if (p->duration_nanos) {
        /* "%.4v": the first four runes of Duration.String(). */
        go_duration(p->duration_nanos, buf, sizeof(buf));
        size_t runes = 0, i = 0;
        for (; buf[i] && runes < 4; i++)
            if (((unsigned char)buf[i] & 0xc0) != 0x80)
                runes++;
        while (buf[i] && ((unsigned char)buf[i] & 0xc0) == 0x80)
            i++;
        buf[i] = '\0';
        fprintf(f, "Duration: %s\n", buf);
    }
    fprintf(f, "Samples:\n");
    for (size_t i = 0; i < p->n_sample_types; i++) {
        const profile_value_type_t *t = &p->sample_types[i];
        bool dflt = strcmp(str(p, t->type), str(p, p->default_sample_type)) == 0;
        fprintf(f, "%s%s/%s%s", i ? " " : "", str(p, t->type), str(p, t->unit),
                dflt ? "[dflt]" : "");
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < p->n_samples; i++) {
        const profile_sample_t *s = &p->samples[i];
        for (size_t j = 0; j < p->n_sample_types; j++)
            fprintf(f, " %10lld", (long long)s->values[j]);
        fprintf(f, ": ");
        for (uint32_t j = 0; j < s->n_location_ids; j++)
            fprintf(f, "%" PRIu64 " ", s->location_ids[j]);
        print_labels(p, s, false, f);
        print_labels(p, s, true, f);
        fprintf(f, "\n");
    }
    fprintf(f, "Locations\n");
    for (size_t i = 0; i < p->n_locations; i++) {
        const profile_location_t *l = &p->locations[i];
        char head[96], addr[24];
        go_hex(l->address, addr, sizeof(addr));
        int hl = snprintf(head, sizeof(head), "%6" PRIu64 ": %s ", l->id, addr);
        if (l->mapping_id)
            hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "M=%" PRIu64 " ", l->mapping_id);
        if (l->is_folded)
            snprintf(head + hl, sizeof(head) - (size_t)hl, "[F] ");
        if (l->n_lines == 0)
            fprintf(f, "%s\n", head);
        for (uint32_t j = 0; j < l->n_lines; j++) {
            const profile_function_t *fn = profile_function_by_id(p, l->lines[j].function_id);
            fprintf(f, "%s", j ? "             " : head);
            if (!fn) {
                fprintf(f, "??\n");
                continue;
            }
            fprintf(f, "%s %s:%lld s=%lld", str(p, fn->name), str(p, fn->filename),
                    (long long)l->lines[j].line, (long long)fn->start_line);
            if (strcmp(str(p, fn->name), str(p, fn->system_name)) != 0)
                fprintf(f, "(%s)", str(p, fn->system_name));
            fprintf(f, "\n");
        }
    }
    fprintf(f, "Mappings\n");
    for (size_t i = 0; i < p->n_mappings; i++) {
        const profile_mapping_t *m = &p->mappings[i];
        char a[24], b[24], c[24];
        go_hex(m->memory_start, a, sizeof(a));
        go_hex(m->memory_limit, b, sizeof(b));
        go_hex(m->file_offset, c, sizeof(c));
        fprintf(f, "%" PRIu64 ": %s/%s/%s %s %s %s%s%s%s\n", m->id, a, b, c,
                str(p, m->filename), str(p, m->build_id), m->has_functions ? "[FN]" : "",
                m->has_filenames ? "[FL]" : "", m->has_line_numbers ? "[LN]" : "",
                m->has_inline_frames ? "[IN]" : "");
    }
}
