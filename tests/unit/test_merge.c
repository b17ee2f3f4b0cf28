// links: tests/gen/gen.c profile
/* test_merge.c — pprof's Merge/Compact, Scale, Normalize, SetLabel and
 * -base/-diff_base on hand-built and generated profiles. (Agreement with
 * go tool pprof on the same inputs: tests/e2e/profile_merge.sh.) */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen/gen.h"
#include "profile/decode.h"
#include "profile/merge.h"
#include "profile/strkeys.h"
#include "profile/zread.h"

#include "encode_same.h"

static const char *str(const profile_t *p, int64_t i)
{
    return p->strings[i];
}

/* A small profile: one mapping at `base`, functions f/g, locations
 * base+0x10 (f) and base+0x20 (g). */
static profile_t *mini(uint64_t base, const char *file)
{
    profile_t *p = profile_new();
    assert_int_equal(profile_add_sample_type(p, "objects", "count"), 0);
    assert_int_equal(profile_add_sample_type(p, "space", "bytes"), 0);
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = profile_intern(p, "bytes");
    p->period = 1;
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->memory_start = base;
    m->memory_limit = base + 0x1000;
    m->filename = profile_intern(p, file);
    const char *names[] = {"f", "g"};
    for (int i = 0; i < 2; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = (uint64_t)i + 1;
        f->name = f->system_name = profile_intern(p, names[i]);
        profile_line_t ln = {(uint64_t)i + 1, 10 * (i + 1)};
        profile_location_t *l = profile_add_location(p, &ln, 1);
        l->id = (uint64_t)i + 1;
        l->mapping_id = 1;
        l->address = base + 0x10 * ((uint64_t)i + 1);
    }
    assert_int_equal(profile_index(p), 0);
    return p;
}

static profile_sample_t *add(profile_t *p, uint64_t a, uint64_t b, int64_t v0, int64_t v1)
{
    uint64_t st[2] = {a, b};
    int64_t v[2] = {v0, v1};
    return profile_add_sample(p, st, b ? 2 : 1, v);
}

static void add_label(profile_t *p, profile_sample_t *s, const char *k, const char *v,
                      int64_t num)
{
    profile_label_t l = {profile_intern(p, k), v ? profile_intern(p, v) : 0, v ? 0 : num, 0};
    assert_int_equal(profile_sample_add_label(p, s, &l), 0);
}

static profile_t *merge2(profile_t *a, profile_t *b)
{
    profile_t *both[2] = {a, b}, *out = NULL;
    char err[256];
    if (profile_merge(both, 2, &out, err, sizeof(err)) != 0)
        fail_msg("merge: %s", err);
    char verr[256];
    assert_int_equal(profile_validate(out, verr, sizeof(verr)), 0);
    return out;
}

static void test_merge_dedupes(void **state)
{
    (void)state;
    /* Same program at two load addresses (ASLR): one mapping, locations
     * matched by offset, samples with equal stacks and labels summed. */
    profile_t *a = mini(0x10000, "/bin/app"), *b = mini(0x7f0000, "/bin/app");
    add(a, 1, 2, 1, 100);
    add(a, 2, 0, 5, 500);
    add(b, 1, 2, 2, 200);
    profile_sample_t *s = add(b, 1, 2, 3, 300);
    add_label(b, s, "thread", "t1", 0);
    add(b, 2, 0, 0, 0); /* zero: ignored */
    profile_t *m = merge2(a, b);
    assert_int_equal(m->n_mappings, 1);
    assert_int_equal(m->mappings[0].memory_start, 0x10000);
    assert_int_equal(m->n_locations, 2);
    assert_int_equal(m->n_functions, 2);
    assert_int_equal(m->n_samples, 3);
    assert_int_equal(m->samples[0].values[0], 3);
    assert_int_equal(m->samples[0].values[1], 300);
    assert_int_equal(m->samples[1].values[0], 5);
    assert_int_equal(m->samples[2].values[0], 3);
    assert_int_equal(m->samples[2].n_labels, 1);
    assert_string_equal(str(m, m->samples[2].labels[0].str), "t1");
    /* ids are 1..N in order of first use */
    assert_int_equal(m->samples[0].location_ids[0], 1);
    assert_int_equal(m->locations[1].address, 0x10020);
    profile_free(a);
    profile_free(b);
    profile_free(m);
}

static void test_labels_canonical(void **state)
{
    (void)state;
    /* Label order does not matter for equality; values of one key keep
     * their order; output is sorted like Go's encoder writes it. */
    profile_t *a = mini(0x1000, "/bin/app");
    profile_sample_t *s = add(a, 1, 0, 1, 1);
    add_label(a, s, "z", "1", 0);
    add_label(a, s, "bytes", NULL, 64);
    add_label(a, s, "a", "x", 0);
    s = add(a, 1, 0, 1, 1);
    add_label(a, s, "a", "x", 0);
    add_label(a, s, "bytes", NULL, 64);
    add_label(a, s, "z", "1", 0);
    s = add(a, 1, 0, 1, 1); /* different numeric label: separate */
    add_label(a, s, "bytes", NULL, 32);
    profile_t *m;
    char err[128];
    assert_int_equal(profile_compact(a, &m, err, sizeof(err)), 0);
    assert_int_equal(m->n_samples, 2);
    assert_int_equal(m->samples[0].values[0], 2);
    assert_string_equal(str(m, m->samples[0].labels[0].key), "a");
    assert_string_equal(str(m, m->samples[0].labels[1].key), "z");
    assert_string_equal(str(m, m->samples[0].labels[2].key), "bytes");
    profile_free(a);
    profile_free(m);
}

