/* decode.c — profile.proto bytes to profile_t, gzip inflation, and strict
 * validation (parse.c chooses between this decoder and the legacy parsers).
 *
 * The decoder makes one pass over the top-level message, reading it through
 * a window that holds whole top-level fields only: from memory, or in
 * pieces from a zread_t (zread.h), so that a gzip file is inflated as it
 * is decoded and neither the file nor the inflated profile is ever held
 * whole. The wire format allows any field order, so what depends on the
 * whole message (each sample's value count against the sample types, a
 * string table present) is checked at its end. Nested messages (Sample, Label, Mapping, Location, Line, Function,
 * ValueType) are decoded by small functions with fixed nesting, so hostile
 * "deep nesting" costs nothing: unknown fields are skipped, never entered.
 *
 * Semantics follow Go's pprof 1.19 reader (profile/proto.go, profile.go):
 * packed and unpacked repeated numbers, unknown fields skipped, groups an
 * error, a second nonzero time_nanos means concatenated profiles, labels
 * with str, num and num_unit all zero dropped, a dangling mapping_id read
 * as "no mapping". Stricter than Go on purpose (these are writer bugs, and
 * saying so beats a confused report): varints that overflow 64 bits,
 * strings with NUL bytes, a missing string table, any bad string index or
 * dangling location/function id.
 */
#include "decode.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/err.h"

#include "zread.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* Top-level field numbers of Profile. */
enum {
    F_SAMPLE_TYPE = 1,
    F_SAMPLE = 2,
    F_MAPPING = 3,
    F_LOCATION = 4,
    F_FUNCTION = 5,
    F_STRING = 6,
    F_DROP = 7,
    F_KEEP = 8,
    F_TIME = 9,
    F_DURATION = 10,
    F_PERIOD_TYPE = 11,
    F_PERIOD = 12,
    F_COMMENT = 13,
    F_DEFAULT_TYPE = 14,
};

/* A message into err; -EINVAL. */
#define set_err(err, errlen, ...) err_fmt(err, errlen, -EINVAL, __VA_ARGS__)

/* --- wire reader ------------------------------------------------------------ */

typedef struct {
    const uint8_t *base; /* start of the window: offsets in messages */
    size_t base_off;     /* offset of base in the whole input */
    /* the window: unread bytes [pos, end), all of the input when eof */
    const uint8_t *pos, *end;
    bool eof;
    zread_t *src;     /* where more bytes come from; NULL: from memory */
    bool src_failed;  /* src failed: its message stands */
    uint8_t *win;     /* the window's storage when reading src */
    size_t cap_win;
    size_t nstr;      /* string_table entries so far */
    bool time_set;    /* a nonzero time_nanos was read */
    /* samples' value counts, checked at the end against the sample types:
     * the first sample's, and the first sample that differs from it */
    size_t vals0, bad_vals, n_bad_vals;
    char *err;
    size_t errlen;
    profile_t *p;
    profile_t *reuse; /* taken: emptied to be p (profile_clear), else freed */
    bool concat; /* failed because of a second time_nanos */
    /* scratch for the arrays of one sample / location */
    uint64_t *locs;
    size_t n_locs, cap_locs;
    int64_t *vals;
    size_t n_vals, cap_vals;
    profile_label_t *labels;
    size_t n_labels, cap_labels;
    profile_line_t *lines;
    size_t n_lines, cap_lines;
} dec_t;

typedef struct {
    const uint8_t *pos, *end;
} rd_t;

typedef struct {
    uint64_t field;
    int wire;
    uint64_t u;          /* value of a varint / fixed field */
    const uint8_t *data; /* payload of a length-delimited field */
    size_t len;
    size_t off; /* offset of the key */
} fld_t;

#define FAIL(d, ...) set_err((d)->err, (d)->errlen, __VA_ARGS__)

static size_t off_of(const dec_t *d, const uint8_t *at)
{
    return d->base_off + (size_t)(at - d->base);
}

/* get_varint's every case, errors included. */
static int __attribute__((noinline)) get_varint_slow(dec_t *d, rd_t *r, uint64_t *out)
{
    uint64_t v = 0;
    const uint8_t *start = r->pos;
    for (int i = 0;; i++) {
        if (r->pos >= r->end)
            return FAIL(d, "truncated varint at offset %zu", off_of(d, start));
        if (i == 10)
            return FAIL(d, "varint longer than 10 bytes at offset %zu", off_of(d, start));
        uint8_t b = *r->pos++;
        if (i == 9 && b > 1)
            return FAIL(d, "varint overflows 64 bits at offset %zu", off_of(d, start));
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            break;
    }
    *out = v;
    return 0;
}

/* Most varints (keys, ids, lengths) take one byte. Up to nine bytes
 * (63 bits: no overflow) that end before the window does are read with one
 * bound check; the rest, errors included, is get_varint_slow's. */
static inline __attribute__((always_inline)) int get_varint(dec_t *d, rd_t *r, uint64_t *out)
{
    const uint8_t *p = r->pos;
    if (p < r->end && !(p[0] & 0x80)) { /* one byte: the end of a small message */
        r->pos = p + 1;
        *out = p[0];
        return 0;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (r->end - p >= 8) {
        /* Up to eight bytes at once, without a branch per byte: the first
         * byte whose top bit is clear ends it; the 7-bit groups are then
         * packed together in three steps of shifts. */
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t stop = ~x & 0x8080808080808080ull;
        if (stop) {
            unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* 8 * length */
            if (bits < 64)
                x &= ((uint64_t)1 << bits) - 1;
            x &= 0x7f7f7f7f7f7f7f7full;
            x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
            x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
            x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
            r->pos = p + bits / 8;
            *out = x;
            return 0;
        }
    }
#endif
    size_t n = (size_t)(r->end - p) < 9 ? (size_t)(r->end - p) : 9;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            r->pos = p + i + 1;
            *out = v;
            return 0;
        }
    }
    return get_varint_slow(d, r, out);
}

