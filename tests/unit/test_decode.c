// links: tests/gen/gen.c profile
/* test_decode.c — profile.proto decoding, validation and gzip: round trips
 * of generated profiles, one test per error message class, and a hostile
 * corpus (truncations, bit flips, random bytes, huge lengths, deep nesting,
 * varint overflow, bad gzip) that must never crash (also run under ASan). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpname.h"
#include "gen/gen.h"
#include "profile/decode.h"
#include "profile/parse.h"

/* --- helpers -------------------------------------------------------------------- */

static void encode(const profile_t *p, pbuf_t *b)
{
    memset(b, 0, sizeof(*b));
    assert_int_equal(profile_encode(p, b), 0);
}

static profile_t *decode_ok(const uint8_t *d, size_t n)
{
    profile_t *p = NULL;
    char err[256] = "";
    int rc = profile_parse(d, n, &p, err, sizeof(err));
    if (rc != 0)
        fail_msg("decode failed: %s", err);
    return p;
}

/* Decodes and expects failure with a message containing want. */
static void decode_fails(const uint8_t *d, size_t n, const char *want)
{
    profile_t *p = (profile_t *)1;
    char err[256] = "";
    int rc = profile_parse(d, n, &p, err, sizeof(err));
    if (rc >= 0)
        fail_msg("decode succeeded, wanted error containing \"%s\"", want);
    assert_null(p);
    if (!strstr(err, want))
        fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

/* A tiny protobuf writer for handcrafted inputs. */
typedef struct {
    uint8_t d[4096];
    size_t n;
} wb_t;

static void wb_varint(wb_t *b, uint64_t v)
{
    while (v >= 0x80) {
        b->d[b->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->d[b->n++] = (uint8_t)v;
}

static void wb_key(wb_t *b, unsigned field, unsigned wire)
{
    wb_varint(b, (uint64_t)field << 3 | wire);
}

static void wb_u(wb_t *b, unsigned field, uint64_t v)
{
    wb_key(b, field, 0);
    wb_varint(b, v);
}

static void wb_bytes(wb_t *b, unsigned field, const void *d, size_t n)
{
    wb_key(b, field, 2);
    wb_varint(b, n);
    memcpy(b->d + b->n, d, n);
    b->n += n;
}

static void wb_msg(wb_t *b, unsigned field, const wb_t *m)
{
    wb_bytes(b, field, m->d, m->n);
}

static void wb_str(wb_t *b, const char *s)
{
    wb_bytes(b, 6, s, strlen(s));
}

/* A valid minimal profile: one sample type, one function, one location,
 * one sample. extra is appended before the string table (may be NULL). */
static void minimal(wb_t *b, const wb_t *extra)
{
    wb_t m = {.n = 0};
    memset(b, 0, sizeof(*b));
    wb_u(&m, 1, 1); /* type "samples" */
    wb_u(&m, 2, 2); /* unit "count" */
    wb_msg(b, 1, &m);
    m.n = 0;
    wb_u(&m, 1, 1); /* location 1 */
    wb_u(&m, 2, 5); /* value 5 */
    wb_msg(b, 2, &m);
    m.n = 0;
    wb_u(&m, 1, 1);       /* mapping id 1 */
    wb_u(&m, 2, 0x1000);  /* start */
    wb_u(&m, 3, 0x2000);  /* limit */
    wb_u(&m, 5, 3);       /* filename "main" */
    wb_msg(b, 3, &m);
    m.n = 0;
    wb_t line = {.n = 0};
    wb_u(&line, 1, 1);
    wb_u(&line, 2, 42);
    wb_u(&m, 1, 1);
    wb_u(&m, 2, 1);
    wb_u(&m, 3, 0x1234);
    wb_msg(&m, 4, &line);
    wb_msg(b, 4, &m);
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_u(&m, 2, 4); /* "f" */
    wb_msg(b, 5, &m);
    if (extra) {
        memcpy(b->d + b->n, extra->d, extra->n);
        b->n += extra->n;
    }
    wb_str(b, "");
    wb_str(b, "samples");
    wb_str(b, "count");
    wb_str(b, "main");
    wb_str(b, "f");
}

/* --- round trips -------------------------------------------------------------- */

static void roundtrip(const profgen_opts_t *o)
{
    profile_t *p = profgen_make(o);
    assert_non_null(p);
    pbuf_t b1, b2;
    encode(p, &b1);
    profile_t *q = decode_ok(b1.data, b1.len);
    char why[256];
    if (!profgen_equal(p, q, why, sizeof(why)))
        fail_msg("seed %llu: decode(encode(p)) != p: %s", (unsigned long long)o->seed, why);
    /* The decoder keeps the wire's string indexes: the bytes are the same. */
    encode(q, &b2);
    assert_int_equal(b1.len, b2.len);
    assert_memory_equal(b1.data, b2.data, b1.len);
    /* Lookups work, including for sparse ids. */
    for (size_t i = 0; i < q->n_locations; i++)
        assert_ptr_equal(profile_location_by_id(q, q->locations[i].id), &q->locations[i]);
    for (size_t i = 0; i < q->n_functions; i++)
        assert_ptr_equal(profile_function_by_id(q, q->functions[i].id), &q->functions[i]);
    for (size_t i = 0; i < q->n_mappings; i++)
        assert_ptr_equal(profile_mapping_by_id(q, q->mappings[i].id), &q->mappings[i]);
    /* And through gzip. */
    pbuf_t gz = {0};
    assert_int_equal(profile_gzip(b1.data, b1.len, &gz), 0);
    profile_t *r = decode_ok(gz.data, gz.len);
    assert_true(profgen_equal(p, r, why, sizeof(why)));
    pbuf_free(&gz);
    pbuf_free(&b1);
    pbuf_free(&b2);
    profile_free(p);
    profile_free(q);
    profile_free(r);
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        profgen_opts_t o;
        profgen_defaults(&o, seed);
        o.sparse_ids = seed % 4 == 0;
        o.mappings = seed % 5;
        o.sample_types = 1 + seed % 5;
        o.labels = (unsigned)(seed % 4);
        o.inline_pct = (unsigned)(seed * 7 % 100);
        o.zero_values = seed % 2;
        roundtrip(&o);
    }
}

static void test_roundtrip_medium(void **state)
{
    (void)state;
    profgen_opts_t o;
    profgen_defaults(&o, 99);
    o.samples = 5000;
    o.locations = 3000;
    o.functions = 1000;
    o.min_depth = 5;
    o.max_depth = 40;
    roundtrip(&o);
    o.sparse_ids = true;
    roundtrip(&o);
}

static void test_roundtrip_empty(void **state)
{
    (void)state;
    profile_t *p = profile_new();
    pbuf_t b;
    encode(p, &b);
    profile_t *q = decode_ok(b.data, b.len);
    assert_true(profgen_equal(p, q, NULL, 0));
    pbuf_free(&b);
    profile_free(p);
    profile_free(q);
}

/* Go's writer packs repeated fields only with more than two elements, and
 * orders fields differently: accept unpacked numbers and any order. */
static void test_unpacked_and_order(void **state)
{
    (void)state;
    wb_t b = {.n = 0}, m = {.n = 0};
    wb_str(&b, "");
    wb_str(&b, "a");
    wb_str(&b, "b");
    wb_u(&b, 13, 1); /* comment "a", unpacked */
    wb_u(&b, 13, 2);
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_u(&m, 1, 1);
    wb_u(&m, 2, 7);
    wb_u(&m, 2, 8);
    wb_msg(&b, 2, &m); /* sample before its types */
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_msg(&b, 4, &m);
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_msg(&b, 1, &m);
    wb_msg(&b, 1, &m);
    wb_key(&b, 99, 5); /* unknown 32-bit field: skipped */
    memset(b.d + b.n, 0xff, 4);
    b.n += 4;
    wb_key(&b, 98, 1); /* unknown 64-bit field */
    memset(b.d + b.n, 0xff, 8);
    b.n += 8;
    profile_t *p = decode_ok(b.d, b.n);
    assert_int_equal(p->n_comments, 2);
    assert_string_equal(p->strings[p->comments[1]], "b");
    assert_int_equal(p->n_samples, 1);
    assert_int_equal(p->samples[0].n_location_ids, 2);
    assert_int_equal(p->samples[0].values[1], 8);
    profile_free(p);
}

static void test_duplicate_strings_kept(void **state)
{
    (void)state;
    wb_t b = {.n = 0}, m = {.n = 0};
    wb_u(&m, 1, 2);
    wb_u(&m, 2, 1);
    wb_msg(&b, 1, &m);
    wb_str(&b, "");
    wb_str(&b, "x");
    wb_str(&b, "x");
    profile_t *p = decode_ok(b.d, b.n);
    assert_int_equal(p->n_strings, 3);
    assert_int_equal(p->sample_types[0].type, 2);
    assert_int_equal(profile_intern(p, "x") >= 1, 1);
    assert_int_equal(profile_intern(p, "new"), 3);
    profile_free(p);
}

/* The intern table through many growths: every string keeps its index,
 * a repeat added after the table is built interns to the first copy, and
 * a deferred table is built with the strings there are. */
static void test_intern_table(void **state)
{
    (void)state;
    profile_t *p = profile_new();
    assert_non_null(p);
    char s[32];
    const int n = 100000;
    for (int i = 1; i <= n; i++) {
        snprintf(s, sizeof(s), "s%d", i);
        assert_int_equal(profile_intern(p, s), i);
    }
    for (int i = 1; i <= n; i++) {
        snprintf(s, sizeof(s), "s%d", i);
        assert_int_equal(profile_intern(p, s), i);
    }
    assert_int_equal(profile_add_string(p, "s7", 2), n + 1); /* a repeat */
    assert_int_equal(profile_intern(p, "s7"), 7);
    assert_int_equal(profile_intern(p, ""), 0);
    profile_defer_intern(p);
    assert_int_equal(profile_add_string(p, "s8", 2), n + 2);
    assert_int_equal(profile_intern(p, "s8"), 8);
    assert_int_equal(profile_intern(p, "s99999"), 99999);
    assert_int_equal(profile_intern(p, "fresh"), n + 3);
    assert_int_equal(profile_intern(p, "fresh"), n + 3);
    profile_free(p);
}

static void test_label_semantics(void **state)
{
    (void)state;
    /* All-zero label dropped; str label loses num. */
    wb_t extra = {.n = 0}, s = {.n = 0}, l = {.n = 0};
    wb_u(&s, 2, 1);
    wb_u(&l, 1, 1);
    wb_msg(&s, 3, &l); /* key only: dropped */
    l.n = 0;
    wb_u(&l, 1, 1);
    wb_u(&l, 2, 2);
    wb_u(&l, 3, 77);
    wb_msg(&s, 3, &l);
    wb_msg(&extra, 2, &s);
    wb_t b;
    minimal(&b, &extra);
    profile_t *p = decode_ok(b.d, b.n);
    assert_int_equal(p->n_samples, 2);
    assert_int_equal(p->samples[1].n_labels, 1);
    assert_int_equal(p->samples[1].labels[0].str, 2);
    assert_int_equal(p->samples[1].labels[0].num, 0);
    profile_free(p);
}

static void test_dangling_mapping_is_no_mapping(void **state)
{
    (void)state;
    wb_t extra = {.n = 0}, m = {.n = 0};
    wb_u(&m, 1, 2);
    wb_u(&m, 2, 9); /* mapping 9 does not exist */
    wb_msg(&extra, 4, &m);
    wb_t b;
    minimal(&b, &extra);
    profile_t *p = decode_ok(b.d, b.n);
    assert_int_equal(p->n_locations, 2);
    assert_int_equal(p->locations[1].mapping_id, 0);
    assert_int_equal(p->locations[0].mapping_id, 1);
    profile_free(p);
}

/* --- error messages -------------------------------------------------------------- */

/* Varints of every length, each ending a nested message (a sample's
 * value) and the whole input (the period): the ends where a reader's
 * window stops, which the short-varint fast paths must respect; and
 * followed by more bytes (a sample's value before its locations, the
 * period before the string table), where eight are read at once. */
static void test_varint_lengths(void **state)
{
    (void)state;
    for (unsigned len = 1; len <= 10; len++) {
        /* the smallest and the largest value of len bytes */
        uint64_t vs[2] = {len == 1 ? 0 : (uint64_t)1 << (7 * (len - 1)),
                          len == 10 ? UINT64_MAX : ((uint64_t)1 << (7 * len)) - 1};
        for (int j = 0; j < 2; j++) {
            wb_t b, extra = {.n = 0}, m = {.n = 0};
            wb_u(&m, 1, 1);
            wb_u(&m, 2, vs[j]);
            wb_msg(&extra, 2, &m);
            minimal(&b, &extra);
            wb_u(&b, 12, vs[j]);
            profile_t *p = decode_ok(b.d, b.n);
            assert_int_equal(p->n_samples, 2);
            assert_int_equal((uint64_t)p->samples[1].values[0], vs[j]);
            assert_int_equal((uint64_t)p->period, vs[j]);
            profile_free(p);
            /* the same values inside: value, then ten location ids */
            extra.n = m.n = 0;
            wb_u(&m, 2, vs[j]);
            for (int k = 0; k < 10; k++)
                wb_u(&m, 1, 1);
            wb_msg(&extra, 2, &m);
            wb_u(&extra, 12, vs[j]);
            minimal(&b, &extra);
            p = decode_ok(b.d, b.n);
            assert_int_equal(p->n_samples, 2);
            assert_int_equal((uint64_t)p->samples[1].values[0], vs[j]);
            assert_int_equal(p->samples[1].n_location_ids, 10);
            assert_int_equal((uint64_t)p->period, vs[j]);
            profile_free(p);
        }
    }
    /* A varint cut by its message's end, the bytes after it (the next
     * field's) looking like its continuation: truncated, not read on. */
    wb_t b, extra = {.n = 0}, m = {.n = 0};
    wb_u(&m, 1, 1);
    wb_key(&m, 2, 0);
    m.d[m.n++] = 0x80;
    wb_msg(&extra, 2, &m);
    extra.d[extra.n++] = 0x01; /* a next field's key (1, varint)... */
    extra.d[extra.n++] = 0x01;
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "truncated varint");
}

static void test_errors(void **state)
{
    (void)state;
    wb_t b, extra, m, l;

    /* Sanity: the base is valid. */
    minimal(&b, NULL);
    profile_free(decode_ok(b.d, b.n));

    decode_fails((const uint8_t *)"", 0, "empty input");

    memset(&b, 0, sizeof(b));
    wb_str(&b, "x");
    decode_fails(b.d, b.n, "string_table[0] is not empty");

    memset(&b, 0, sizeof(b));
    wb_u(&b, 10, 5);
    decode_fails(b.d, b.n, "no string_table");

    extra.n = 0;
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_u(&m, 2, 1);
    wb_u(&m, 2, 2);
    wb_msg(&extra, 2, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "sample 1 has 2 values but there are 1 sample types");

    extra.n = 0;
    m.n = 0;
    wb_u(&m, 1, 9);
    wb_u(&m, 2, 1);
    wb_msg(&extra, 2, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "sample 1: unknown location id 9");

    extra.n = 0;
    m.n = 0;
    l.n = 0;
    wb_u(&l, 1, 9);
    wb_u(&m, 1, 7);
    wb_msg(&m, 4, &l);
    wb_msg(&extra, 4, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "location 7: unknown function id 9");

    extra.n = 0;
    m.n = 0;
    l.n = 0;
    wb_u(&l, 2, 3);
    wb_u(&m, 1, 7);
    wb_msg(&m, 4, &l);
    wb_msg(&extra, 4, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "location 7: line 0 has no function id");

    extra.n = 0;
    m.n = 0;
    wb_u(&m, 1, 1);
    wb_msg(&extra, 5, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "duplicate function id 1");

    extra.n = 0;
    m.n = 0;
    wb_u(&m, 2, 5);
    wb_msg(&extra, 3, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "mapping #1 has id 0");

    extra.n = 0;
    m.n = 0;
    wb_u(&m, 1, 5);
    wb_u(&m, 2, 77);
    wb_msg(&extra, 5, &m);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "function 5 name: string index 77 out of range");

    extra.n = 0;
    wb_u(&extra, 7, 1000);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "drop_frames: string index 1000 out of range");

    extra.n = 0;
    wb_u(&extra, 13, (uint64_t)-1);
    minimal(&b, &extra);
    decode_fails(b.d, b.n, "comment 0: string index -1 out of range");

    /* Samples but no sample types. */
    memset(&b, 0, sizeof(b));
    m.n = 0;
    wb_msg(&b, 2, &m);
    wb_str(&b, "");
    decode_fails(b.d, b.n, "no sample types");

    /* Concatenated profiles. */
    extra.n = 0;
    wb_u(&extra, 9, 123);
    minimal(&b, &extra);
    wb_t cat = b;
    memcpy(cat.d + cat.n, b.d, b.n);
    cat.n += b.n;
    decode_fails(cat.d, cat.n, "concatenated profiles detected");

    /* Wire errors. */
    minimal(&b, NULL);
    decode_fails(b.d, 3, "length");
    const uint8_t trunc[] = {0x08, 0x80, 0x80};
    decode_fails(trunc, sizeof(trunc), "truncated varint at offset 1");
    const uint8_t longv[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    decode_fails(longv, sizeof(longv), "varint overflows 64 bits at offset 1");
    const uint8_t ovf[] = {0x50, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    decode_fails(ovf, sizeof(ovf), "varint overflows 64 bits at offset 1");
    const uint8_t group[] = {0x0b, 0x0c};
    decode_fails(group, sizeof(group), "group");
    const uint8_t huge[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00};
    decode_fails(huge, sizeof(huge), "exceeds the 1 bytes left");
    const uint8_t wt[] = {0x0d, 1, 2, 3, 4}; /* sample_type as 32-bit */
    decode_fails(wt, sizeof(wt), "sample_type at offset 0 has wire type 32-bit");
    const uint8_t field0[] = {0x00, 0x01};
    decode_fails(field0, sizeof(field0), "field number 0");
    const uint8_t nul[] = {0x32, 0x00, 0x32, 0x02, 'a', 0x00};
    decode_fails(nul, sizeof(nul), "string_table[1] contains a NUL byte");

    /* Text that is no profile at all. */
    const char *txt = "hello world\n";
    decode_fails((const uint8_t *)txt, strlen(txt), "unrecognized profile format (neither");
}

static void test_gzip_errors(void **state)
{
    (void)state;
    wb_t b;
    minimal(&b, NULL);
    pbuf_t gz = {0};
    assert_int_equal(profile_gzip(b.d, b.n, &gz), 0);

    for (size_t n = 2; n < gz.len; n++)
        decode_fails(gz.data, n, "decompressing profile");

    uint8_t *bad = malloc(gz.len + 8);
    memcpy(bad, gz.data, gz.len);
    bad[gz.len / 2] ^= 0x55;
    decode_fails(bad, gz.len, "decompressing profile");

    /* Trailing garbage after a member; but two members concatenate. */
    memcpy(bad, gz.data, gz.len);
    memcpy(bad + gz.len, "junkjunk", 8);
    decode_fails(bad, gz.len + 8, "trailing garbage");
    free(bad);

    uint8_t *two = malloc(gz.len * 2);
    memcpy(two, gz.data, gz.len);
    memcpy(two + gz.len, gz.data, gz.len);
    /* No time_nanos in the minimal profile: concatenation is not detected,
     * repeated elements just add up (as in Go) - and ids then collide. */
    decode_fails(two, gz.len * 2, "has 1 values but there are 2 sample types");
    free(two);

    /* Inflation bound. */
    size_t big = 4 << 20;
    uint8_t *zeros = calloc(big, 1);
    pbuf_t zgz = {0};
    assert_int_equal(profile_gzip(zeros, big, &zgz), 0);
    uint8_t *out;
    size_t outlen;
    char err[200];
    assert_int_equal(profile_gunzip(zgz.data, zgz.len, 1 << 20, &out, &outlen, err, sizeof(err)),
                     -EFBIG);
    assert_non_null(strstr(err, "larger than 1 MiB"));
    assert_int_equal(profile_gunzip(zgz.data, zgz.len, big, &out, &outlen, err, sizeof(err)), 0);
    assert_int_equal(outlen, big);
    free(out);
    free(zeros);
    pbuf_free(&zgz);
    pbuf_free(&gz);
}

static void test_read_file(void **state)
{
    (void)state;
    profile_t *p = (profile_t *)1;
    char err[256];
    assert_int_equal(profile_read_file("/nonexistent/x.pb.gz", &p, err, sizeof(err)), -ENOENT);
    assert_null(p);
    assert_string_equal(err, "/nonexistent/x.pb.gz: No such file or directory");

    char path[256];
    tmpname(path, sizeof(path), "cprof-test-decode");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    profgen_opts_t o;
    profgen_defaults(&o, 5);
    profile_t *g = profgen_make(&o);
    assert_int_equal(profile_write_fd(g, fd), 0);
    close(fd);
    assert_int_equal(profile_read_file(path, &p, err, sizeof(err)), 0);
    assert_true(profgen_equal(g, p, NULL, 0));
    profile_free(p);

    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "\x1f\x8b\x08", 3), 3);
    close(fd);
    assert_true(profile_read_file(path, &p, err, sizeof(err)) < 0);
    assert_true(strncmp(err, path, strlen(path)) == 0);
    unlink(path);
    profile_free(g);
}