static void test_compact_drops_unused(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app");
    profile_mapping_t *extra = profile_add_mapping(a);
    extra->id = 2;
    extra->memory_start = 0x9000;
    extra->memory_limit = 0xa000;
    extra->filename = profile_intern(a, "/lib/unused.so");
    add(a, 2, 0, 4, 4);
    profile_index(a);
    profile_t *m;
    char err[128];
    assert_int_equal(profile_compact(a, &m, err, sizeof(err)), 0);
    assert_int_equal(m->n_mappings, 1); /* the first is always kept */
    assert_int_equal(m->n_locations, 1);
    assert_int_equal(m->n_functions, 1);
    assert_string_equal(str(m, m->functions[0].name), "g");
    assert_int_equal(m->locations[0].id, 1);
    profile_free(a);
    profile_free(m);
}

static void test_headers(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app"), *b = mini(0x1000, "/bin/app");
    add(a, 1, 0, 1, 1);
    add(b, 1, 0, 1, 1);
    a->time_nanos = 200;
    b->time_nanos = 100;
    a->duration_nanos = 5;
    b->duration_nanos = 7;
    a->period = 3;
    b->period = 9;
    profile_add_comment(a, "one");
    profile_add_comment(b, "one");
    profile_add_comment(b, "two");
    b->default_sample_type = profile_intern(b, "space");
    profile_t *m = merge2(a, b);
    assert_int_equal(m->time_nanos, 100);
    assert_int_equal(m->duration_nanos, 12);
    assert_int_equal(m->period, 9);
    assert_int_equal(m->n_comments, 2);
    assert_string_equal(str(m, m->comments[1]), "two");
    assert_string_equal(str(m, m->default_sample_type), "space");
    profile_free(m);
    /* merge.go's quirk: a later zero time_nanos wins over a nonzero one. */
    b->time_nanos = 0;
    m = merge2(a, b);
    assert_int_equal(m->time_nanos, 0);
    profile_free(m);
    profile_free(a);
    profile_free(b);
}

static void test_incompatible(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app"), *b = mini(0x1000, "/bin/app"), *out;
    profile_t *both[2] = {a, b};
    char err[256];
    b->sample_types[1].type = profile_intern(b, "inuse_space");
    assert_int_equal(profile_merge(both, 2, &out, err, sizeof(err)), -EINVAL);
    assert_null(out);
    assert_string_equal(err, "incompatible sample types [objects/count space/bytes] and "
                             "[objects/count inuse_space/bytes]");
    b->sample_types[1].type = profile_intern(b, "space");
    b->period_type.type = profile_intern(b, "cpu");
    assert_int_equal(profile_merge(both, 2, &out, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "incompatible period types space/bytes and cpu/bytes"));
    assert_int_equal(profile_merge(both, 0, &out, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "no profiles to merge");
    profile_free(a);
    profile_free(b);
}

static void test_scale(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app");
    add(a, 1, 0, 3, -5);
    add(a, 2, 0, 1, 1);
    add(a, 1, 2, 100, 7);
    assert_int_equal(profile_scale(a, 0.5), 0);
    /* math.Round: half away from zero; a sample that becomes all zero
     * goes away. */
    assert_int_equal(a->n_samples, 3);
    assert_int_equal(a->samples[0].values[0], 2);
    assert_int_equal(a->samples[0].values[1], -3);
    assert_int_equal(a->samples[1].values[0], 1);
    assert_int_equal(profile_scale(a, 0.1), 0);
    assert_int_equal(a->n_samples, 1); /* (0.2, -0.3) and (0.1, 0.1) round to 0 */
    assert_int_equal(a->samples[0].values[0], 5);
    assert_int_equal(a->samples[0].values[1], 0);
    double r[2] = {1, 0};
    assert_int_equal(profile_scale_n(a, r, 2), 0);
    /* only the scaled column decides: all zero there -> dropped */
    assert_int_equal(a->n_samples, 0);
    assert_int_equal(profile_scale_n(a, r, 1), -EINVAL);
    profile_free(a);
}

static void test_base_and_diff_base(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app"), *b = mini(0x5000, "/bin/app"), *out;
    add(a, 1, 2, 10, 1000);
    add(a, 2, 0, 4, 400);
    add(b, 1, 2, 10, 1000);
    add(b, 2, 0, 1, 100);
    char err[256];
    assert_int_equal(profile_apply_base(a, b, false, false, &out, err, sizeof(err)), 0);
    /* The equal stack cancels out and disappears. */
    assert_int_equal(out->n_samples, 1);
    assert_int_equal(out->samples[0].values[0], 3);
    assert_int_equal(out->samples[0].values[1], 300);
    assert_int_equal(out->n_locations, 1);
    assert_int_equal(out->n_functions, 1);
    profile_free(out);
    profile_free(b);

    b = mini(0x5000, "/bin/app");
    add(b, 1, 2, 10, 1000);
    assert_int_equal(profile_apply_base(a, b, true, false, &out, err, sizeof(err)), 0);
    /* -diff_base keeps base samples apart (labelled), negated. */
    assert_int_equal(out->n_samples, 3);
    const profile_sample_t *s = &out->samples[2];
    assert_int_equal(s->values[0], -10);
    assert_int_equal(s->n_labels, 1);
    assert_string_equal(str(out, s->labels[0].key), "pprof::base");
    assert_string_equal(str(out, s->labels[0].str), "true");
    profile_free(out);
    profile_free(b);

    /* -normalize scales the source to the base's totals. */
    b = mini(0x5000, "/bin/app");
    add(b, 1, 2, 7, 700);
    assert_int_equal(profile_apply_base(a, b, false, true, &out, err, sizeof(err)), 0);
    /* a's totals 14/1400 -> 7/700: each halved, then minus base */
    assert_int_equal(out->n_samples, 2);
    assert_int_equal(out->samples[0].values[0], 5 - 7);
    assert_int_equal(out->samples[1].values[0], 2);
    profile_free(out);
    profile_free(b);
    profile_free(a);
}

static void test_set_label(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app");
    profile_sample_t *s = add(a, 1, 0, 1, 1);
    add_label(a, s, "k", "old", 0);
    add_label(a, s, "k", NULL, 5);
    add_label(a, s, "other", "x", 0);
    assert_int_equal(profile_set_label(a, "k", "new"), 0);
    s = &a->samples[0];
    assert_int_equal(s->n_labels, 3);
    assert_int_equal(s->labels[0].num, 5); /* numeric values of k stay */
    assert_string_equal(str(a, s->labels[2].str), "new");
    profile_free(a);
}

/* The generated profiles of the random tests: four sample types, zero
 * values, and by seed sparse ids and 0-3 mappings. */
static void random_opts(profgen_opts_t *o, uint64_t seed)
{
    profgen_defaults(o, seed);
    o->sample_types = 4;
    o->sparse_ids = seed % 3 == 0;
    o->mappings = seed % 4;
    o->zero_values = true;
}

/* Random profiles: merging keeps every column's total (no cancellation
 * with nonnegative values), is idempotent under compaction, and merging a
 * profile with itself doubles it. */
static void test_random_properties(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        profgen_opts_t o;
        random_opts(&o, seed);
        profile_t *a = profgen_make(&o);
        o.seed = seed + 100;
        profile_t *b = profgen_make(&o);
        profile_t *m = merge2(a, b);
        for (size_t t = 0; t < 4; t++) {
            int64_t ta = 0, tb = 0, tm = 0;
            for (size_t i = 0; i < a->n_samples; i++)
                ta += a->samples[i].values[t];
            for (size_t i = 0; i < b->n_samples; i++)
                tb += b->samples[i].values[t];
            for (size_t i = 0; i < m->n_samples; i++)
                tm += m->samples[i].values[t];
            assert_int_equal(ta + tb, tm);
        }
        profile_t *c;
        char err[128], why[256];
        assert_int_equal(profile_compact(m, &c, err, sizeof(err)), 0);
        if (!profgen_equal(m, c, why, sizeof(why)))
            fail_msg("seed %llu: compact(merge) != merge: %s", (unsigned long long)seed, why);
        profile_t *d = merge2(c, c);
        assert_int_equal(d->n_samples, c->n_samples);
        for (size_t i = 0; i < d->n_samples; i++)
            assert_int_equal(d->samples[i].values[1], 2 * c->samples[i].values[1]);
        /* And the merge survives a round trip through the wire. */
        pbuf_t buf = {0};
        assert_int_equal(profile_encode(d, &buf), 0);
        profile_t *e;
        assert_int_equal(profile_decode_proto(buf.data, buf.len, &e, err, sizeof(err)), 0);
        assert_true(profgen_equal(d, e, why, sizeof(why)));
        pbuf_free(&buf);
        profile_free(a);
        profile_free(b);
        profile_free(m);
        profile_free(c);
        profile_free(d);
        profile_free(e);
    }
}

