/* zread.h — the bytes of a profile as a stream, read in pieces from memory
 * or a file descriptor and gunzipped when they are gzip (sniffed: 1f 8b),
 * so that a decoder never holds the whole file nor the whole inflated
 * profile (a 17 MB gzip file inflates to 70 MB).
 *
 * gzip follows Go's reader: several members are concatenated; anything
 * else after a member is an error. The inflated size is bounded by the
 * caller's limit (gzip bombs stop there), a raw file's size too.
 *
 * Untrusted bytes: every failure is a negative errno plus ONE line in the
 * caller's buffer, worded as profile_gunzip's (decode.h). A zread_t belongs
 * to one thread; no global state.
 */
#ifndef CPROF_PROFILE_ZREAD_H
#define CPROF_PROFILE_ZREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct z_stream_s; /* zlib's, kept out of this header: a build without
                    * zlib (musl) compiles parse.c, which includes it */

/* What failed, for the caller's wording: the file's reading (an errno
 * from read(2), or a raw file over the limit) or the gzip data. */
typedef enum { ZREAD_OK, ZREAD_IO, ZREAD_GZIP } zread_fail_t;

/* Bytes another reader gives (zread_pull): zread_read's contract, with
 * *fail set on failure. */
typedef ssize_t (*zread_pull_fn)(void *ctx, uint8_t *buf, size_t n, zread_fail_t *fail,
                                 char *err, size_t errlen);

typedef struct zread {
    /* input: memory (fd < 0) or a file read through ibuf */
    const uint8_t *mem;
    size_t memlen;
    int fd;
    uint8_t *ibuf;     /* the file's bytes not yet inflated (gzip) */
    size_t ilen, ipos; /* bytes in ibuf, bytes of them consumed */
    bool ieof;         /* the file is read to its end */
    size_t in;         /* input bytes consumed so far (gzip offsets) */
    size_t inlen;      /* input bytes read so far */
    /* output */
    bool gz, zinit, zdone; /* gzip; inflate set up; last member ended */
    struct z_stream_s *z; /* inflate's state, made at the first read */
    size_t limit; /* most bytes produced; one more is an error */
    size_t out;   /* bytes produced so far */
    zread_fail_t fail;
    zread_pull_fn pull; /* NULL, or where every byte comes from */
    void *pull_ctx;
} zread_t;

/* Over len bytes of memory (kept by the caller until zread_close). */
void zread_mem(zread_t *z, const uint8_t *data, size_t len, size_t limit);

/* Over an open file (kept open by the caller); reads its first bytes to
 * sniff gzip. 0, or a negative errno with a message (fail: ZREAD_IO). */
int zread_fd(zread_t *z, int fd, size_t limit, char *err, size_t errlen);

/* Over what pull gives (another zread_t read on a second thread, say). */
void zread_pull(zread_t *z, zread_pull_fn pull, void *ctx);

/* Up to n bytes into buf: how many (n only at the end falls short: a
 * short count is followed by 0), 0 at the end, or a negative errno with a
 * message (z->fail says what failed; later calls fail again). */
ssize_t zread_read(zread_t *z, uint8_t *buf, size_t n, char *err, size_t errlen);

void zread_close(zread_t *z);

#endif