static int len_exceeds(dec_t *d, const fld_t *f, uint64_t n, size_t left)
{
    return FAIL(d, "field %" PRIu64 " at offset %zu: length %" PRIu64 " exceeds the %zu bytes left",
                f->field, f->off, n, left);
}

/* Reads the next field; 1 when one was read, 0 at the end, <0 on error.
 * Inlined: a large profile has millions of small fields, and a call per
 * field was a third of the decode's instructions (callgrind). */
static inline __attribute__((always_inline)) int next_field(dec_t *d, rd_t *r, fld_t *f)
{
    if (r->pos >= r->end)
        return 0;
    f->off = off_of(d, r->pos);
    uint64_t key;
    int rc = get_varint(d, r, &key);
    if (rc < 0)
        return rc;
    f->field = key >> 3;
    f->wire = (int)(key & 7);
    f->data = NULL;
    f->len = 0;
    f->u = 0;
    if (f->field == 0)
        return FAIL(d, "field number 0 at offset %zu", f->off);
    switch (f->wire) {
    case WT_VARINT:
        return get_varint(d, r, &f->u) < 0 ? -EINVAL : 1;
    case WT_I64:
        if (r->end - r->pos < 8)
            return FAIL(d, "truncated 64-bit field %" PRIu64 " at offset %zu", f->field, f->off);
        for (int i = 7; i >= 0; i--)
            f->u = f->u << 8 | r->pos[i];
        r->pos += 8;
        return 1;
    case WT_I32:
        if (r->end - r->pos < 4)
            return FAIL(d, "truncated 32-bit field %" PRIu64 " at offset %zu", f->field, f->off);
        for (int i = 3; i >= 0; i--)
            f->u = f->u << 8 | r->pos[i];
        r->pos += 4;
        return 1;
    case WT_LEN: {
        uint64_t n;
        if (get_varint(d, r, &n) < 0)
            return -EINVAL;
        if (n > (uint64_t)(r->end - r->pos))
            return len_exceeds(d, f, n, (size_t)(r->end - r->pos));
        f->data = r->pos;
        f->len = (size_t)n;
        r->pos += n;
        return 1;
    }
    case WT_SGROUP:
    case WT_EGROUP:
        return FAIL(d, "unsupported wire type %d (group) at offset %zu", f->wire, f->off);
    default:
        return FAIL(d, "invalid wire type %d at offset %zu", f->wire, f->off);
    }
}

static const char *wire_name(int w)
{
    switch (w) {
    case WT_VARINT:
        return "varint";
    case WT_I64:
        return "64-bit";
    case WT_LEN:
        return "length-delimited";
    default:
        return "32-bit";
    }
}

static int __attribute__((noinline)) want_failed(dec_t *d, const fld_t *f, int wire,
                                                 const char *what)
{
    return FAIL(d, "%s at offset %zu has wire type %s, want %s", what, f->off,
                wire_name(f->wire), wire_name(wire));
}

static inline int want(dec_t *d, const fld_t *f, int wire, const char *what)
{
    return f->wire == wire ? 0 : want_failed(d, f, wire, what);
}

static int oom(dec_t *d)
{
    set_err(d->err, d->errlen, "out of memory while decoding the profile");
    return -ENOMEM;
}

/* A repeated number field, packed or not, appended to a u64 scratch array.
 * The packed loop with *arr and *n in locals (the compiler reloads them
 * after each store) measured no cheaper: callgrind, 10 snapshots -top,
 * repeated_u64 188M -> 185M instructions of 2,659M. Not done. */
static int repeated_u64(dec_t *d, const fld_t *f, uint64_t **arr, size_t *n, size_t *cap,
                        const char *what)
{
    if (f->wire == WT_VARINT) {
        if (err_grow((void **)arr, cap, *n + 1, sizeof(**arr)) < 0)
            return oom(d);
        (*arr)[(*n)++] = f->u;
        return 0;
    }
    if (f->wire != WT_LEN)
        return FAIL(d, "%s at offset %zu has wire type %s, want varint or packed", what,
                    f->off, wire_name(f->wire));
    rd_t r = {f->data, f->data + f->len};
    /* Every varint takes at least one byte: f->len bounds the count. */
    if (err_grow((void **)arr, cap, *n + f->len, sizeof(**arr)) < 0)
        return oom(d);
    while (r.pos < r.end) {
        uint64_t v;
        if (get_varint(d, &r, &v) < 0)
            return -EINVAL;
        (*arr)[(*n)++] = v;
    }
    return 0;
}

/* --- nested messages -------------------------------------------------------- */

static int dec_value_type(dec_t *d, const fld_t *outer, profile_value_type_t *vt)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    memset(vt, 0, sizeof(*vt));
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field == 1 || f.field == 2) {
            if (want(d, &f, WT_VARINT, f.field == 1 ? "ValueType.type" : "ValueType.unit") < 0)
                return -EINVAL;
            if (f.field == 1)
                vt->type = (int64_t)f.u;
            else
                vt->unit = (int64_t)f.u;
        }
    }
    return rc;
}

