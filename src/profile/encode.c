/* encode.c — profile_t to profile.proto bytes, and gzip.
 *
 * Nested messages are length-prefixed: samples and locations compute their
 * length first and are written in place; the few others go through a
 * scratch buffer copied behind their tag and length. Field order
 * follows Go's writer: sample types, samples, mappings, locations,
 * functions, string table, then the scalar fields. */
#include "profile.h"

#include "base/fdio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CPROF_NO_ZLIB
#include "gzstore.h" /* gzip of stored blocks: the musl runtime (Makefile) */
#else
#include <zlib.h>
#endif

void pbuf_free(pbuf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* Room for n more bytes at the end of b; NULL (and b->oom) without memory. */
static __attribute__((noinline)) uint8_t *reserve_slow(pbuf_t *b, size_t n)
{
    if (b->oom)
        return NULL;
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *nd = realloc(b->data, nc);
        if (!nd) {
            b->oom = true;
            return NULL;
        }
        b->data = nd;
        b->cap = nc;
    }
    return b->data + b->len;
}

static inline uint8_t *reserve(pbuf_t *b, size_t n)
{
    return __builtin_expect(b->len + n <= b->cap, 1) ? b->data + b->len : reserve_slow(b, n);
}

static void put(pbuf_t *b, const void *src, size_t n)
{
    /* n == 0 may come with src == NULL (empty strings, empty scratch
     * buffers): memcpy must not see a NULL pointer even then. */
    uint8_t *d = n ? reserve(b, n) : NULL;
    if (d) {
        memcpy(d, src, n);
        b->len += n;
    }
}

/* v's varint at d; the byte after it. */
static inline uint8_t *put_varint(uint8_t *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    return d;
}

/* Varints are written in place: they are most of a profile's bytes. */
static inline void varint(pbuf_t *b, uint64_t v)
{
    uint8_t *d = reserve(b, 10);
    if (d)
        b->len = (size_t)(put_varint(d, v) - b->data);
}

/* One byte per 7 bits of v, at least one: (bits + 6) / 7 without a loop or
 * a division, bits being 64 - clz(v | 1). */
static inline size_t varint_len(uint64_t v)
{
    return ((size_t)(63 - __builtin_clzll(v | 1)) * 9 + 73) / 64;
}

enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