/* profile_merge_owned, which takes a single profile's storage and rewrites
 * its arrays in place, gives what profile_merge gives, byte for byte:
 * random ids, zero samples, duplicate stacks, labels out of order, and the
 * second merge after values cancel out. */
static void test_merge_owned(void **state)
{
    (void)state;
    char err[128], why[256];
    for (uint64_t seed = 1; seed <= 12; seed++) {
        profgen_opts_t o;
        random_opts(&o, seed);
        profile_t *a = profgen_make(&o), *own = profgen_make(&o), *m, *n;
        profile_sample_t *d = &own->samples[own->n_samples / 2], *t = &a->samples[a->n_samples / 2];
        /* a duplicate stack with labels in another order, in both */
        for (profile_t *p = a; p; p = p == a ? own : NULL) {
            const profile_sample_t *src = p == a ? t : d;
            profile_sample_t *x = profile_add_sample(p, src->location_ids, src->n_location_ids,
                                                     src->values);
            assert_non_null(x);
            x->labels = profile_alloc(p, 2 * sizeof(*x->labels));
            x->labels[0] = (profile_label_t){profile_intern(p, "z"), profile_intern(p, "1"), 0, 0};
            x->labels[1] = (profile_label_t){profile_intern(p, "a"), profile_intern(p, "2"), 0, 0};
            x->n_labels = 2;
        }
        assert_int_equal(profile_merge(&a, 1, &m, err, sizeof(err)), 0);
        assert_int_equal(profile_merge_owned(&own, 1, &n, err, sizeof(err)), 0);
        if (!profgen_equal(m, n, why, sizeof(why)))
            fail_msg("seed %llu: owned merge differs: %s", (unsigned long long)seed, why);
        assert_same_encoding(m, n);
        profile_free(a);
        profile_free(m);
        profile_free(n);
    }
    /* values that cancel: merged again (as an owned merge of one) */
    profile_t *a = mini(0x1000, "/bin/app"), *b = mini(0x1000, "/bin/app"), *m;
    add(a, 1, 2, 3, 30);
    add(a, 2, 0, 1, 10);
    add(b, 1, 2, -3, -30);
    profile_t *both[2] = {a, b};
    assert_int_equal(profile_merge_owned(both, 2, &m, err, sizeof(err)), 0);
    assert_int_equal(m->n_samples, 1);
    assert_int_equal(m->n_locations, 1);
    assert_int_equal(m->samples[0].values[1], 10);
    profile_free(m);
}

/* A keyer as combine.c's, on this thread: the keys are made when waited
 * for (none: the merge interns them itself). */
typedef struct {
    const profile_t *p;
    bool none;
    strkeys_t *k;
    int waits;
} test_keyer_t;