static int dec_label(dec_t *d, const fld_t *outer)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    profile_label_t l = {0, 0, 0, 0};
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field < 1 || f.field > 4)
            continue;
        if (want(d, &f, WT_VARINT, "Label field") < 0)
            return -EINVAL;
        switch (f.field) {
        case 1:
            l.key = (int64_t)f.u;
            break;
        case 2:
            l.str = (int64_t)f.u;
            break;
        case 3:
            l.num = (int64_t)f.u;
            break;
        default:
            l.num_unit = (int64_t)f.u;
            break;
        }
    }
    if (rc < 0)
        return rc;
    /* Go keeps a label as a string label if str is set, as a numeric one if
     * num or num_unit is; a label with none of them disappears. */
    if (l.str != 0) {
        l.num = 0;
        l.num_unit = 0;
    } else if (l.num == 0 && l.num_unit == 0) {
        return 0;
    }
    if (err_grow((void **)&d->labels, &d->cap_labels, d->n_labels + 1, sizeof(*d->labels)) < 0)
        return oom(d);
    d->labels[d->n_labels++] = l;
    return 0;
}

/* Copies n elements of size elem into the profile's chunk storage. */
static void *keep(dec_t *d, const void *src, size_t n, size_t elem)
{
    if (n == 0)
        return NULL;
    void *m = profile_alloc(d->p, n * elem);
    if (m)
        memcpy(m, src, n * elem);
    return m;
}

static int dec_sample(dec_t *d, const fld_t *outer, size_t idx)
{
    profile_t *p = d->p;
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    d->n_locs = d->n_vals = d->n_labels = 0;
    while ((rc = next_field(d, &r, &f)) > 0) {
        switch (f.field) {
        case 1:
            rc = repeated_u64(d, &f, &d->locs, &d->n_locs, &d->cap_locs, "Sample.location_id");
            break;
        case 2:
            rc = repeated_u64(d, &f, (uint64_t **)&d->vals, &d->n_vals, &d->cap_vals,
                              "Sample.value");
            break;
        case 3:
            rc = want(d, &f, WT_LEN, "Sample.label");
            if (rc == 0)
                rc = dec_label(d, &f);
            break;
        default:
            rc = 0;
        }
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (idx == 0)
        d->vals0 = d->n_vals;
    else if (d->n_vals != d->vals0 && d->bad_vals == SIZE_MAX) {
        d->bad_vals = idx;
        d->n_bad_vals = d->n_vals;
    }
    if (d->n_locs > UINT32_MAX || d->n_labels > UINT32_MAX)
        return FAIL(d, "sample %zu is too large", idx);
    profile_sample_t *s = &p->samples[idx];
    s->location_ids = profile_alloc_stack(p, d->locs, d->n_locs);
    s->values = keep(d, d->vals, d->n_vals, sizeof(*d->vals));
    s->labels = keep(d, d->labels, d->n_labels, sizeof(*d->labels));
    if ((d->n_locs && !s->location_ids) || (d->n_vals && !s->values) ||
        (d->n_labels && !s->labels))
        return oom(d);
    s->n_location_ids = (uint32_t)d->n_locs;
    s->n_labels = (uint32_t)d->n_labels;
    return 0;
}

static int dec_mapping(dec_t *d, const fld_t *outer, profile_mapping_t *m)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field < 1 || f.field > 10)
            continue;
        if (want(d, &f, WT_VARINT, "Mapping field") < 0)
            return -EINVAL;
        switch (f.field) {
        case 1:
            m->id = f.u;
            break;
        case 2:
            m->memory_start = f.u;
            break;
        case 3:
            m->memory_limit = f.u;
            break;
        case 4:
            m->file_offset = f.u;
            break;
        case 5:
            m->filename = (int64_t)f.u;
            break;
        case 6:
            m->build_id = (int64_t)f.u;
            break;
        case 7:
            m->has_functions = f.u != 0;
            break;
        case 8:
            m->has_filenames = f.u != 0;
            break;
        case 9:
            m->has_line_numbers = f.u != 0;
            break;
        default:
            m->has_inline_frames = f.u != 0;
            break;
        }
    }
    return rc;
}

static int dec_line(dec_t *d, const fld_t *outer)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    profile_line_t ln = {0, 0};
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field != 1 && f.field != 2)
            continue;
        if (want(d, &f, WT_VARINT, "Line field") < 0)
            return -EINVAL;
        if (f.field == 1)
            ln.function_id = f.u;
        else
            ln.line = (int64_t)f.u;
    }
    if (rc < 0)
        return rc;
    if (err_grow((void **)&d->lines, &d->cap_lines, d->n_lines + 1, sizeof(*d->lines)) < 0)
        return oom(d);
    d->lines[d->n_lines++] = ln;
    return 0;
}

