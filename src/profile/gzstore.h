/* gzstore.h — gzip without compression, for a build without zlib (the musl
 * runtime, `make musl`): one gzip member (RFC 1952) whose deflate stream
 * is stored blocks (RFC 1951, 3.2.4), which every gzip reader (Go's
 * compress/gzip, zlib) inflates. Larger than compressed output by 5 bytes
 * per 64 KiB, and as cheap as a copy.
 *
 * No allocation, no lock, no stdio; a gzstore_t belongs to one writer. */
#ifndef CPROF_PROFILE_GZSTORE_H
#define CPROF_PROFILE_GZSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t crc;   /* CRC-32 of the bytes so far */
    uint32_t isize; /* their count, modulo 2^32 */
    bool begun;     /* the gzip header is out */
} gzstore_t;

/* Writes in[0..n) to fd as stored blocks, the gzip header first; last ends
 * the member (final block, CRC and size). 0, or a negative errno. */
int gzstore_write(gzstore_t *g, int fd, const uint8_t *in, size_t n, bool last);

/* The bytes a whole member of n bytes of input takes. */
size_t gzstore_bound(size_t n);

/* Writes a whole member of in[0..n) to out (gzstore_bound(n) bytes);
 * returns the bytes written. */
size_t gzstore_mem(const uint8_t *in, size_t n, uint8_t *out);

/* CRC-32 (IEEE, as gzip's) of p[0..n) continued from crc (0 to start). */
uint32_t gzstore_crc32(uint32_t crc, const uint8_t *p, size_t n);

#endif
