/* gzstore.c — gzip of stored blocks (see gzstore.h). */
#include "gzstore.h"

#include "base/fdio.h"

#include <string.h>

#define BLOCK_MAX 65535 /* a stored block's LEN is 16 bits */
#define HEADER 10
#define BLOCK_HEADER 5
#define TRAILER 8

/* ID1 ID2, CM 8 (deflate), no flags, no time, XFL 0, OS 3 (Unix). */
static const uint8_t gzip_header[HEADER] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

uint32_t gzstore_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    /* Four bits at a time: 16 entries of the reflected polynomial
     * 0xedb88320's table, no table to build. */
    static const uint32_t t[16] = {
        0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
        0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
        0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
    };
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ t[crc & 15];
        crc = (crc >> 4) ^ t[crc & 15];
    }
    return ~crc;
}

/* BFINAL, BTYPE 00 (stored), then LEN and its complement, little-endian. */
static void block_header(uint8_t h[BLOCK_HEADER], size_t n, bool last)
{
    h[0] = last ? 1 : 0;
    h[1] = (uint8_t)n;
    h[2] = (uint8_t)(n >> 8);
    h[3] = (uint8_t)~n;
    h[4] = (uint8_t)(~n >> 8);
}

static void trailer(uint8_t t[TRAILER], const gzstore_t *g)
{
    for (int i = 0; i < 4; i++) {
        t[i] = (uint8_t)(g->crc >> (8 * i));
        t[4 + i] = (uint8_t)(g->isize >> (8 * i));
    }
}

int gzstore_write(gzstore_t *g, int fd, const uint8_t *in, size_t n, bool last)
{
    int rc = 0;
    if (!g->begun) {
        if ((rc = fdio_write_all(fd, gzip_header, HEADER, FDIO_STALL_MS)) < 0)
            return rc;
        g->begun = true;
    }
    g->crc = gzstore_crc32(g->crc, in, n);
    g->isize += (uint32_t)n;
    /* The final block is an empty one after the data: a caller streaming
     * its bytes does not know which piece is its last. */
    do {
        size_t k = n < BLOCK_MAX ? n : BLOCK_MAX;
        bool fin = last && k == n;
        uint8_t h[BLOCK_HEADER];
        if (k == 0 && !fin)
            break;
        block_header(h, k, fin);
        if ((rc = fdio_write_all(fd, h, BLOCK_HEADER, FDIO_STALL_MS)) < 0 ||
            (k && (rc = fdio_write_all(fd, in, k, FDIO_STALL_MS)) < 0))
            return rc;
        in += k;
        n -= k;
        if (fin) {
            uint8_t t[TRAILER];
            trailer(t, g);
            return fdio_write_all(fd, t, TRAILER, FDIO_STALL_MS);
        }
    } while (n > 0 || last);
    return 0;
}

size_t gzstore_bound(size_t n)
{
    return HEADER + (n / BLOCK_MAX + 1) * BLOCK_HEADER + n + TRAILER;
}

size_t gzstore_mem(const uint8_t *in, size_t n, uint8_t *out)
{
    gzstore_t g = {gzstore_crc32(0, in, n), (uint32_t)n, true};
    uint8_t *o = out;
    memcpy(o, gzip_header, HEADER);
    o += HEADER;
    do {
        size_t k = n < BLOCK_MAX ? n : BLOCK_MAX;
        block_header(o, k, k == n);
        if (k)
            memcpy(o + BLOCK_HEADER, in, k);
        o += BLOCK_HEADER + k;
        in += k;
        n -= k;
    } while (n > 0);
    trailer(o, &g);
    return (size_t)(o + TRAILER - out);
}