static int dec_location(dec_t *d, const fld_t *outer, profile_location_t *l)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    d->n_lines = 0;
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field < 1 || f.field > 5)
            continue;
        if (f.field == 4) {
            if (want(d, &f, WT_LEN, "Location.line") < 0 || dec_line(d, &f) < 0)
                return -EINVAL;
            continue;
        }
        if (want(d, &f, WT_VARINT, "Location field") < 0)
            return -EINVAL;
        switch (f.field) {
        case 1:
            l->id = f.u;
            break;
        case 2:
            l->mapping_id = f.u;
            break;
        case 3:
            l->address = f.u;
            break;
        default:
            l->is_folded = f.u != 0;
            break;
        }
    }
    if (rc < 0)
        return rc;
    if (d->n_lines > UINT32_MAX)
        return FAIL(d, "location %" PRIu64 " has too many lines", l->id);
    l->lines = profile_alloc_lines(d->p, d->lines, d->n_lines);
    if (d->n_lines && !l->lines)
        return oom(d);
    l->n_lines = (uint32_t)d->n_lines;
    return 0;
}

static int dec_function(dec_t *d, const fld_t *outer, profile_function_t *fn)
{
    rd_t r = {outer->data, outer->data + outer->len};
    fld_t f;
    int rc;
    while ((rc = next_field(d, &r, &f)) > 0) {
        if (f.field < 1 || f.field > 5)
            continue;
        if (want(d, &f, WT_VARINT, "Function field") < 0)
            return -EINVAL;
        switch (f.field) {
        case 1:
            fn->id = f.u;
            break;
        case 2:
            fn->name = (int64_t)f.u;
            break;
        case 3:
            fn->system_name = (int64_t)f.u;
            break;
        case 4:
            fn->filename = (int64_t)f.u;
            break;
        default:
            fn->start_line = (int64_t)f.u;
            break;
        }
    }
    return rc;
}
/* --- the Profile message ---------------------------------------------------- */

static const char *top_name(uint64_t field)
{
    static const char *const names[] = {
        NULL,          "sample_type", "sample",      "mapping",    "location",
        "function",    "string_table", "drop_frames", "keep_frames", "time_nanos",
        "duration_nanos", "period_type", "period",     "comment",    "default_sample_type",
    };
    return field < sizeof(names) / sizeof(names[0]) ? names[field] : NULL;
}

/* The window's size when reading a source: top-level fields are small
 * (a sample, a location, a string), a larger one widens the window.
 * 1 MiB (fewer inflate calls, less of zlib's window copying) measured
 * slower: 50 snapshots -top, the decoding thread's perf samples at
 * 2 kHz, 5 interleaved runs at load 2-3, median 1,876 -> 1,982. */
#define WIN_SIZE ((size_t)256 << 10)

/* Makes need bytes readable at d->pos, fewer only at the end of the
 * input (then every byte left is in the window). 0 or <0. */
static int fill(dec_t *d, size_t need)
{
    size_t have = (size_t)(d->end - d->pos);
    if (d->eof || have >= need)
        return 0;
    /* The unread bytes move to the front; the window grows as bytes come
     * (a hostile length claims more than there is). */
    d->base_off += (size_t)(d->pos - d->base);
    if (have)
        memmove(d->win, d->pos, have);
    while (have < need && !d->eof) {
        if (have == d->cap_win) {
            size_t nc = d->cap_win ? d->cap_win * 2 : WIN_SIZE;
            uint8_t *nw = realloc(d->win, nc);
            if (!nw)
                return oom(d);
            d->win = nw;
            d->cap_win = nc;
        }
        ssize_t r = zread_read(d->src, d->win + have, d->cap_win - have, d->err, d->errlen);
        if (r < 0) {
            d->src_failed = true;
            return (int)r;
        }
        d->eof = r == 0;
        have += (size_t)r;
    }
    d->base = d->pos = d->win;
    d->end = d->win + have;
    return 0;
}

/* Reads the rest of the source, discarding it: how many bytes that was,
 * or <0 when the source fails. */
static ssize_t drain(dec_t *d)
{
    size_t n = 0;
    while (!d->eof) {
        ssize_t r = zread_read(d->src, d->win, d->cap_win, d->err, d->errlen);
        if (r < 0) {
            d->src_failed = true;
            return r;
        }
        d->eof = r == 0;
        n += (size_t)r;
    }
    d->pos = d->end;
    return (ssize_t)n;
}

/* Bytes of the length-delimited field at [pos, end) (key, length and
 * payload), or 0 when it is another kind or its header is incomplete or
 * bad (next_field then says why). */
static uint64_t len_field_size(const uint8_t *pos, const uint8_t *end)
{
    const uint8_t *q = pos;
    uint64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        for (int i = 0;; i++) {
            if (q >= end || i == 10)
                return 0;
            uint8_t b = *q++;
            v[k] |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80))
                break;
        }
        if (k == 0 && ((v[0] & 7) != WT_LEN || v[0] >> 3 == 0))
            return 0;
    }
    uint64_t hdr = (uint64_t)(q - pos);
    return v[1] > UINT64_MAX - hdr ? UINT64_MAX : hdr + v[1];
}