static const uint32_t *tk_wait(void *ctx)
{
    test_keyer_t *t = ctx;
    t->waits++;
    if (t->none)
        return NULL;
    assert_non_null(t->k = strkeys_new(t->p));
    return strkeys_keys(t->k);
}

static uint32_t tk_of(void *ctx, const char *s)
{
    return strkeys_of(((test_keyer_t *)ctx)->k, s);
}

/* A string of p again at a new index (a table may repeat strings). */
static int64_t again(profile_t *p, int64_t i)
{
    int64_t d = profile_add_string(p, p->strings[i], strlen(p->strings[i]));
    assert_true(d > i);
    return d;
}

/* Makes p's string table repeat strings that elements use: function 1
 * becomes function 0 through other indexes (the merge must find them
 * equal), function 2 is named "bytes" (a header string) through a new
 * index, a label's value is "" at an index other than 0 (a numeric
 * label's), and the first mapping's file a repeat. */
static void repeat_strings(profile_t *p)
{
    assert_true(p->n_functions >= 3);
    profile_function_t *f0 = &p->functions[0], *f1 = &p->functions[1];
    f1->name = again(p, f0->name);
    f1->system_name = again(p, f0->system_name);
    f1->filename = f0->filename;
    f1->start_line = f0->start_line;
    p->functions[2].name = profile_add_string(p, "bytes", 5);
    if (p->n_mappings)
        p->mappings[0].filename = again(p, p->mappings[0].filename);
    for (size_t i = 0; i < p->n_samples; i++)
        if (p->samples[i].n_labels) {
            p->samples[i].labels[0].str = profile_add_string(p, "", 0);
            p->samples[i].labels[0].num = 0;
            break;
        }
}

/* Adds the negation of a sample with a nonzero value, both labelled with
 * strings nothing else uses: the merge cancels them out. */
static void cancel_one(profile_t *p)
{
    size_t j = 0;
    while (j < p->n_samples && p->samples[j].values[0] == 0)
        j++;
    assert_true(j < p->n_samples);
    profile_label_t only = {profile_add_string(p, "zkey", 4), profile_add_string(p, "zonly", 5),
                            0, 0};
    assert_int_equal(profile_sample_add_label(p, &p->samples[j], &only), 0);
    profile_sample_t s = p->samples[j];
    int64_t values[16];
    assert_true(p->n_sample_types <= 16);
    for (size_t v = 0; v < p->n_sample_types; v++)
        values[v] = -s.values[v];
    profile_sample_t *neg = profile_add_sample(p, s.location_ids, s.n_location_ids, values);
    assert_non_null(neg);
    s = p->samples[j]; /* the array may have moved */
    for (uint32_t l = 0; l < s.n_labels; l++)
        assert_int_equal(profile_sample_add_label(p, neg, &s.labels[l]), 0);
}

/* profile_merge_keyed gives profile_merge's compaction of the profile,
 * byte for byte, with keys and without (the merge interns), also where
 * the table repeats strings that elements use (merged once more) and
 * where values cancel out (merged once more, interning, also with
 * repeated strings); the keyer is waited for once. */
static void test_merge_keyed(void **state)
{
    (void)state;
    char err[128], why[256];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        for (int variant = 0; variant < 8; variant++) {
            profgen_opts_t o;
            random_opts(&o, seed);
            profile_t *a = profgen_make(&o), *own = profgen_make(&o), *m, *n;
            if (variant & 2) {
                repeat_strings(a);
                repeat_strings(own);
            }
            if (variant & 4) {
                cancel_one(a);
                cancel_one(own);
            }
            assert_int_equal(profile_merge(&a, 1, &m, err, sizeof(err)), 0);
            test_keyer_t tk = {own, variant % 2 == 1, NULL, 0};
            profile_keyer_t keyer = {tk_wait, tk_of, &tk};
            assert_int_equal(profile_merge_keyed(&own, &keyer, &n, err, sizeof(err)), 0);
            assert_int_equal(tk.waits, 1);
            if (!profgen_equal(m, n, why, sizeof(why)))
                fail_msg("seed %llu variant %d: keyed merge differs: %s",
                         (unsigned long long)seed, variant, why);
            assert_same_encoding(m, n);
            if (variant == 2)
                assert_true(m->n_functions < a->n_functions);
            strkeys_free(tk.k);
            profile_free(a);
            profile_free(m);
            profile_free(n);
        }
    }
}

/* The sources of a streamed merge: series[i] made anew from its options
 * (the merge frees each one it is given). */
typedef struct {
    profgen_opts_t o[4];
    size_t given;
} series_t;

static int series_next(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    series_t *s = ctx;
    s->given++;
    *p = profgen_make(&s->o[i]);
    if (!*p)
        snprintf(err, errlen, "no profile %zu", i);
    return *p ? 0 : -ENOMEM;
}

/* The sources of a streamed merge from a list (taken one by one). */
static int from_list(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    *p = (*(profile_t ***)ctx)[i];
    return 0;
}

static int series_fail(void *ctx, size_t i, profile_t **p, char *err, size_t errlen)
{
    return i == 2 ? (snprintf(err, errlen, "source 2 is gone"), -ENOENT)
                  : series_next(ctx, i, p, err, errlen);
}

/* profile_merge_stream, given header copies and then each source once,
 * gives what profile_merge of all the sources gives, byte for byte (a
 * series sharing locations, and unrelated profiles); a source that fails
 * ends the merge with its own message. */
