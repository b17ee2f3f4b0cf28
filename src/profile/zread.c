/* zread.c — a profile's bytes in pieces, gunzipped on the way (see
 * zread.h). The inflate loop is profile_gunzip's, cut where the caller's
 * buffer is full instead of growing one buffer to the whole profile. */
#include "zread.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/err.h"

#define IBUF_SIZE (64u << 10)

static int fail(zread_t *z, zread_fail_t what, char *err, size_t errlen, int rc,
                const char *msg)
{
    z->fail = what;
    return err_fmt(err, errlen, rc, "%s", msg);
}

/* Refills ibuf from the file with what is left unconsumed moved first:
 * 0, or -errno. */
static int refill(zread_t *z)
{
    if (z->fd < 0 || z->ieof)
        return 0;
    if (z->ipos > 0) {
        memmove(z->ibuf, z->ibuf + z->ipos, z->ilen - z->ipos);
        z->ilen -= z->ipos;
        z->ipos = 0;
    }
    while (z->ilen < IBUF_SIZE) {
        ssize_t r = read(z->fd, z->ibuf + z->ilen, IBUF_SIZE - z->ilen);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0) {
            z->ieof = true;
            break;
        }
        z->ilen += (size_t)r;
        z->inlen += (size_t)r;
    }
    return 0;
}

void zread_mem(zread_t *z, const uint8_t *data, size_t len, size_t limit)
{
    memset(z, 0, sizeof(*z));
    z->fd = -1;
    z->ibuf = (uint8_t *)data; /* only read: never refilled nor freed (fd < 0) */
    z->ilen = z->memlen = z->inlen = len;
    z->mem = data;
    z->ieof = true;
    z->limit = limit;
    z->gz = len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

int zread_fd(zread_t *z, int fd, size_t limit, char *err, size_t errlen)
{
    memset(z, 0, sizeof(*z));
    z->fd = fd;
    z->limit = limit;
    z->ibuf = malloc(IBUF_SIZE);
    if (!z->ibuf)
        return fail(z, ZREAD_IO, err, errlen, -ENOMEM, strerror(ENOMEM));
    int rc = refill(z);
    if (rc < 0)
        return fail(z, ZREAD_IO, err, errlen, rc, strerror(-rc));
    z->gz = z->ilen >= 2 && z->ibuf[0] == 0x1f && z->ibuf[1] == 0x8b;
    return 0;
}

void zread_close(zread_t *z)
{
    if (z->zinit)
        inflateEnd(z->z);
    free(z->z);
    z->z = NULL;
    if (z->fd >= 0)
        free(z->ibuf);
    z->ibuf = NULL;
    z->zinit = false;
}

/* A raw file: what ibuf holds first, then straight from the file. */
static ssize_t read_raw(zread_t *z, uint8_t *buf, size_t n, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < n) {
        if (z->ipos < z->ilen) {
            size_t k = z->ilen - z->ipos < n - got ? z->ilen - z->ipos : n - got;
            memcpy(buf + got, z->ibuf + z->ipos, k);
            z->ipos += k;
            got += k;
            continue;
        }
        if (z->ieof || z->fd < 0)
            break;
        ssize_t r = read(z->fd, buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            return fail(z, ZREAD_IO, err, errlen, -e, strerror(e));
        }
        if (r == 0) {
            z->ieof = true;
            break;
        }
        got += (size_t)r;
        z->inlen += (size_t)r;
    }
    z->out += got;
    if (z->out > z->limit)
        return fail(z, ZREAD_IO, err, errlen, -EFBIG, "file is too large");
    return (ssize_t)got;
}