/* next_field for the top level: makes the whole field readable first. */
static int next_top(dec_t *d, fld_t *f)
{
    /* Most fields are small messages wholly in a window of 24 bytes or
     * more, their key and length a byte each: fill would do nothing and
     * len_field_size ask for no more, so they are read at once. */
    const uint8_t *p = d->pos;
    size_t have = (size_t)(d->end - p);
    if ((have >= 24 || d->eof) && have >= 2 && (p[0] & 0x87) == WT_LEN && p[0] >= 8 &&
        !(p[1] & 0x80) && p[1] <= have - 2) {
        rd_t r = {p, d->end};
        int rc = next_field(d, &r, f);
        if (rc > 0)
            d->pos = r.pos;
        return rc;
    }
    for (;;) {
        int rc = fill(d, 24); /* a key and a length take at most 20 bytes */
        if (rc < 0)
            return rc;
        uint64_t need = d->eof ? 0 : len_field_size(d->pos, d->end);
        if (need > (uint64_t)(d->end - d->pos)) {
            if (need > PROFILE_MAX_INFLATED + 32) {
                /* Longer than any input may be: the message counts the
                 * bytes left, as if all had been read. */
                rd_t r = {d->pos, d->end};
                uint64_t key, n;
                f->off = off_of(d, r.pos);
                if (get_varint(d, &r, &key) < 0 || get_varint(d, &r, &n) < 0)
                    return -EINVAL; /* not so: len_field_size read both */
                f->field = key >> 3;
                size_t left = (size_t)(r.end - r.pos);
                ssize_t more = drain(d);
                if (more < 0)
                    return (int)more;
                return len_exceeds(d, f, n, left + (size_t)more);
            }
            if ((rc = fill(d, (size_t)need)) < 0)
                return rc;
        }
        rd_t r = {d->pos, d->end};
        rc = next_field(d, &r, f);
        if (rc > 0)
            d->pos = r.pos;
        return rc;
    }
}

/* Grows a profile's element array by one zeroed element: NULL on OOM. */
#define GROW_ONE(arr, n, cap)                                                               \
    (err_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))) < 0                            \
         ? NULL                                                                                \
         : memset(&(arr)[(n)++], 0, sizeof(*(arr))))

static int dec_string(dec_t *d, const fld_t *f)
{
    if (d->nstr == 0 && f->len != 0)
        return FAIL(d, "string_table[0] is not empty (offset %zu)", f->off);
    if (memchr(f->data, 0, f->len))
        return FAIL(d, "string_table[%zu] contains a NUL byte (offset %zu)", d->nstr, f->off);
    /* profile_new() already holds "" at index 0. */
    if (d->nstr > 0 && profile_add_string(d->p, (const char *)f->data, f->len) < 0)
        return oom(d);
    d->nstr++;
    return 0;
}

/* Id 0 is refused at once (validation would say the same later), so that
 * floods of empty elements stop early. */
static int dec_element(dec_t *d, const fld_t *f)
{
    profile_t *p = d->p;
    int rc;
    switch (f->field) {
    case F_SAMPLE:
        if (err_grow((void **)&p->samples, &p->cap_samples, p->n_samples + 1,
                     sizeof(*p->samples)) < 0)
            return oom(d);
        memset(&p->samples[p->n_samples], 0, sizeof(p->samples[0]));
        rc = dec_sample(d, f, p->n_samples);
        if (rc == 0)
            p->n_samples++;
        return rc;
    case F_MAPPING: {
        profile_mapping_t *m = GROW_ONE(p->mappings, p->n_mappings, p->cap_mappings);
        if (!m)
            return oom(d);
        rc = dec_mapping(d, f, m);
        if (rc == 0 && m->id == 0)
            rc = FAIL(d, "mapping #%zu has id 0 (reserved)", p->n_mappings - 1);
        return rc;
    }
    case F_LOCATION: {
        profile_location_t *l = GROW_ONE(p->locations, p->n_locations, p->cap_locations);
        if (!l)
            return oom(d);
        rc = dec_location(d, f, l);
        if (rc == 0 && l->id == 0)
            rc = FAIL(d, "location #%zu has id 0 (reserved)", p->n_locations - 1);
        return rc;
    }
    case F_FUNCTION: {
        profile_function_t *fn = GROW_ONE(p->functions, p->n_functions, p->cap_functions);
        if (!fn)
            return oom(d);
        rc = dec_function(d, f, fn);
        if (rc == 0 && fn->id == 0)
            rc = FAIL(d, "function #%zu has id 0 (reserved)", p->n_functions - 1);
        return rc;
    }
    case F_SAMPLE_TYPE: {
        profile_value_type_t *vt =
            GROW_ONE(p->sample_types, p->n_sample_types, p->cap_sample_types);
        return vt ? dec_value_type(d, f, vt) : oom(d);
    }
    case F_PERIOD_TYPE:
        return dec_value_type(d, f, &p->period_type);
    default:
        return dec_string(d, f);
    }
}

