/* parse.c — a profile of any format: gzip sniffed, profile.proto tried
 * first (decoded as the bytes are read and inflated), then the legacy
 * parsers (see parse.h). */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "legacy.h"
#include "zread.h"

#include "base/err.h"

static bool looks_like_text(const uint8_t *d, size_t n)
{
    if (n > 256)
        n = 256;
    for (size_t i = 0; i < n; i++)
        if ((d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t') || d[i] == 0x7f)
            return false;
    return true;
}

/* The legacy parsers' turn, after profile.proto failed with perr on the
 * (inflated) bytes. */
static int parse_legacy(const uint8_t *data, size_t len, const char *perr, profile_t **out,
                        char *err, size_t errlen)
{
    char lerr[256];
    int lrc = legacy_parse(data, len, out, lerr, sizeof(lerr));
    if (lrc == 0)
        return 0;
    if (lrc == LEGACY_UNRECOGNIZED) {
        /* Text is no protobuf: its "wire errors" would only confuse. */
        if (looks_like_text(data, len))
            return err_fmt(err, errlen, -EINVAL, "unrecognized profile format (neither "
                           "profile.proto nor a known legacy text profile)");
        return err_fmt(err, errlen, -EINVAL, "%s", perr);
    }
    return err_fmt(err, errlen, lrc, "%s", lerr);
}

/* Whether a failed profile.proto decode ends the parse: empty input, no
 * memory, concatenated profiles; else the legacy parsers try. */
static bool proto_final(int rc, profile_decode_fail_t why)
{
    return rc == 0 || rc == -ENODATA || rc == -ENOMEM || why != PROFILE_DECODE_OTHER;
}

/* The proto decode of a source: the message worded for the source's
 * failure ("decompressing profile: ..."). */
static int decode_src(zread_t *z, profile_t *reuse, profile_t **out, char *err, size_t errlen,
                      profile_decode_fail_t *why)
{
    char perr[256];
    int rc = profile_decode_stream_reuse(z, reuse, out, perr, sizeof(perr), why);
    if (rc < 0 && *why == PROFILE_DECODE_SOURCE && z->fail == ZREAD_GZIP)
        return err_fmt(err, errlen, rc, "decompressing profile: %s", perr);
    if (rc < 0)
        err_fmt(err, errlen, rc, "%s", perr);
    return rc;
}

int profile_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    char perr[256];
    int rc;
    profile_decode_fail_t why = PROFILE_DECODE_OTHER;
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        zread_t z;
        zread_mem(&z, data, len, PROFILE_MAX_INFLATED);
        rc = decode_src(&z, NULL, out, perr, sizeof(perr), &why);
        zread_close(&z);
        if (proto_final(rc, why))
            return rc < 0 ? err_fmt(err, errlen, rc, "%s", perr) : 0;
        /* A gzip'd legacy profile (rare, small): inflated whole. */
        uint8_t *raw;
        size_t rawlen;
        char zerr[200];
        rc = profile_gunzip(data, len, PROFILE_MAX_INFLATED, &raw, &rawlen, zerr, sizeof(zerr));
        if (rc < 0)
            return err_fmt(err, errlen, rc, "decompressing profile: %s", zerr);
        rc = parse_legacy(raw, rawlen, perr, out, err, errlen);
        free(raw);
        return rc;
    }
    bool concat;
    rc = profile_decode_proto_concat(data, len, out, perr, sizeof(perr), &concat);
    if (proto_final(rc, concat ? PROFILE_DECODE_CONCAT : PROFILE_DECODE_OTHER))
        return rc < 0 ? err_fmt(err, errlen, rc, "%s", perr) : 0;
    return parse_legacy(data, len, perr, out, err, errlen);
}

/* Reads the whole file into a new buffer: 0 or a negative errno. */
static int read_all(int fd, uint8_t **out, size_t *outlen)
{
    struct stat st;
    size_t cap = 1 << 16;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1;
    uint8_t *buf = malloc(cap);
    size_t n = 0;
    int rc = 0;
    if (!buf)
        rc = -ENOMEM;
    while (rc == 0) {
        if (n == cap) {
            if (cap > PROFILE_MAX_INFLATED) {
                rc = -EFBIG;
                break;
            }
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
        } else if (r == 0) {
            break;
        } else {
            n += (size_t)r;
        }
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

int profile_read_file(const char *path, profile_t **out, char *err, size_t errlen)
{
    return profile_read_file_with(path, NULL, out, err, errlen);
}

int profile_read_file_with(const char *path, const profile_inflater_t *inflater,
                           profile_t **out, char *err, size_t errlen)
{
    return profile_read_file_reuse(path, inflater, NULL, out, err, errlen);
}

int profile_read_file_reuse(const char *path, const profile_inflater_t *inflater,
                            profile_t *reuse, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        profile_free(reuse);
        return err_fmt(err, errlen, -e, "%s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size > PROFILE_MAX_INFLATED) {
        profile_free(reuse);
        close(fd);
        return err_fmt(err, errlen, -EFBIG, "%s: file is larger than %zu MiB", path,
                       PROFILE_MAX_INFLATED >> 20);
    }
    /* The file is decoded as it is read (and inflated): holding it whole,
     * and its inflated bytes, doubled the peak memory of a large one. */
    zread_t z;
    char perr[512];
    profile_decode_fail_t why = PROFILE_DECODE_OTHER;
    int rc = zread_fd(&z, fd, PROFILE_MAX_INFLATED, perr, sizeof(perr));
    zread_t piped;
    if (rc < 0) {
        profile_free(reuse);
        why = PROFILE_DECODE_SOURCE;
    } else if (inflater && z.gz && inflater->start(inflater->ctx, &z, &piped) == 0) {
        rc = decode_src(&piped, reuse, out, perr, sizeof(perr), &why);
        inflater->end(inflater->ctx);
    } else {
        rc = decode_src(&z, reuse, out, perr, sizeof(perr), &why);
    }
    zread_close(&z);
    if (!proto_final(rc, why)) {
        /* Maybe a legacy profile (small, text): read whole and parsed. */
        uint8_t *buf;
        size_t n;
        if (lseek(fd, 0, SEEK_SET) == 0 && (rc = read_all(fd, &buf, &n)) == 0) {
            rc = profile_parse(buf, n, out, perr, sizeof(perr));
            free(buf);
        } else if (rc == 0) {
            rc = -errno; /* a pipe: what was read is gone */
            snprintf(perr, sizeof(perr), "%s", strerror(-rc));
        } else {
            snprintf(perr, sizeof(perr), "%s", rc == -EFBIG ? "file is too large" : strerror(-rc));
        }
    }
    close(fd);
    if (rc < 0)
        err_fmt(err, errlen, rc, "%s: %s", path, perr);
    return rc;
}
