/* profgen — writes a deterministic random profile (gzipped profile.proto)
 * for tests and benchmarks.
 *
 *   profgen [-seed N] [-samples N] [-locations N] [-functions N]
 *           [-mappings N] [-depth MIN-MAX] [-labels N] [-inline PCT]
 *           [-types N] [-sparse] [-zeros] [-large] [-shape NAME]
 *           [-sample_seed N] [-raw] -o FILE
 *
 * -large gives the shape of the fixture large.pb.gz (200,000 samples,
 * 50,000 locations, 20,000 functions, depth 20-60); -shape one of the
 * bench's shapes (gen.h: samples, strings, deep, snapshot, large); later
 * options still override either. -sample_seed N draws the samples from
 * their own stream: the profiles of one -seed and several -sample_seed
 * share mappings, functions and locations, like snapshots of one program.
 * -raw writes uncompressed protobuf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/gen.h"

static void usage(void)
{
    fprintf(stderr, "usage: profgen [-seed N] [-samples N] [-locations N] [-functions N] "
                    "[-mappings N] [-depth MIN-MAX] [-labels N] [-inline PCT] [-types N] "
                    "[-sparse] [-zeros] [-large] [-shape NAME] [-sample_seed N] [-raw] "
                    "-o FILE\n");
    exit(2);
}

static unsigned long long num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s)
        usage();
    return v;
}

int main(int argc, char **argv)
{
    profgen_opts_t o;
    profgen_defaults(&o, 1);
    const char *out = NULL;
    int raw = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && (v || (usage(), 0)) && ++i)
        if (strcmp(a, "-large") == 0) {
            uint64_t seed = o.seed;
            profgen_large(&o, seed);
        } else if (strcmp(a, "-sparse") == 0) {
            o.sparse_ids = true;
        } else if (strcmp(a, "-zeros") == 0) {
            o.zero_values = true;
        } else if (strcmp(a, "-raw") == 0) {
            raw = 1;
        } else if (OPT("-shape")) {
            if (profgen_shape(&o, v, o.seed) < 0)
                usage();
        } else if (OPT("-sample_seed")) {
            o.sample_seed = num(v);
        } else if (OPT("-seed")) {
            o.seed = num(v);
        } else if (OPT("-samples")) {
            o.samples = num(v);
        } else if (OPT("-locations")) {
            o.locations = num(v);
        } else if (OPT("-functions")) {
            o.functions = num(v);
        } else if (OPT("-mappings")) {
            o.mappings = num(v);
        } else if (OPT("-labels")) {
            o.labels = (unsigned)num(v);
        } else if (OPT("-inline")) {
            o.inline_pct = (unsigned)num(v);
        } else if (OPT("-types")) {
            o.sample_types = (unsigned)num(v);
        } else if (OPT("-depth")) {
            unsigned lo, hi;
            if (sscanf(v, "%u-%u", &lo, &hi) != 2 || lo > hi)
                usage();
            o.min_depth = lo;
            o.max_depth = hi;
        } else if (OPT("-o")) {
            out = v;
        } else {
            usage();
        }
#undef OPT
    }
    if (!out || (o.samples && o.min_depth > 0 && o.locations == 0))
        usage();
    profile_t *p = profgen_make(&o);
    if (!p) {
        fprintf(stderr, "profgen: out of memory\n");
        return 1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "profgen: %s: %s\n", out, strerror(errno));
        return 1;
    }
    int rc;
    if (raw) {
        pbuf_t b = {0};
        rc = profile_encode(p, &b);
        for (size_t off = 0; rc == 0 && off < b.len;) {
            ssize_t w = write(fd, b.data + off, b.len - off);
            if (w < 0 && errno != EINTR)
                rc = -errno;
            else if (w > 0)
                off += (size_t)w;
        }
        pbuf_free(&b);
    } else {
        rc = profile_write_fd(p, fd);
    }
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    profile_free(p);
    if (rc < 0) {
        fprintf(stderr, "profgen: %s: %s\n", out, strerror(-rc));
        return 1;
    }
    return 0;
}