/* The top-level fields, in the order they come. */
static int decode_top(dec_t *d)
{
    profile_t *p = d->p;
    fld_t f;
    int rc;
    while ((rc = next_top(d, &f)) > 0) {
        const char *name = top_name(f.field);
        if (!name)
            continue; /* unknown field: skipped, as Go does */
        switch (f.field) {
        case F_SAMPLE_TYPE:
        case F_SAMPLE:
        case F_MAPPING:
        case F_LOCATION:
        case F_FUNCTION:
        case F_STRING:
        case F_PERIOD_TYPE:
            rc = want(d, &f, WT_LEN, name);
            if (rc == 0)
                rc = dec_element(d, &f);
            break;
        case F_COMMENT: {
            if (f.wire != WT_VARINT && f.wire != WT_LEN)
                return FAIL(d, "comment at offset %zu has wire type %s, want varint or packed",
                            f.off, wire_name(f.wire));
            size_t n = p->n_comments;
            rc = repeated_u64(d, &f, (uint64_t **)&p->comments, &n, &p->cap_comments, "comment");
            p->n_comments = n;
            break;
        }
        case F_TIME:
            if (want(d, &f, WT_VARINT, name) < 0)
                return -EINVAL;
            if (d->time_set) {
                d->concat = true;
                return FAIL(d, "concatenated profiles detected (second time_nanos at offset %zu)",
                            f.off);
            }
            d->time_set = f.u != 0;
            p->time_nanos = (int64_t)f.u;
            break;
        default: {
            if (want(d, &f, WT_VARINT, name) < 0)
                return -EINVAL;
            int64_t *v = f.field == F_DROP       ? &p->drop_frames
                         : f.field == F_KEEP     ? &p->keep_frames
                         : f.field == F_DURATION ? &p->duration_nanos
                         : f.field == F_PERIOD   ? &p->period
                                                 : &p->default_sample_type;
            *v = (int64_t)f.u;
        }
        }
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* What needs the whole message: sample types for the samples' values, a
 * string table. */
static int check_whole(dec_t *d)
{
    profile_t *p = d->p;
    if (p->n_samples && !p->n_sample_types)
        return FAIL(d, "profile has %zu samples but no sample types", p->n_samples);
    if (d->nstr == 0)
        return FAIL(d, "no string_table (every profile has at least the empty string)");
    size_t idx = SIZE_MAX, n = 0;
    if (p->n_samples && d->vals0 != p->n_sample_types)
        idx = 0, n = d->vals0;
    else if (d->bad_vals != SIZE_MAX)
        idx = d->bad_vals, n = d->n_bad_vals;
    if (idx != SIZE_MAX)
        return FAIL(d, "sample %zu has %zu values but there are %zu sample types", idx, n,
                    p->n_sample_types);
    return 0;
}

/* Gives back what doubling left unused: the arrays stay for the whole
 * report. */
static void shrink(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n == 0 || n == *cap)
        return;
    void *a = realloc(*arr, n * elem);
    if (a) {
        *arr = a;
        *cap = n;
    }
}
/* --- id sets (validation) --------------------------------------------------- */

/* The ids of one table: 1..npos when they are the positions + 1 (every
 * encoder's), else a byte map when they are dense, else a sorted array,
 * so that checking every reference stays O(1) / O(log n). */
typedef struct {
    uint8_t *dense;
    size_t ndense;
    uint64_t *sorted;
    size_t nsorted;
    size_t npos;
} idset_t;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void idset_free(idset_t *s)
{
    free(s->dense);
    free(s->sorted);
    memset(s, 0, sizeof(*s));
}

/* Builds the set; checks ids nonzero and unique. */
static int idset_build(idset_t *s, const void *base, size_t n, size_t elem, const char *what,
                       char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    uint64_t max = 0;
    bool pos = true; /* ids 1..n in order, learnt in the same pass: a
                      * second one read every element again */
    for (size_t i = 0; i < n; i++) {
        uint64_t id = *(const uint64_t *)((const char *)base + i * elem);
        if (id == 0)
            return set_err(err, errlen, "%s #%zu has id 0 (reserved)", what, i);
        if (id > max)
            max = id;
        pos &= id == i + 1;
    }
    if (n == 0)
        return 0;
    /* 1..n in order: nonzero, unique, none to store */
    if (pos) {
        s->npos = n;
        return 0;
    }
    if (max < 4 * (uint64_t)n + 1024) {
        s->ndense = (size_t)max + 1;
        s->dense = calloc(s->ndense, 1);
        if (!s->dense)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            uint64_t id = *(const uint64_t *)((const char *)base + i * elem);
            if (s->dense[id]) {
                idset_free(s);
                return set_err(err, errlen, "duplicate %s id %" PRIu64, what, id);
            }
            s->dense[id] = 1;
        }
        return 0;
    }
    s->sorted = malloc(n * sizeof(*s->sorted));
    if (!s->sorted)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        s->sorted[i] = *(const uint64_t *)((const char *)base + i * elem);
    s->nsorted = n;
    qsort(s->sorted, n, sizeof(*s->sorted), u64_cmp);
    for (size_t i = 1; i < n; i++) {
        if (s->sorted[i] == s->sorted[i - 1]) {
            uint64_t id = s->sorted[i];
            idset_free(s);
            return set_err(err, errlen, "duplicate %s id %" PRIu64, what, id);
        }
    }
    return 0;
}

static inline bool idset_has(const idset_t *s, uint64_t id)
{
    if (s->npos)
        return id - 1 < s->npos;
    if (s->dense)
        return id < s->ndense && s->dense[id];
    size_t lo = 0, hi = s->nsorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->sorted[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nsorted && s->sorted[lo] == id;
}

/* --- validation ------------------------------------------------------------- */

typedef struct {
    const profile_t *p;
    char *err;
    size_t errlen;
} vctx_t;

static int check_str_failed(const vctx_t *v, int64_t idx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noinline));

/* 0 if idx is a string's index, else the error naming the field (fmt,
 * ...: "function 3 name"). A macro: its range check is inline, the
 * message (a varargs call) made only on failure. */
#define check_str(v, idx, ...)                                                                \
    ((idx) >= 0 && (uint64_t)(idx) < (v)->p->n_strings ? 0 : check_str_failed(v, idx, __VA_ARGS__))

static int check_str_failed(const vctx_t *v, int64_t idx, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return set_err(v->err, v->errlen,
                   "%s: string index %" PRId64 " out of range (string table has %zu entries)",
                   what, idx, v->p->n_strings);
}