/* A file read in windows (256 KiB): each of its many small fields is
 * read from the window when wholly there, the ones across a window's end
 * after the window moves on. Equal to the profile written. */
static void test_read_file_windows(void **state)
{
    (void)state;
    char path[256];
    tmpname(path, sizeof(path), "cprof-test-decode");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    profgen_opts_t o;
    profgen_defaults(&o, 11);
    o.samples = 20000; /* 20-60 bytes each: ~1 MB, four windows and more */
    o.locations = 20000;
    o.functions = 8000;
    profile_t *g = profgen_make(&o);
    assert_non_null(g);
    assert_int_equal(profile_write_fd(g, fd), 0);
    close(fd);
    profile_t *p = NULL;
    char err[256] = "", why[256] = "";
    assert_int_equal(profile_read_file(path, &p, err, sizeof(err)), 0);
    bool same = profgen_equal(g, p, why, sizeof(why));
    if (!same)
        fprintf(stderr, "differs: %s\n", why);
    assert_true(same);
    profile_free(p);
    unlink(path);
    profile_free(g);
}

/* A file decoded into the storage of a profile done with (a series'
 * snapshot into the last one's: profile_read_file_reuse) gives the
 * profile decoded anew, whatever the reused one held (more or fewer
 * samples, sparse ids or not, another header); a failure frees it. */