static void test_merge_stream(void **state)
{
    (void)state;
    char err[128], why[256];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        series_t s = {.given = 0};
        profile_t *all[4], *heads[4], *m, *n;
        for (size_t i = 0; i < 4; i++) {
            random_opts(&s.o[i], seed % 2 ? seed : seed * 10 + i);
            s.o[i].sample_seed = seed % 2 ? i + 1 : 0;
            all[i] = profgen_make(&s.o[i]);
            assert_non_null(all[i]);
            assert_int_equal(profile_header_copy(all[i], &heads[i]), 0);
            assert_int_equal(heads[i]->n_samples, 0);
        }
        assert_int_equal(profile_merge_owned(all, 4, &m, err, sizeof(err)), 0);
        assert_int_equal(profile_merge_stream(heads, 4, series_next, &s, &n, err, sizeof(err)), 0);
        assert_int_equal(s.given, 4);
        if (!profgen_equal(m, n, why, sizeof(why)))
            fail_msg("seed %llu: streamed merge differs: %s", (unsigned long long)seed, why);
        assert_same_encoding(m, n);
        profile_free(m);
        profile_free(n);
        s.given = 0;
        for (size_t i = 0; i < 4; i++) {
            profile_t *p = profgen_make(&s.o[i]);
            assert_int_equal(profile_header_copy(p, &heads[i]), 0);
            profile_free(p);
        }
        assert_int_equal(profile_merge_stream(heads, 4, series_fail, &s, &n, err, sizeof(err)),
                         -ENOENT);
        assert_null(n);
        assert_string_equal(err, "source 2 is gone");
    }
}

/* A series source with its own header sums, and comments from {a, b}. */
static profile_t *series_source(const profgen_opts_t *o, size_t i)
{
    profile_t *p = profgen_make(o);
    assert_non_null(p);
    p->time_nanos = 1000 - (int64_t)i * 7;
    p->duration_nanos = 10 + (int64_t)i;
    p->period = 3 + (int64_t)(i % 3);
    if (i % 2 == 0)
        assert_int_equal(profile_add_comment(p, "b"), 0);
    if (i == 0)
        assert_int_equal(profile_add_comment(p, "a"), 0);
    return p;
}

/* profile_merger_add_keyed gives profile_merger_add's profile byte for
 * byte: sources of two programs (different string tables) in turn, keyed
 * by a table that also holds other strings (keys are not indexes), one
 * source keyed for only half its strings. So does profile_merger_add_kept
 * with each source decoded into the storage of the one before (the
 * driver's series): out keeps nothing of a source. */
static void test_merger_keyed(void **state)
{
    (void)state;
    char err[128], why[256];
    for (uint64_t seed = 1; seed <= 4; seed++) {
        profile_t *out[3];
        for (int keyed = 0; keyed < 3; keyed++) {
            profile_t *spent = NULL; /* keyed 2: the source merged last */
            profile_t *dict = profile_new(), *heads[4];
            assert_non_null(dict);
            assert_true(profile_intern(dict, "unrelated 1") > 0);
            assert_true(profile_intern(dict, "unrelated 2") > 0);
            profile_merger_t *pm = NULL;
            for (size_t i = 0; i < 4; i++) {
                profgen_opts_t o;
                random_opts(&o, seed);
                o.seed = seed + (i % 2) * 100;
                o.sample_seed = i + 1;
                profile_t *src = series_source(&o, i);
                if (keyed == 2) { /* decoded where the last one was */
                    pbuf_t b = {0};
                    assert_int_equal(profile_encode(src, &b), 0);
                    profile_free(src);
                    zread_t z;
                    zread_mem(&z, b.data, b.len, b.len);
                    profile_decode_fail_t fail;
                    assert_int_equal(
                        profile_decode_stream_reuse(&z, spent, &src, err, sizeof(err), &fail), 0);
                    spent = NULL;
                    zread_close(&z);
                    pbuf_free(&b);
                }
                assert_int_equal(profile_header_copy(src, &heads[i]), 0);
                if (i == 0)
                    assert_int_equal(profile_merger_new(heads[0], &pm), 0);
                if (!keyed) {
                    assert_int_equal(profile_merger_add(pm, src), 0);
                    continue;
                }
                uint32_t *keys = malloc((src->n_strings + 1) * sizeof(*keys));
                assert_non_null(keys);
                for (size_t k = 0; k < src->n_strings; k++) {
                    int64_t key = profile_intern(dict, src->strings[k]);
                    assert_true(key >= 0);
                    keys[k] = (uint32_t)key;
                }
                size_t n_keys = i == 3 ? src->n_strings / 2 : src->n_strings;
                if (keyed == 2) {
                    assert_int_equal(profile_merger_add_kept(pm, src, keys, n_keys), 0);
                    spent = src;
                } else {
                    assert_int_equal(profile_merger_add_keyed(pm, src, keys, n_keys), 0);
                }
                free(keys);
            }
            profile_free(spent);
            assert_int_equal(profile_merger_end(pm, heads, 4, &out[keyed], err, sizeof(err)), 0);
            for (size_t i = 0; i < 4; i++)
                profile_free(heads[i]);
            profile_free(dict);
        }
        for (int k = 1; k < 3; k++) {
            if (!profgen_equal(out[0], out[k], why, sizeof(why)))
                fail_msg("seed %llu: keyed merge %d differs: %s", (unsigned long long)seed, k, why);
            assert_same_encoding(out[0], out[k]);
        }
        for (int k = 0; k < 3; k++)
            profile_free(out[k]);
    }
}

/* profile_merger_*, each source merged as it comes, gives what
 * profile_merge_stream gives, byte for byte, when every header is the
 * first's (profile_merger_same_header); a header with another unit, a new
 * comment or a default sample type the first lacks is not the same. */