static int validate_strings(const vctx_t *v)
{
    const profile_t *p = v->p;
    if (p->n_strings == 0 || !p->strings || !p->strings[0] || p->strings[0][0] != '\0')
        return set_err(v->err, v->errlen, "string_table[0] is not empty");
    for (size_t i = 0; i < p->n_sample_types; i++)
        if (check_str(v, p->sample_types[i].type, "sample_type %zu type", i) < 0 ||
            check_str(v, p->sample_types[i].unit, "sample_type %zu unit", i) < 0)
            return -EINVAL;
    for (size_t i = 0; i < p->n_samples; i++) {
        const profile_sample_t *s = &p->samples[i];
        for (uint32_t j = 0; j < s->n_labels; j++) {
            const profile_label_t *l = &s->labels[j];
            if (check_str(v, l->key, "sample %zu label %u key", i, j) < 0 ||
                check_str(v, l->str, "sample %zu label %u str", i, j) < 0 ||
                check_str(v, l->num_unit, "sample %zu label %u num_unit", i, j) < 0)
                return -EINVAL;
        }
    }
    for (size_t i = 0; i < p->n_mappings; i++) {
        const profile_mapping_t *m = &p->mappings[i];
        if (check_str(v, m->filename, "mapping %" PRIu64 " filename", m->id) < 0 ||
            check_str(v, m->build_id, "mapping %" PRIu64 " build_id", m->id) < 0)
            return -EINVAL;
    }
    for (size_t i = 0; i < p->n_functions; i++) {
        const profile_function_t *f = &p->functions[i];
        if (check_str(v, f->name, "function %" PRIu64 " name", f->id) < 0 ||
            check_str(v, f->system_name, "function %" PRIu64 " system_name", f->id) < 0 ||
            check_str(v, f->filename, "function %" PRIu64 " filename", f->id) < 0)
            return -EINVAL;
    }
    if (check_str(v, p->drop_frames, "drop_frames") < 0 ||
        check_str(v, p->keep_frames, "keep_frames") < 0 ||
        check_str(v, p->period_type.type, "period_type type") < 0 ||
        check_str(v, p->period_type.unit, "period_type unit") < 0 ||
        check_str(v, p->default_sample_type, "default_sample_type") < 0)
        return -EINVAL;
    for (size_t i = 0; i < p->n_comments; i++)
        if (check_str(v, p->comments[i], "comment %zu", i) < 0)
            return -EINVAL;
    return 0;
}

int profile_validate(const profile_t *p, char *err, size_t errlen)
{
    vctx_t v = {p, err, errlen};
    int rc = validate_strings(&v);
    if (rc < 0)
        return rc;
    if (p->n_samples && !p->n_sample_types)
        return set_err(err, errlen, "profile has %zu samples but no sample types",
                       p->n_samples);
    idset_t maps, fns, locs;
    rc = idset_build(&maps, p->mappings, p->n_mappings, sizeof(*p->mappings), "mapping", err,
                     errlen);
    if (rc < 0)
        goto oom_or_rc;
    rc = idset_build(&fns, p->functions, p->n_functions, sizeof(*p->functions), "function",
                     err, errlen);
    if (rc < 0) {
        idset_free(&maps);
        goto oom_or_rc;
    }
    rc = idset_build(&locs, p->locations, p->n_locations, sizeof(*p->locations), "location",
                     err, errlen);
    if (rc < 0) {
        idset_free(&maps);
        idset_free(&fns);
        goto oom_or_rc;
    }
    for (size_t i = 0; i < p->n_locations && rc == 0; i++) {
        const profile_location_t *l = &p->locations[i];
        if (l->mapping_id && !idset_has(&maps, l->mapping_id))
            rc = set_err(err, errlen, "location %" PRIu64 ": unknown mapping id %" PRIu64, l->id,
                         l->mapping_id);
        for (uint32_t j = 0; j < l->n_lines && rc == 0; j++) {
            uint64_t fid = l->lines[j].function_id;
            if (fid == 0)
                rc = set_err(err, errlen, "location %" PRIu64 ": line %u has no function id",
                             l->id, j);
            else if (!idset_has(&fns, fid))
                rc = set_err(err, errlen, "location %" PRIu64 ": unknown function id %" PRIu64,
                             l->id, fid);
        }
    }
    for (size_t i = 0; i < p->n_samples && rc == 0; i++) {
        const profile_sample_t *s = &p->samples[i];
        for (uint32_t j = 0; j < s->n_location_ids && rc == 0; j++)
            if (!idset_has(&locs, s->location_ids[j]))
                rc = set_err(err, errlen, "sample %zu: unknown location id %" PRIu64, i,
                             s->location_ids[j]);
    }
    idset_free(&maps);
    idset_free(&fns);
    idset_free(&locs);
    return rc;
oom_or_rc:
    if (rc == -ENOMEM)
        set_err(err, errlen, "out of memory while validating the profile");
    return rc;
}