static void test_read_file_reuse(void **state)
{
    (void)state;
    char path[3][256], err[256], why[256];
    profile_t *g[3];
    for (int k = 0; k < 3; k++) {
        tmpname(path[k], sizeof(path[k]), "cprof-test-reuse");
        int fd = mkstemp(path[k]);
        assert_true(fd >= 0);
        profgen_opts_t o;
        profgen_defaults(&o, 20 + (uint64_t)k);
        o.samples = k == 1 ? 500 : 6000;
        o.locations = k == 1 ? 300 : 4000;
        o.functions = 1500;
        o.sparse_ids = k == 1;
        o.mappings = (unsigned)k;
        o.sample_types = 1 + (unsigned)k;
        o.labels = (unsigned)k;
        g[k] = profgen_make(&o);
        assert_non_null(g[k]);
        if (k == 2) { /* no header but what the decoder defaults */
            g[k]->time_nanos = g[k]->duration_nanos = g[k]->period = 0;
            g[k]->n_comments = 0;
            g[k]->default_sample_type = g[k]->drop_frames = 0;
        }
        assert_int_equal(profile_write_fd(g[k], fd), 0);
        close(fd);
    }
    profile_t *p = NULL;
    const int order[] = {0, 1, 2, 0, 2, 1, 1, 0};
    for (size_t s = 0; s < sizeof(order) / sizeof(*order); s++) {
        int k = order[s];
        profile_t *q;
        assert_int_equal(profile_read_file_reuse(path[k], NULL, p, &q, err, sizeof(err)), 0);
        if (!profgen_equal(g[k], q, why, sizeof(why)))
            fail_msg("step %zu: decoded into a used profile: %s", s, why);
        profile_t *fresh;
        assert_int_equal(profile_read_file(path[k], &fresh, err, sizeof(err)), 0);
        pbuf_t a, b;
        encode(q, &a);
        encode(fresh, &b);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.data, b.data, a.len);
        pbuf_free(&a);
        pbuf_free(&b);
        for (size_t i = 0; i < q->n_locations; i++)
            assert_ptr_equal(profile_location_by_id(q, q->locations[i].id), &q->locations[i]);
        for (size_t i = 0; i < q->n_functions; i++)
            assert_ptr_equal(profile_function_by_id(q, q->functions[i].id), &q->functions[i]);
        profile_free(fresh);
        p = q;
    }
    /* failures free it (ASan and LeakSanitizer tell) */
    assert_int_equal(profile_read_file_reuse("/nonexistent/x.pb.gz", NULL, p, &p, err, sizeof(err)),
                     -ENOENT);
    assert_null(p);
    assert_int_equal(profile_read_file(path[0], &p, err, sizeof(err)), 0);
    int fd = open(path[1], O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "\x1f\x8b\x08", 3), 3);
    close(fd);
    assert_true(profile_read_file_reuse(path[1], NULL, p, &p, err, sizeof(err)) < 0);
    assert_null(p);
    for (int k = 0; k < 3; k++) {
        unlink(path[k]);
        profile_free(g[k]);
    }
}