static void test_merger(void **state)
{
    (void)state;
    char err[128], why[256];
    for (uint64_t seed = 1; seed <= 6; seed++) {
        profgen_opts_t o[4];
        profile_t *heads[4], *heads2[4], *m, *n;
        for (size_t i = 0; i < 4; i++) {
            random_opts(&o[i], seed);
            o[i].sample_seed = i + 1;
        }
        profile_merger_t *pm = NULL;
        for (size_t i = 0; i < 4; i++) {
            profile_t *src = series_source(&o[i], i);
            assert_int_equal(profile_header_copy(src, &heads[i]), 0);
            assert_int_equal(profile_header_copy(src, &heads2[i]), 0);
            if (i == 0)
                assert_int_equal(profile_merger_new(heads[0], &pm), 0);
            else
                assert_true(profile_merger_same_header(heads[0], heads[i]));
            assert_int_equal(profile_merger_add(pm, src), 0);
        }
        assert_int_equal(profile_merger_end(pm, heads, 4, &m, err, sizeof(err)), 0);
        for (size_t i = 0; i < 4; i++) {
            profile_free(heads[i]);
            heads[i] = series_source(&o[i], i);
        }
        /* the reference: heads2 and sources made anew */
        profile_t **src = heads;
        assert_int_equal(profile_merge_stream(heads2, 4, from_list, &src, &n, err, sizeof(err)), 0);
        if (!profgen_equal(m, n, why, sizeof(why)))
            fail_msg("seed %llu: merged as they came differs: %s", (unsigned long long)seed, why);
        assert_int_equal(m->time_nanos, 1000 - 21);
        assert_int_equal(m->duration_nanos, 10 + 11 + 12 + 13);
        assert_int_equal(m->period, 5);
        assert_int_equal(m->n_comments, 3); /* profgen's, b, a */
        assert_same_encoding(m, n);
        profile_free(m);
        profile_free(n);
    }
    profgen_opts_t o;
    random_opts(&o, 3);
    profile_t *a = series_source(&o, 0), *b = series_source(&o, 1);
    assert_true(profile_merger_same_header(a, b));
    assert_int_equal(profile_add_comment(b, "c"), 0);
    assert_false(profile_merger_same_header(a, b));
    profile_free(b);
    b = series_source(&o, 1);
    b->default_sample_type = profile_intern(b, "space");
    assert_false(profile_merger_same_header(a, b));
    profile_free(b);
    b = series_source(&o, 1);
    b->sample_types[1].unit = profile_intern(b, "kilobytes");
    assert_false(profile_merger_same_header(a, b));
    profile_free(a);
    profile_free(b);
}

/* profile_drop_stacks after a decode and an owned merge (which takes the
 * decoded stacks' storage along): the samples keep their values and labels
 * and lose their locations, and the profile still encodes (ASan: nothing
 * reads the released stacks, nothing frees them twice). */
static void test_drop_stacks(void **state)
{
    (void)state;
    char err[128];
    for (uint64_t seed = 1; seed <= 6; seed++) {
        profgen_opts_t o;
        random_opts(&o, seed);
        profile_t *g = profgen_make(&o), *d, *m, *e;
        pbuf_t buf = {0};
        assert_int_equal(profile_encode(g, &buf), 0);
        assert_int_equal(profile_decode_proto(buf.data, buf.len, &d, err, sizeof(err)), 0);
        pbuf_free(&buf);
        assert_int_equal(profile_merge_owned(&d, 1, &m, err, sizeof(err)), 0);
        profile_t *ref;
        assert_int_equal(profile_merge(&g, 1, &ref, err, sizeof(err)), 0);
        profile_drop_stacks(m);
        assert_int_equal(m->n_samples, ref->n_samples);
        for (size_t i = 0; i < m->n_samples; i++) {
            const profile_sample_t *s = &m->samples[i], *r = &ref->samples[i];
            assert_null(s->location_ids);
            assert_int_equal(s->n_location_ids, 0);
            assert_memory_equal(s->values, r->values, m->n_sample_types * sizeof(*s->values));
            assert_int_equal(s->n_labels, r->n_labels);
        }
        assert_int_equal(profile_encode(m, &buf), 0);
        assert_int_equal(profile_decode_proto(buf.data, buf.len, &e, err, sizeof(err)), 0);
        assert_int_equal(e->n_samples, m->n_samples);
        pbuf_free(&buf);
        profile_free(g);
        profile_free(ref);
        profile_free(m);
        profile_free(e);
    }
}

/* Hostile sizes stay fast: many equal comments, a sample with many labels. */
static void test_floods(void **state)
{
    (void)state;
    profile_t *a = mini(0x1000, "/bin/app");
    for (int i = 0; i < 100000; i++)
        profile_add_comment(a, i % 2 ? "x" : "y");
    profile_sample_t *s = add(a, 1, 0, 1, 1);
    /* (profile_sample_add_label copies on every append: set them at once) */
    s->labels = profile_alloc(a, 20000 * sizeof(*s->labels));
    char k[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(k, sizeof(k), "k%d", (i * 7919) % 5000);
        s->labels[i] = (profile_label_t){profile_intern(a, k),
                                         i % 3 ? profile_intern(a, "v") : 0, i % 3 ? 0 : i, 0};
    }
    s->n_labels = 20000;
    profile_t *m;
    char err[128];
    assert_int_equal(profile_compact(a, &m, err, sizeof(err)), 0);
    assert_int_equal(m->n_comments, 2);
    assert_int_equal(m->samples[0].n_labels, 20000);
    for (uint32_t i = 1; i < m->samples[0].n_labels; i++) {
        const profile_label_t *x = &m->samples[0].labels[i - 1], *y = &m->samples[0].labels[i];
        bool xn = x->str == 0, yn = y->str == 0;
        assert_true(xn < yn || (xn == yn && strcmp(str(m, x->key), str(m, y->key)) <= 0));
    }
    profile_free(a);
    profile_free(m);
}

/* A sample's stack as text: each frame's mapping file, address in it and
 * lines (function name and line), leaf first. Malloc'd. */
