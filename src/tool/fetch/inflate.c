/* inflate.c — a profile's gzip inflated ahead of its decoder (see
 * inflate.h). */
#include "tool/fetch/inflate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpus.h"
#include "profile/zread.h"
#include "tool/fetch/ahead.h"

/* Under malloc's fixed mmap threshold (128 KiB): a freed block is the
 * next one's, not a new mapping to fault in. */
#define BLOCK ((size_t)64 << 10)
#define DEPTH 4

/* One block as the worker read it. */
typedef struct {
    uint8_t *buf;   /* r bytes; NULL when r <= 0 */
    ssize_t r;      /* zread_read's */
    zread_fail_t fail;
    char err[256];
} block_t;

struct inflater {
    zread_t *src; /* the file, read by the worker only */
    bool ended;   /* the worker read the end or a failure (worker's) */
    ahead_t *a;
    block_t cur;  /* the block being given (decoder's) */
    size_t pos;   /* bytes of cur given */
    bool have;    /* cur is taken and not used up; the end or a failure stays */
};

/* The worker: the next block of the file. Past the end, more of it. */
static void read_block(void *ctx, size_t i, void *slot)
{
    (void)i;
    inflater_t *in = ctx;
    block_t *b = slot;
    b->buf = NULL;
    b->fail = ZREAD_OK;
    b->err[0] = '\0';
    if (in->ended) {
        b->r = 0;
        return;
    }
    if (!(b->buf = malloc(BLOCK))) {
        b->r = -ENOMEM;
        b->fail = ZREAD_IO;
        snprintf(b->err, sizeof(b->err), "%s", strerror(ENOMEM));
        in->ended = true;
        return;
    }
    b->r = zread_read(in->src, b->buf, BLOCK, b->err, sizeof(b->err));
    b->fail = in->src->fail;
    if (b->r <= 0) {
        free(b->buf);
        b->buf = NULL;
        in->ended = true;
    }
}

static void drop_block(void *slot)
{
    free(((block_t *)slot)->buf);
}

/* The decoder: up to n bytes from the blocks, as zread_read gives them
 * (n short only at the end; a failure after the bytes before it). */
static ssize_t pull(void *ctx, uint8_t *buf, size_t n, zread_fail_t *fail, char *err,
                    size_t errlen)
{
    inflater_t *in = ctx;
    size_t got = 0;
    while (got < n) {
        if (!in->have) {
            ahead_take(in->a, &in->cur);
            in->pos = 0;
            in->have = true;
        }
        if (in->cur.r <= 0) {
            if (got)
                break;
            if (in->cur.r < 0) {
                *fail = in->cur.fail;
                snprintf(err, errlen, "%s", in->cur.err);
            }
            return in->cur.r;
        }
        size_t k = (size_t)in->cur.r - in->pos;
        if (k > n - got)
            k = n - got;
        memcpy(buf + got, in->cur.buf + in->pos, k);
        in->pos += k;
        got += k;
        if (in->pos == (size_t)in->cur.r) {
            free(in->cur.buf);
            in->cur.buf = NULL;
            in->have = false;
        }
    }
    return (ssize_t)got;
}

static int start(void *ctx, zread_t *z, zread_t *out)
{
    inflater_t *in = ctx;
    memset(in, 0, sizeof(*in));
    in->src = z;
    if (ahead_start(&in->a, SIZE_MAX, sizeof(block_t), DEPTH, 1, false, read_block, in) < 0)
        return -ENOMEM;
    zread_pull(out, pull, in);
    return 0;
}

static void end(void *ctx)
{
    inflater_t *in = ctx;
    ahead_end(in->a, drop_block);
    free(in->cur.buf);
    memset(in, 0, sizeof(*in));
}

inflater_t *inflater_new(profile_inflater_t *out)
{
    if (cpus_usable() < 2)
        return NULL;
    inflater_t *in = calloc(1, sizeof(*in));
    if (in)
        *out = (profile_inflater_t){start, end, in};
    return in;
}

void inflater_free(inflater_t *in)
{
    free(in);
}