/* --- hostile corpus -------------------------------------------------------------- */

/* Any outcome but a crash is fine; a success must be a valid profile that
 * encodes and decodes to itself. */
static int try_parse(const uint8_t *d, size_t n)
{
    profile_t *p = NULL;
    char err[256];
    err[0] = '\0';
    int rc = profile_parse(d, n, &p, err, sizeof(err));
    if (rc < 0) {
        assert_null(p);
        assert_true(err[0] != '\0');
        assert_null(memchr(err, '\n', strlen(err)));
        return rc;
    }
    assert_int_equal(profile_validate(p, err, sizeof(err)), 0);
    pbuf_t b;
    encode(p, &b);
    profile_t *q = decode_ok(b.data, b.len);
    assert_true(profgen_equal(p, q, NULL, 0));
    profile_free(q);
    pbuf_free(&b);
    profile_free(p);
    return 0;
}

static void test_hostile_truncations(void **state)
{
    (void)state;
    profgen_opts_t o;
    profgen_defaults(&o, 7);
    o.samples = 12;
    o.locations = 10;
    o.functions = 6;
    profile_t *p = profgen_make(&o);
    pbuf_t b, gz = {0};
    encode(p, &b);
    assert_int_equal(profile_gzip(b.data, b.len, &gz), 0);
    size_t ok = 0;
    for (size_t n = 0; n < b.len; n++)
        ok += try_parse(b.data, n) == 0;
    /* Cutting at a field boundary can leave a valid prefix, but never most. */
    assert_true(ok < b.len / 4);
    for (size_t n = 0; n < gz.len; n++)
        assert_true(try_parse(gz.data, n) < 0);
    pbuf_free(&b);
    pbuf_free(&gz);
    profile_free(p);
}