static void key(pbuf_t *b, int field, int wire)
{
    varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* Scalars are written only when nonzero, as Go does. */
static void field_u64(pbuf_t *b, int field, uint64_t v)
{
    if (v) {
        key(b, field, WIRE_VARINT);
        varint(b, v);
    }
}

static void field_bool(pbuf_t *b, int field, bool v)
{
    field_u64(b, field, v ? 1 : 0);
}

static void field_bytes(pbuf_t *b, int field, const void *data, size_t n)
{
    key(b, field, WIRE_BYTES);
    varint(b, n);
    put(b, data, n);
}

/* Appends the scratch buffer as a nested message and empties it. */
static void field_msg(pbuf_t *b, int field, pbuf_t *msg)
{
    if (msg->oom)
        b->oom = true;
    field_bytes(b, field, msg->data, msg->len);
    msg->len = 0;
}

static void value_type(pbuf_t *b, pbuf_t *tmp, int field, const profile_value_type_t *vt)
{
    field_u64(tmp, 1, (uint64_t)vt->type);
    field_u64(tmp, 2, (uint64_t)vt->unit);
    field_msg(b, field, tmp);
}

/* Encoded sizes, for the two messages a profile has most of (samples and
 * locations): knowing the length first, they are written straight into
 * the output instead of through a scratch buffer. Field numbers here are
 * all below 16, so every key is one byte. */
static size_t scalar_len(uint64_t v)
{
    return v ? 1 + varint_len(v) : 0;
}

static size_t nested_len(size_t payload)
{
    return 1 + varint_len(payload) + payload;
}

static size_t packed_len(const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    return len;
}

/* len: packed_len(v, n), reserved at once (a sample's location ids are
 * most of a heap profile: 755 K of them in python3's start, where this
 * and the sample's lengths took 48 instructions an id, one reserve each). */
static void packed(pbuf_t *b, int field, const uint64_t *v, size_t n, size_t len)
{
    if (n == 0)
        return;
    key(b, field, WIRE_BYTES);
    varint(b, len);
    uint8_t *d = reserve(b, len);
    if (!d)
        return;
    for (size_t i = 0; i < n; i++)
        d = put_varint(d, v[i]);
    b->len += len;
}

static size_t label_len(const profile_label_t *l)
{
    return scalar_len((uint64_t)l->key) + scalar_len((uint64_t)l->str) +
           scalar_len((uint64_t)l->num) + scalar_len((uint64_t)l->num_unit);
}

static void sample(pbuf_t *b, const profile_t *p, const profile_sample_t *s)
{
    const uint64_t *vals = (const uint64_t *)s->values;
    size_t locs_len = packed_len(s->location_ids, s->n_location_ids);
    size_t vals_len = packed_len(vals, p->n_sample_types);
    size_t len = (s->n_location_ids ? nested_len(locs_len) : 0) +
                 (p->n_sample_types ? nested_len(vals_len) : 0);
    for (uint32_t i = 0; i < s->n_labels; i++)
        len += nested_len(label_len(&s->labels[i]));
    key(b, 2, WIRE_BYTES);
    varint(b, len);
    packed(b, 1, s->location_ids, s->n_location_ids, locs_len);
    packed(b, 2, vals, p->n_sample_types, vals_len);
    for (uint32_t i = 0; i < s->n_labels; i++) {
        const profile_label_t *l = &s->labels[i];
        key(b, 3, WIRE_BYTES);
        varint(b, label_len(l));
        field_u64(b, 1, (uint64_t)l->key);
        field_u64(b, 2, (uint64_t)l->str);
        field_u64(b, 3, (uint64_t)l->num);
        field_u64(b, 4, (uint64_t)l->num_unit);
    }
}

static void mapping(pbuf_t *b, pbuf_t *tmp, const profile_mapping_t *m)
{
    field_u64(tmp, 1, m->id);
    field_u64(tmp, 2, m->memory_start);
    field_u64(tmp, 3, m->memory_limit);
    field_u64(tmp, 4, m->file_offset);
    field_u64(tmp, 5, (uint64_t)m->filename);
    field_u64(tmp, 6, (uint64_t)m->build_id);
    field_bool(tmp, 7, m->has_functions);
    field_bool(tmp, 8, m->has_filenames);
    field_bool(tmp, 9, m->has_line_numbers);
    field_bool(tmp, 10, m->has_inline_frames);
    field_msg(b, 3, tmp);
}

static size_t line_len(const profile_line_t *ln)
{
    return scalar_len(ln->function_id) + scalar_len((uint64_t)ln->line);
}

static void location(pbuf_t *b, const profile_location_t *l)
{
    size_t len = scalar_len(l->id) + scalar_len(l->mapping_id) + scalar_len(l->address) +
                 scalar_len(l->is_folded);
    for (uint32_t i = 0; i < l->n_lines; i++)
        len += nested_len(line_len(&l->lines[i]));
    key(b, 4, WIRE_BYTES);
    varint(b, len);
    field_u64(b, 1, l->id);
    field_u64(b, 2, l->mapping_id);
    field_u64(b, 3, l->address);
    for (uint32_t i = 0; i < l->n_lines; i++) {
        key(b, 4, WIRE_BYTES);
        varint(b, line_len(&l->lines[i]));
        field_u64(b, 1, l->lines[i].function_id);
        field_u64(b, 2, (uint64_t)l->lines[i].line);
    }
    field_bool(b, 5, l->is_folded);
}

static void function(pbuf_t *b, pbuf_t *tmp, const profile_function_t *f)
{
    field_u64(tmp, 1, f->id);
    field_u64(tmp, 2, (uint64_t)f->name);
    field_u64(tmp, 3, (uint64_t)f->system_name);
    field_u64(tmp, 4, (uint64_t)f->filename);
    field_u64(tmp, 5, (uint64_t)f->start_line);
    field_msg(b, 5, tmp);
}

/* Where encode() hands its bytes as it goes: NULL keeps them all in out. */
#ifdef CPROF_NO_ZLIB
typedef struct {
    gzstore_t z;
    int fd;
    int err; /* the first failure, negative errno */
    uint8_t buf[65536]; /* unused: spill's threshold */
} gzsink_t;

#define Z_NO_FLUSH 0
#define Z_FINISH 4

/* Writes out's bytes as stored blocks and empties out. */
static void gzsink_feed(gzsink_t *g, pbuf_t *out, int flush)
{
    if (!g->err)
        g->err = gzstore_write(&g->z, g->fd, out->data, out->len, flush == Z_FINISH);
    out->len = 0;
}
#else
typedef struct {
    z_stream z;
    int fd;
    int err; /* the first failure, negative errno */
    uint8_t buf[65536];
} gzsink_t;

/* Compresses out's bytes into the sink (writing full output buffers to its
 * fd) and empties out. */
static void gzsink_feed(gzsink_t *g, pbuf_t *out, int flush)
{
    g->z.next_in = out->data;
    g->z.avail_in = (uInt)out->len;
    do {
        int rc = deflate(&g->z, flush);
        if (rc == Z_STREAM_ERROR || (rc == Z_BUF_ERROR && g->z.avail_out != 0)) {
            g->err = g->err ? g->err : -EIO;
            break;
        }
        if (g->z.avail_out == 0 || (flush == Z_FINISH && rc == Z_STREAM_END)) {
            size_t n = sizeof(g->buf) - g->z.avail_out;
            int w = g->err ? g->err : profile_write_all(g->fd, g->buf, n);
            g->err = w;
            g->z.next_out = g->buf;
            g->z.avail_out = sizeof(g->buf);
            if (rc == Z_STREAM_END)
                break;
        }
    } while (g->z.avail_in > 0 || (flush == Z_FINISH && !g->err));
    out->len = 0;
}
#endif

/* Top-level items are whole messages: between two, out's bytes can go. */
static inline void spill(gzsink_t *g, pbuf_t *out)
{
    if (g && out->len >= sizeof(g->buf) && !out->oom)
        gzsink_feed(g, out, Z_NO_FLUSH);
}

static int encode(const profile_t *p, pbuf_t *out, gzsink_t *g)
{
    pbuf_t tmp = {0};
    for (size_t i = 0; i < p->n_sample_types; i++)
        value_type(out, &tmp, 1, &p->sample_types[i]);
    for (size_t i = 0; i < p->n_samples; i++) {
        sample(out, p, &p->samples[i]);
        spill(g, out);
    }
    for (size_t i = 0; i < p->n_mappings; i++)
        mapping(out, &tmp, &p->mappings[i]);
    for (size_t i = 0; i < p->n_locations; i++) {
        location(out, &p->locations[i]);
        spill(g, out);
    }
    for (size_t i = 0; i < p->n_functions; i++) {
        function(out, &tmp, &p->functions[i]);
        spill(g, out);
    }
    for (size_t i = 0; i < p->n_strings; i++) {
        field_bytes(out, 6, p->strings[i], strlen(p->strings[i]));
        spill(g, out);
    }
    field_u64(out, 7, (uint64_t)p->drop_frames);
    field_u64(out, 8, (uint64_t)p->keep_frames);
    field_u64(out, 9, (uint64_t)p->time_nanos);
    field_u64(out, 10, (uint64_t)p->duration_nanos);
    if (p->period_type.type || p->period_type.unit)
        value_type(out, &tmp, 11, &p->period_type);
    field_u64(out, 12, (uint64_t)p->period);
    if (p->n_comments) {
        for (size_t i = 0; i < p->n_comments; i++)
            varint(&tmp, (uint64_t)p->comments[i]);
        field_msg(out, 13, &tmp);
    }
    field_u64(out, 14, (uint64_t)p->default_sample_type);
    bool oom = tmp.oom || out->oom;
    pbuf_free(&tmp);
    return oom ? -ENOMEM : 0;
}

int profile_encode(const profile_t *p, pbuf_t *out)
{
    return encode(p, out, NULL);
}

/* Empties out and gives it room for bound bytes: false when memory
 * ran out (out->oom). */
static bool reset_room(pbuf_t *out, size_t bound)
{
    out->len = 0;
    put(out, NULL, 0);
    if (!out->oom && out->cap < bound) {
        uint8_t *nd = realloc(out->data, bound);
        if (nd) {
            out->data = nd;
            out->cap = bound;
        } else {
            out->oom = true;
        }
    }
    return !out->oom;
}

#ifdef CPROF_NO_ZLIB
int profile_gzip(const uint8_t *in, size_t len, pbuf_t *out)
{
    if (!reset_room(out, gzstore_bound(len)))
        return -ENOMEM;
    out->len = gzstore_mem(in, len, out->data);
    return 0;
}
#else
int profile_gzip(const uint8_t *in, size_t len, pbuf_t *out)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    /* Fastest level, as Go's profile writer: a profile is served while the
     * program runs. 15 window bits + 16: gzip header and trailer. */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    if (!reset_room(out, deflateBound(&z, (uLong)len))) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out->data;
    z.avail_out = (uInt)out->cap;
    int rc = deflate(&z, Z_FINISH);
    out->len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -EIO;
}
#endif

