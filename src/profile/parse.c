/* parse.c — a profile of any format: gzip sniffed, profile.proto tried
 * first, then the legacy parsers (see parse.h). */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "legacy.h"

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

int profile_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    uint8_t *raw = NULL;
    int rc;
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        size_t rawlen;
        char zerr[200];
        rc = profile_gunzip(data, len, PROFILE_MAX_INFLATED, &raw, &rawlen, zerr, sizeof(zerr));
        if (rc < 0)
            return err_fmt(err, errlen, rc, "decompressing profile: %s", zerr);
        data = raw;
        len = rawlen;
    }
    char perr[256];
    bool concat;
    rc = profile_decode_proto_concat(data, len, out, perr, sizeof(perr), &concat);
    if (rc == 0 || rc == -ENODATA || rc == -ENOMEM || concat) {
        if (rc < 0)
            err_fmt(err, errlen, rc, "%s", perr);
        free(raw);
        return rc;
    }
    char lerr[256];
    int lrc = legacy_parse(data, len, out, lerr, sizeof(lerr));
    bool text = looks_like_text(data, len);
    free(raw);
    if (lrc == 0)
        return 0;
    if (lrc == LEGACY_UNRECOGNIZED) {
        /* Text is no protobuf: its "wire errors" would only confuse. */
        if (text)
            return err_fmt(err, errlen, -EINVAL, "unrecognized profile format (neither "
                           "profile.proto nor a known legacy text profile)");
        return err_fmt(err, errlen, -EINVAL, "%s", perr);
    }
    return err_fmt(err, errlen, lrc, "%s", lerr);
}

int profile_read_file(const char *path, profile_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return err_fmt(err, errlen, -e, "%s: %s", path, strerror(e));
    }
    struct stat st;
    size_t cap = 1 << 16;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1;
    if (cap > PROFILE_MAX_INFLATED + 1) {
        close(fd);
        return err_fmt(err, errlen, -EFBIG, "%s: file is larger than %zu MiB", path,
                       PROFILE_MAX_INFLATED >> 20);
    }
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
    close(fd);
    if (rc < 0) {
        free(buf);
        return err_fmt(err, errlen, rc, "%s: %s", path,
                       rc == -EFBIG ? "file is too large" : strerror(-rc));
    }
    char perr[512];
    rc = profile_parse(buf, n, out, perr, sizeof(perr));
    free(buf);
    if (rc < 0)
        err_fmt(err, errlen, rc, "%s: %s", path, perr);
    return rc;
}