static char *stack_key(const profile_t *p, const profile_sample_t *s)
{
    size_t cap = 256, n = 0;
    char *k = malloc(cap);
    assert_non_null(k);
    k[0] = '\0';
    for (uint32_t i = 0; i < s->n_location_ids; i++) {
        const profile_location_t *l = profile_location_by_id(p, s->location_ids[i]);
        assert_non_null(l);
        const profile_mapping_t *m = l->mapping_id ? profile_mapping_by_id(p, l->mapping_id) : NULL;
        char f[512];
        int w = snprintf(f, sizeof(f), "%s+%llx%s", m ? str(p, m->filename) : "",
                         (unsigned long long)(l->address - (m ? m->memory_start : 0)),
                         l->is_folded ? "F" : "");
        for (uint32_t j = 0; j < l->n_lines && w < (int)sizeof(f); j++) {
            const profile_function_t *fn = profile_function_by_id(p, l->lines[j].function_id);
            assert_non_null(fn);
            w += snprintf(f + w, sizeof(f) - (size_t)w, " %s/%s:%lld@%lld", str(p, fn->name),
                          str(p, fn->filename), (long long)l->lines[j].line,
                          (long long)fn->start_line);
        }
        size_t fl = strlen(f);
        while (n + fl + 2 > cap)
            assert_non_null(k = realloc(k, cap *= 2));
        memcpy(k + n, f, fl);
        n += fl;
        k[n++] = ';';
        k[n] = '\0';
    }
    return k;
}

typedef struct {
    char *key;
    int64_t v[4];
} keyed_t;

static int keyed_cmp(const void *a, const void *b)
{
    return strcmp(((const keyed_t *)a)->key, ((const keyed_t *)b)->key);
}

/* The samples of ps[0..n) summed by stack_key, sorted, all-zero sums
 * left out: what a merge of them must hold, however it was made. */
static keyed_t *by_stack(profile_t *const *ps, size_t n, size_t *count)
{
    size_t total = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        total += ps[i]->n_samples;
    keyed_t *e = calloc(total + 1, sizeof(*e));
    assert_non_null(e);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ps[i]->n_samples; j++) {
            e[k].key = stack_key(ps[i], &ps[i]->samples[j]);
            for (size_t t = 0; t < 4; t++)
                e[k].v[t] = ps[i]->samples[j].values[t];
            k++;
        }
    qsort(e, k, sizeof(*e), keyed_cmp);
    size_t out = 0;
    for (size_t j = 0; j < k;) {
        keyed_t sum = e[j];
        size_t r = j + 1;
        for (; r < k && strcmp(e[r].key, sum.key) == 0; r++) {
            for (size_t t = 0; t < 4; t++)
                sum.v[t] += e[r].v[t];
            free(e[r].key);
        }
        if (sum.v[0] || sum.v[1] || sum.v[2] || sum.v[3])
            e[out++] = sum;
        else
            free(sum.key);
        j = r;
    }
    *count = out;
    return e;
}

/* A merge of sources of other programs and sizes, one after another
 * (large, small, large again; the merge keeps each one's arrays for the
 * next, and checks each element against the out element the last
 * source's at its position became), or of snapshots of one program,
 * holds the sources' samples summed by stack: nothing of an earlier
 * source's element mapping leaks into a later one's. */
static void test_merge_sources_differ(void **state)
{
    (void)state;
    char err[128];
    const size_t locs[] = {3000, 150, 2500, 40};
    for (uint64_t seed = 1; seed <= 4; seed++) {
        profile_t *src[4], *copy[4], *heads[4], *m, *n;
        for (size_t i = 0; i < 4; i++) {
            profgen_opts_t o;
            random_opts(&o, seed * 10 + i);
            o.zero_values = false;
            o.locations = locs[(i + seed) % 4];
            o.functions = o.locations / 2 + 1;
            o.samples = 300 + 100 * i;
            if (seed % 2 == 0) { /* snapshots of one program: the hints hold */
                random_opts(&o, seed * 10);
                o.zero_values = false;
                o.sample_seed = i + 1;
            }
            src[i] = profgen_make(&o);
            copy[i] = profgen_make(&o);
            assert_int_equal(profile_header_copy(src[i], &heads[i]), 0);
        }
        size_t ne, nm, nn;
        keyed_t *want = by_stack(src, 4, &ne);
        /* as they come (kept and given back, the driver's series) */
        profile_merger_t *pm;
        assert_int_equal(profile_merger_new(heads[0], &pm), 0);
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(profile_merger_add_kept(pm, src[i], NULL, 0), 0);
        assert_int_equal(profile_merger_end(pm, heads, 4, &m, err, sizeof(err)), 0);
        /* all at once */
        assert_int_equal(profile_merge(copy, 4, &n, err, sizeof(err)), 0);
        keyed_t *got_m = by_stack(&m, 1, &nm), *got_n = by_stack(&n, 1, &nn);
        assert_int_equal(nm, ne);
        assert_int_equal(nn, ne);
        for (size_t j = 0; j < ne; j++) {
            assert_string_equal(got_m[j].key, want[j].key);
            assert_string_equal(got_n[j].key, want[j].key);
            assert_memory_equal(got_m[j].v, want[j].v, sizeof(want[j].v));
            assert_memory_equal(got_n[j].v, want[j].v, sizeof(want[j].v));
            free(got_m[j].key);
            free(got_n[j].key);
            free(want[j].key);
        }
        free(want);
        free(got_m);
        free(got_n);
        for (size_t i = 0; i < 4; i++) {
            profile_free(src[i]);
            profile_free(copy[i]);
            profile_free(heads[i]);
        }
        profile_free(m);
        profile_free(n);
    }
}

/* strkeys_series_add keys equal strings alike and different ones
 * differently across a series whose tables repeat the last one's (the
 * guess holds), change one string, shrink, grow, move their strings or
 * repeat one; keyed so, the merger gives profile_merger_add's bytes. */