static ssize_t read_gz(zread_t *z, uint8_t *buf, size_t n, char *err, size_t errlen)
{
    if (!z->zinit) {
        if (!z->z && !(z->z = calloc(1, sizeof(*z->z))))
            return fail(z, ZREAD_GZIP, err, errlen, -ENOMEM, "cannot initialize zlib");
        if (inflateInit2(z->z, 15 + 16) != Z_OK)
            return fail(z, ZREAD_GZIP, err, errlen, -ENOMEM, "cannot initialize zlib");
        z->zinit = true;
    }
    size_t got = 0;
    while (got < n && !z->zdone) {
        int rc;
        if (z->ipos == z->ilen && (rc = refill(z)) < 0)
            return fail(z, ZREAD_IO, err, errlen, rc, strerror(-rc));
        /* One byte of room past the limit tells "exactly at the limit"
         * from "over it". */
        size_t room = n - got, left = z->limit + 1 - z->out;
        if (room > left)
            room = left;
        size_t avail = z->ilen - z->ipos;
        z->z->next_in = z->ibuf + z->ipos;
        z->z->avail_in = avail > UINT_MAX ? UINT_MAX : (uInt)avail;
        z->z->next_out = buf + got;
        z->z->avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
        uInt ai = z->z->avail_in, ao = z->z->avail_out;
        int zr = inflate(z->z, Z_NO_FLUSH);
        z->ipos += ai - z->z->avail_in;
        z->in += ai - z->z->avail_in;
        got += ao - z->z->avail_out;
        z->out += ao - z->z->avail_out;
        if (z->out > z->limit) {
            char m[80];
            snprintf(m, sizeof(m), "decompressed profile is larger than %zu MiB", z->limit >> 20);
            return fail(z, ZREAD_GZIP, err, errlen, -EFBIG, m);
        }
        if (zr == Z_STREAM_END) {
            if (z->ilen - z->ipos < 2 && (rc = refill(z)) < 0)
                return fail(z, ZREAD_IO, err, errlen, rc, strerror(-rc));
            if (z->ipos == z->ilen && z->ieof) {
                z->zdone = true;
                break;
            }
            /* Another gzip member follows (Go's reader concatenates them). */
            if (z->ilen - z->ipos < 2 || z->ibuf[z->ipos] != 0x1f || z->ibuf[z->ipos + 1] != 0x8b) {
                char m[80];
                snprintf(m, sizeof(m), "trailing garbage after gzip data at offset %zu", z->in);
                return fail(z, ZREAD_GZIP, err, errlen, -EINVAL, m);
            }
            inflateReset(z->z);
            continue;
        }
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
            char m[200];
            snprintf(m, sizeof(m), "corrupt gzip data: %s", z->z->msg ? z->z->msg : "bad stream");
            return fail(z, ZREAD_GZIP, err, errlen, -EINVAL, m);
        }
        if (zr == Z_MEM_ERROR)
            return fail(z, ZREAD_GZIP, err, errlen, -ENOMEM, "out of memory while inflating");
        /* Z_OK or Z_BUF_ERROR: more input is needed, or more room. */
        if (z->z->avail_in == 0 && z->ieof && z->z->avail_out > 0) {
            char m[120];
            snprintf(m, sizeof(m), "truncated gzip data (%zu bytes in, %zu out)", z->inlen, z->out);
            return fail(z, ZREAD_GZIP, err, errlen, -EINVAL, m);
        }
    }
    return (ssize_t)got;
}

void zread_pull(zread_t *z, zread_pull_fn pull, void *ctx)
{
    memset(z, 0, sizeof(*z));
    z->fd = -1;
    z->pull = pull;
    z->pull_ctx = ctx;
}

ssize_t zread_read(zread_t *z, uint8_t *buf, size_t n, char *err, size_t errlen)
{
    if (z->fail != ZREAD_OK)
        return err_fmt(err, errlen, -EIO, "read after a failure");
    if (z->pull) {
        ssize_t r = z->pull(z->pull_ctx, buf, n, &z->fail, err, errlen);
        if (r < 0 && z->fail == ZREAD_OK)
            z->fail = ZREAD_IO;
        return r;
    }
    return z->gz ? read_gz(z, buf, n, err, errlen) : read_raw(z, buf, n, err, errlen);
}