/* Go treats a mapping_id that names no mapping as "no mapping". */
static int drop_dangling_mapping_ids(profile_t *p, char *err, size_t errlen)
{
    bool any = false;
    for (size_t i = 0; i < p->n_locations && !any; i++)
        any = p->locations[i].mapping_id != 0;
    if (!any)
        return 0;
    /* Ids are checked (nonzero, unique) by validation later; here only
     * membership matters, so build the set leniently. */
    uint64_t *ids = malloc((p->n_mappings ? p->n_mappings : 1) * sizeof(*ids));
    if (!ids) {
        set_err(err, errlen, "out of memory while decoding the profile");
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->n_mappings; i++)
        ids[i] = p->mappings[i].id;
    qsort(ids, p->n_mappings, sizeof(*ids), u64_cmp);
    idset_t s = {.sorted = ids, .nsorted = p->n_mappings};
    for (size_t i = 0; i < p->n_locations; i++)
        if (p->locations[i].mapping_id && !idset_has(&s, p->locations[i].mapping_id))
            p->locations[i].mapping_id = 0;
    free(ids);
    return 0;
}
static void dec_free(dec_t *d)
{
    free(d->locs);
    free(d->vals);
    free(d->labels);
    free(d->lines);
}

/* Decodes what d's window holds and its source gives. */
static int decode_run(dec_t *d, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    d->err = err;
    d->errlen = errlen;
    d->bad_vals = SIZE_MAX;
    int rc = fill(d, 24);
    if (rc < 0)
        return rc;
    if (d->pos == d->end) {
        set_err(err, errlen, "empty input");
        return -ENODATA;
    }
    profile_t *p = d->reuse;
    d->reuse = NULL;
    if (p && profile_clear(p) < 0) {
        profile_free(p);
        p = NULL;
    } else if (!p) {
        p = profile_new();
    }
    if (!p) {
        set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    profile_defer_intern(p);
    d->p = p;
    rc = decode_top(d);
    if (rc == 0)
        rc = check_whole(d);
    dec_free(d);
    if (rc == 0) {
        shrink((void **)&p->samples, p->n_samples, &p->cap_samples, sizeof(*p->samples));
        shrink((void **)&p->mappings, p->n_mappings, &p->cap_mappings, sizeof(*p->mappings));
        shrink((void **)&p->locations, p->n_locations, &p->cap_locations, sizeof(*p->locations));
        shrink((void **)&p->functions, p->n_functions, &p->cap_functions, sizeof(*p->functions));
        shrink((void **)&p->strings, p->n_strings, &p->cap_strings, sizeof(*p->strings));
        rc = drop_dangling_mapping_ids(p, err, errlen);
    }
    if (rc == 0)
        rc = profile_validate(p, err, errlen);
    if (rc == 0 && profile_index(p) < 0) {
        set_err(err, errlen, "out of memory while decoding the profile");
        rc = -ENOMEM;
    }
    if (rc < 0) {
        profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int profile_decode_proto_concat(const uint8_t *data, size_t len, profile_t **out, char *err,
                                size_t errlen, bool *concat)
{
    dec_t d;
    memset(&d, 0, sizeof(d));
    d.base = d.pos = data;
    d.end = data + len;
    d.eof = true;
    int rc = decode_run(&d, out, err, errlen);
    *concat = d.concat;
    return rc;
}

int profile_decode_proto(const uint8_t *data, size_t len, profile_t **out, char *err,
                         size_t errlen)
{
    bool concat;
    return profile_decode_proto_concat(data, len, out, err, errlen, &concat);
}

int profile_decode_stream(zread_t *src, profile_t **out, char *err, size_t errlen,
                          profile_decode_fail_t *why)
{
    return profile_decode_stream_reuse(src, NULL, out, err, errlen, why);
}

int profile_decode_stream_reuse(zread_t *src, profile_t *reuse, profile_t **out, char *err,
                                size_t errlen, profile_decode_fail_t *why)
{
    dec_t d;
    memset(&d, 0, sizeof(d));
    d.src = src;
    d.reuse = reuse;
    int rc = decode_run(&d, out, err, errlen);
    profile_free(d.reuse); /* not reached: the input was empty or unreadable */
    /* The bytes are read in full first where they fail (a corrupt gzip
     * tail, a file over the limit): that failure is the one to report,
     * as when the whole input was read before decoding. */
    if (rc < 0 && rc != -ENOMEM && rc != -ENODATA && !d.src_failed) {
        if (d.cap_win == 0 && (d.win = malloc(WIN_SIZE)) != NULL)
            d.cap_win = WIN_SIZE;
        ssize_t r = d.cap_win ? drain(&d) : 0;
        if (r < 0)
            rc = (int)r; /* drain put the source's message in err */
    }
    *why = d.src_failed ? PROFILE_DECODE_SOURCE
           : d.concat   ? PROFILE_DECODE_CONCAT
                        : PROFILE_DECODE_OTHER;
    free(d.win);
    return rc;
}

/* --- gzip ------------------------------------------------------------------- */

int profile_gunzip(const uint8_t *data, size_t len, size_t limit, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    zread_t z;
    zread_mem(&z, data, len, limit);
    z.gz = true; /* not sniffed: what is no gzip is corrupt gzip */
    size_t cap = len < limit / 4 ? len * 4 : limit;
    if (cap < 4096)
        cap = 4096;
    uint8_t *buf = NULL;
    size_t n = 0;
    int rc = 0;
    for (;;) {
        if (n == cap || !buf) {
            /* zread stops one byte past the limit: no more room is needed */
            size_t nc = !buf ? cap : cap > limit / 2 ? limit + 1 : cap * 2;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) {
                rc = err_fmt(err, errlen, -ENOMEM, "out of memory while inflating");
                break;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = zread_read(&z, buf + n, cap - n, err, errlen);
        if (r < 0) {
            rc = (int)r;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    zread_close(&z);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = n;
    return 0;
}