static void test_hostile_bitflips(void **state)
{
    (void)state;
    profgen_opts_t o;
    profgen_defaults(&o, 8);
    o.samples = 8;
    o.locations = 8;
    o.functions = 5;
    profile_t *p = profgen_make(&o);
    pbuf_t b;
    encode(p, &b);
    uint8_t *c = malloc(b.len);
    for (size_t i = 0; i < b.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(c, b.data, b.len);
            c[i] ^= (uint8_t)(1u << bit);
            try_parse(c, b.len);
        }
    }
    /* Bytes set to extreme values. */
    for (size_t i = 0; i < b.len; i++) {
        static const uint8_t vals[] = {0x00, 0x7f, 0x80, 0xff};
        for (size_t v = 0; v < 4; v++) {
            memcpy(c, b.data, b.len);
            c[i] = vals[v];
            try_parse(c, b.len);
        }
    }
    free(c);
    pbuf_free(&b);
    profile_free(p);
}

static void test_hostile_random(void **state)
{
    (void)state;
    uint64_t s = 12345;
    uint8_t buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)(iter % 512);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            buf[i] = (uint8_t)(s >> 56);
        }
        if (iter % 3 == 0 && n >= 2) { /* claim gzip */
            buf[0] = 0x1f;
            buf[1] = 0x8b;
        }
        if (iter % 5 == 0 && n >= 1) /* text-ish, to reach the legacy parsers */
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)(' ' + buf[i] % 95);
        try_parse(buf, n);
    }
}