int profile_write_all(int fd, const void *data, size_t n)
{
    return fdio_write_all(fd, data, n, FDIO_STALL_MS);
}

/* Streams: the encoded bytes are compressed and written 64 KiB at a time,
 * so neither the whole encoding nor the whole gzip is ever in memory (a
 * profile of 100,000 stacks is megabytes of both). */
int profile_write_fd(const profile_t *p, int fd)
{
    gzsink_t *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
#ifndef CPROF_NO_ZLIB
    /* Fastest level, as profile_gzip. Deflate is half the heap profile's
     * write at exit (python3's start: 69 M of 152 M instructions). Others
     * measured on the 1,907,312 bytes of python3 pywork.py 20000's profile
     * (callgrind, deflate alone): this 72.5 M, 236,236 bytes; Z_RLE 192.0
     * M, 1,204,903; Z_HUFFMAN_ONLY 176.9 M, 1,222,898 (both byte by byte);
     * memLevel 9 85.8 M, 6 69.4 M (238,862 bytes), 4 79.4 M; 12 window
     * bits 165.6 M; deflateTune(1, 1, 1, 1) 72.0 M, 252,828 bytes. */
    if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        return -ENOMEM;
    }
    g->z.next_out = g->buf;
    g->z.avail_out = sizeof(g->buf);
#endif
    g->fd = fd;
    pbuf_t raw = {0};
    int rc = encode(p, &raw, g);
    if (rc == 0)
        gzsink_feed(g, &raw, Z_FINISH);
    if (rc == 0)
        rc = g->err;
#ifndef CPROF_NO_ZLIB
    deflateEnd(&g->z);
#endif
    pbuf_free(&raw);
    free(g);
    return rc;
}