static void test_series_keys(void **state)
{
    (void)state;
    static const char *const tables[][6] = {
        {"", "a", "b", "c", "d", "e"},
        {"", "a", "b", "c", "d", "e"}, /* the same */
        {"", "a", "B", "c", "d", "e"}, /* one changed */
        {"", "a", "b", NULL},          /* shorter */
        {"", "a", "b", "c", "d", "f"}, /* longer than the last, a new one */
        {"", "e", "d", "c", "b", "a"}, /* moved */
        {"", "c", "c", "b", "c", NULL}, /* repeated */
    };
    const size_t nt = sizeof(tables) / sizeof(*tables);
    strkeys_series_t *ks = strkeys_series_new();
    assert_non_null(ks);
    const char *seen[64];
    uint32_t seen_key[64];
    size_t n_seen = 0;
    for (size_t t = 0; t < nt; t++) {
        profile_t *p = profile_new();
        assert_non_null(p);
        for (size_t i = 1; i < 6 && tables[t][i]; i++)
            assert_true(profile_add_string(p, tables[t][i], strlen(tables[t][i])) > 0);
        uint32_t *keys = strkeys_series_add(ks, p);
        assert_non_null(keys);
        for (size_t i = 0; i < p->n_strings; i++) {
            for (size_t j = 0; j < n_seen; j++)
                if ((strcmp(seen[j], p->strings[i]) == 0) != (seen_key[j] == keys[i]))
                    fail_msg("table %zu: \"%s\" keyed %u, \"%s\" %u", t, p->strings[i], keys[i],
                             seen[j], seen_key[j]);
            assert_true(n_seen < 64);
            seen[n_seen] = tables[t][i];
            seen_key[n_seen++] = keys[i];
        }
        free(keys);
        profile_free(p);
    }
    strkeys_series_free(ks);

    /* a series of snapshots of two programs in turn, merged */
    char err[128];
    profile_t *out[2];
    for (int keyed = 0; keyed < 2; keyed++) {
        ks = strkeys_series_new();
        assert_non_null(ks);
        profile_t *heads[6];
        profile_merger_t *pm = NULL;
        for (size_t i = 0; i < 6; i++) {
            profgen_opts_t o;
            random_opts(&o, 7);
            o.seed = 7 + (i / 3) * 100; /* three of one, three of another */
            o.sample_seed = i + 1;
            profile_t *src = series_source(&o, i);
            assert_int_equal(profile_header_copy(src, &heads[i]), 0);
            if (i == 0)
                assert_int_equal(profile_merger_new(heads[0], &pm), 0);
            uint32_t *keys = keyed ? strkeys_series_add(ks, src) : NULL;
            assert_true(!keyed || keys);
            assert_int_equal(profile_merger_add_keyed(pm, src, keys, keys ? src->n_strings : 0),
                             0);
            free(keys);
        }
        assert_int_equal(profile_merger_end(pm, heads, 6, &out[keyed], err, sizeof(err)), 0);
        for (size_t i = 0; i < 6; i++)
            profile_free(heads[i]);
        strkeys_series_free(ks);
    }
    assert_same_encoding(out[0], out[1]);
    profile_free(out[0]);
    profile_free(out[1]);
}

/* profile_check_sums names the first column whose absolute values pass
 * 2^63-1, at the sample where they first do, whichever column passed
 * first in the samples' order; columns are summed 8 a pass. */
static void test_check_sums(void **state)
{
    (void)state;
    profile_t *p = profile_new();
    char name[8], err[256];
    for (int j = 0; j < 10; j++) {
        snprintf(name, sizeof(name), "t%d", j + 1);
        assert_int_equal(profile_add_sample_type(p, name, "count"), 0);
    }
    int64_t v[4][10] = {{0}};
    v[0][1] = INT64_MAX; /* column 2 passes at sample 3 */
    v[2][1] = 1;
    v[0][2] = INT64_MIN; /* column 3 at sample 1, before it */
    v[1][9] = INT64_MIN; /* column 10 at sample 2; twice 2^63 wraps to 0 */
    v[3][9] = INT64_MIN;
    v[3][0] = -5;
    for (int i = 0; i < 4; i++)
        assert_non_null(profile_add_sample(p, NULL, 0, v[i]));
    assert_int_equal(profile_check_sums(p, err, sizeof(err)), -ERANGE);
    assert_string_equal(err, "sample values too large: the t2 values (column 2) add up to more "
                             "than 2^63-1 in absolute value (sample 3 holds 1)");
    p->samples[0].values[1] = p->samples[0].values[2] = 0;
    assert_int_equal(profile_check_sums(p, err, sizeof(err)), -ERANGE);
    assert_string_equal(err, "sample values too large: the t10 values (column 10) add up to "
                             "more than 2^63-1 in absolute value (sample 2 holds "
                             "-9223372036854775808)");
    p->samples[1].values[9] = INT64_MAX;
    p->samples[3].values[9] = 0;
    assert_int_equal(profile_check_sums(p, err, sizeof(err)), 0);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_dedupes),
        cmocka_unit_test(test_labels_canonical),
        cmocka_unit_test(test_compact_drops_unused),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_incompatible),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_base_and_diff_base),
        cmocka_unit_test(test_set_label),
        cmocka_unit_test(test_random_properties),
        cmocka_unit_test(test_floods),
        cmocka_unit_test(test_merge_owned),
        cmocka_unit_test(test_merge_keyed),
        cmocka_unit_test(test_drop_stacks),
        cmocka_unit_test(test_merge_stream),
        cmocka_unit_test(test_merger),
        cmocka_unit_test(test_merger_keyed),
        cmocka_unit_test(test_merge_sources_differ),
        cmocka_unit_test(test_series_keys),
        cmocka_unit_test(test_check_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