static size_t put_varint(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        d[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    d[n++] = (uint8_t)v;
    return n;
}

static size_t varint_len(uint64_t v)
{
    uint8_t tmp[10];
    return put_varint(tmp, v);
}

/* levels of field `field` (length-delimited), each holding the next. */
static uint8_t *nested(unsigned field, size_t levels, size_t *outlen)
{
    size_t *sz = malloc((levels + 1) * sizeof(*sz));
    sz[0] = 0;
    for (size_t i = 1; i <= levels; i++)
        sz[i] = 1 + varint_len(sz[i - 1]) + sz[i - 1];
    uint8_t *d = malloc(sz[levels] + 1);
    size_t n = 0;
    for (size_t i = levels; i >= 1; i--) {
        d[n++] = (uint8_t)(field << 3 | 2);
        n += put_varint(d + n, sz[i - 1]);
    }
    *outlen = sz[levels];
    free(sz);
    return d;
}

static void test_hostile_structures(void **state)
{
    (void)state;
    /* Deep nesting of an unknown field: skipped whole, never entered. */
    size_t n;
    uint8_t *nest = nested(15, 100000, &n);
    uint8_t *d = malloc(n + 2);
    memcpy(d, nest, n);
    memcpy(d + n, "\x32\x00", 2);
    profile_free(decode_ok(d, n + 2));
    free(d);
    free(nest);

    /* Deep nesting inside a sample's label: Label fields are varints, so
     * the nested bytes are a type mismatch, not a recursion. */
    nest = nested(3, 5000, &n);
    wb_t b;
    minimal(&b, NULL);
    d = malloc(b.n + n + 32);
    memcpy(d, b.d, b.n);
    size_t dn = b.n;
    d[dn++] = (2 << 3) | 2;
    dn += put_varint(d + dn, n + 2);
    d[dn++] = 0x10; /* value = 1 */
    d[dn++] = 0x01;
    memcpy(d + dn, nest, n);
    dn += n;
    decode_fails(d, dn, "Label field");
    free(d);
    free(nest);

    /* Many tiny elements: memory stays proportional to the input. */
    n = 200000;
    d = malloc(n * 2 + 4);
    for (size_t i = 0; i < n; i++) {
        d[2 * i] = (4 << 3) | 2; /* empty location: id 0 */
        d[2 * i + 1] = 0;
    }
    memcpy(d + 2 * n, "\x32\x00", 2);
    decode_fails(d, 2 * n + 2, "location #0 has id 0");
    free(d);
    /* Empty samples without sample types: refused before allocating. */
    d = malloc(n * 2 + 4);
    for (size_t i = 0; i < n; i++) {
        d[2 * i] = (2 << 3) | 2;
        d[2 * i + 1] = 0;
    }
    memcpy(d + 2 * n, "\x32\x00", 2);
    decode_fails(d, 2 * n + 2, "profile has 200000 samples but no sample types");
    free(d);

    /* 300,000 copies of one string: interning must not probe through
     * every earlier copy (that was quadratic: a minute). */
    n = 300000;
    d = malloc(n * 3 + 4);
    memcpy(d, "\x32\x00", 2);
    for (size_t i = 0; i < n; i++)
        memcpy(d + 2 + 3 * i, "\x32\x01\x61", 3);
    profile_t *dup = decode_ok(d, n * 3 + 2);
    assert_int_equal(dup->n_strings, n + 1);
    assert_int_equal(profile_intern(dup, "a"), 1);
    profile_free(dup);
    free(d);

    /* A packed field claiming 2^60 elements. */
    const uint8_t packed[] = {0x0a, 0x00, 0x12, 0x0a, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff,
                              0xff, 0xff, 0xff, 0x0f, 0x32, 0x00};
    decode_fails(packed, sizeof(packed), "exceeds");
}

/* minimal's profile plus locations extra_ids (each with one line of
 * function 1) and a sample of location ref. */
static void with_locations(wb_t *b, const uint64_t *extra_ids, size_t n, uint64_t ref)
{
    wb_t extra = {.n = 0}, m, l;
    for (size_t i = 0; i < n; i++) {
        m.n = 0;
        l.n = 0;
        wb_u(&l, 1, 1);
        wb_u(&m, 1, extra_ids[i]);
        wb_msg(&m, 4, &l);
        wb_msg(&extra, 4, &m);
    }
    m.n = 0;
    wb_u(&m, 1, ref);
    wb_u(&m, 2, 1);
    wb_msg(&extra, 2, &m);
    minimal(b, &extra);
}

/* Ids that are the positions + 1 are checked as a range, others by a
 * set: the same references pass and fail either way. */
static void test_positional_ids(void **state)
{
    (void)state;
    wb_t b;
    const uint64_t in_order[] = {2, 3}, shuffled[] = {3, 2}, gap[] = {3, 4};
    const uint64_t *sets[] = {in_order, shuffled, gap};
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < 2; i++) {
            with_locations(&b, sets[k], 2, sets[k][i]);
            profile_t *p = decode_ok(b.d, b.n);
            assert_int_equal(p->n_locations, 3);
            assert_int_equal(p->samples[1].location_ids[0], sets[k][i]);
            assert_ptr_equal(profile_location_by_id(p, sets[k][i]), &p->locations[i + 1]);
            profile_free(p);
        }
        with_locations(&b, sets[k], 2, 5);
        decode_fails(b.d, b.n, "sample 1: unknown location id 5");
        if (k < 2) { /* 1..3: 4 is one past */
            with_locations(&b, sets[k], 2, 4);
            decode_fails(b.d, b.n, "sample 1: unknown location id 4");
        }
        with_locations(&b, sets[k], 2, 0);
        decode_fails(b.d, b.n, "sample 1: unknown location id 0");
    }
    with_locations(&b, gap, 2, 2);
    decode_fails(b.d, b.n, "sample 1: unknown location id 2");
    /* 3 ids up to 3, one twice: not the positions */
    const uint64_t twice[] = {3, 3};
    with_locations(&b, twice, 2, 1);
    decode_fails(b.d, b.n, "duplicate location id 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_positional_ids),
        cmocka_unit_test(test_roundtrip_medium),
        cmocka_unit_test(test_roundtrip_empty),
        cmocka_unit_test(test_unpacked_and_order),
        cmocka_unit_test(test_duplicate_strings_kept),
        cmocka_unit_test(test_intern_table),
        cmocka_unit_test(test_label_semantics),
        cmocka_unit_test(test_dangling_mapping_is_no_mapping),
        cmocka_unit_test(test_varint_lengths),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_gzip_errors),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_read_file_windows),
        cmocka_unit_test(test_read_file_reuse),
        cmocka_unit_test(test_hostile_truncations),
        cmocka_unit_test(test_hostile_bitflips),
        cmocka_unit_test(test_hostile_random),
        cmocka_unit_test(test_hostile_structures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
