/* profdump — reads profiles with the format library and prints or writes
 * what go tool pprof would make of them, for differential e2e tests:
 *
 *   profdump [-raw | -proto OUT | -check | -roundtrip | -nomerge]
 *            [-base FILE]... [-diff_base FILE]... [-normalize] [-addresses] FILE...
 *
 * Like pprof's driver: every source is read (protobuf or legacy), a source
 * without mappings gets one empty mapping for all its locations, the
 * sources are merged (even a single one: that compacts it), the bases are
 * merged likewise and applied (-base subtracts; -diff_base also labels the
 * base samples pprof::base=true), and samples without locations are dropped
 * (as every pprof report does). Then:
 *   -raw (default)  print like "go tool pprof -raw" (Go's Profile.String())
 *   -proto OUT      write the result as gzipped profile.proto
 *   -check          only report success or the error
 *   -nomerge        print the first file as decoded, without merging
 *   -roundtrip      check decode(encode(p)) == p for every file
 * -addresses drops every location's lines and the functions first: the
 * address-only profile a profiler that names nothing writes (cprof's
 * runtime names functions; tests of symbolization need one without).
 * Errors go to stderr, one line, exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/gen.h"
#include "profile/decode.h"
#include "profile/parse.h"
#include "profile/merge.h"

static void die(const char *msg)
{
    fprintf(stderr, "profdump: %s\n", msg);
    exit(1);
}

static profile_t *load(const char *path)
{
    profile_t *p;
    char err[512];
    if (profile_read_file(path, &p, err, sizeof(err)) < 0)
        die(err);
    /* pprof's locateBinaries: a profile without mappings gets one. */
    if (p->n_mappings == 0 && p->n_locations > 0) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m)
            die("out of memory");
        m->id = 1;
        for (size_t i = 0; i < p->n_locations; i++)
            p->locations[i].mapping_id = 1;
        if (profile_index(p) < 0)
            die("out of memory");
    }
    return p;
}

static profile_t *load_all(char **paths, size_t n)
{
    profile_t **ps = calloc(n, sizeof(*ps));
    for (size_t i = 0; i < n; i++)
        ps[i] = load(paths[i]);
    profile_t *out;
    char err[512];
    if (profile_merge(ps, n, &out, err, sizeof(err)) < 0)
        die(err);
    for (size_t i = 0; i < n; i++)
        profile_free(ps[i]);
    free(ps);
    return out;
}

int main(int argc, char **argv)
{
    enum { RAW, PROTO, CHECK, NOMERGE, ROUNDTRIP } mode = RAW;
    const char *out = NULL;
    char **files = calloc((size_t)argc, sizeof(*files));
    char **bases = calloc((size_t)argc, sizeof(*bases));
    size_t nf = 0, nb = 0;
    bool diff = false, normalize = false, addresses = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-raw") == 0) {
            mode = RAW;
        } else if (strcmp(a, "-proto") == 0 && i + 1 < argc) {
            mode = PROTO;
            out = argv[++i];
        } else if (strcmp(a, "-check") == 0) {
            mode = CHECK;
        } else if (strcmp(a, "-nomerge") == 0) {
            mode = NOMERGE;
        } else if (strcmp(a, "-roundtrip") == 0) {
            mode = ROUNDTRIP;
        } else if (strcmp(a, "-normalize") == 0) {
            normalize = true;
        } else if (strcmp(a, "-addresses") == 0) {
            addresses = true;
        } else if ((strcmp(a, "-base") == 0 || strcmp(a, "-diff_base") == 0) && i + 1 < argc) {
            diff = diff || strcmp(a, "-diff_base") == 0;
            bases[nb++] = argv[++i];
        } else if (a[0] == '-') {
            die("usage: profdump [-raw|-proto OUT|-check|-nomerge|-roundtrip] [-base F]... "
                "[-diff_base F]... [-normalize] [-addresses] FILE...");
        } else {
            files[nf++] = argv[i];
        }
    }
    if (nf == 0)
        die("no profile given");
    char err[512];
    if (mode == ROUNDTRIP) {
        for (size_t i = 0; i < nf; i++) {
            profile_t *p;
            if (profile_read_file(files[i], &p, err, sizeof(err)) < 0)
                die(err);
            pbuf_t b = {0};
            profile_t *q;
            if (profile_encode(p, &b) < 0)
                die("out of memory");
            if (profile_decode_proto(b.data, b.len, &q, err, sizeof(err)) < 0)
                die(err);
            char why[300];
            if (!profgen_equal(p, q, why, sizeof(why))) {
                fprintf(stderr, "profdump: %s: round trip differs: %s\n", files[i], why);
                return 1;
            }
            pbuf_t b2 = {0};
            if (profile_encode(q, &b2) < 0)
                die("out of memory");
            if (b.len != b2.len || memcmp(b.data, b2.data, b.len) != 0) {
                fprintf(stderr, "profdump: %s: re-encoding differs\n", files[i]);
                return 1;
            }
            printf("%s: ok (%zu samples, %zu locations, %zu functions, %zu mappings)\n",
                   files[i], p->n_samples, p->n_locations, p->n_functions, p->n_mappings);
            pbuf_free(&b);
            pbuf_free(&b2);
            profile_free(p);
            profile_free(q);
        }
        return 0;
    }
    if (mode == NOMERGE) {
        profile_t *p = load(files[0]);
        profgen_print_raw(p, stdout);
        profile_free(p);
        return 0;
    }
    profile_t *p = load_all(files, nf);
    if (nb) {
        profile_t *base = load_all(bases, nb), *r;
        if (profile_apply_base(p, base, diff, normalize, &r, err, sizeof(err)) < 0)
            die(err);
        profile_free(p);
        profile_free(base);
        p = r;
    }
    /* Reports drop samples without locations (pprof's FilterSamplesByName
     * keeps only samples with a "focused" location, even with no -focus). */
    size_t kept = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        if (p->samples[i].n_location_ids)
            p->samples[kept++] = p->samples[i];
    p->n_samples = kept;
    if (addresses) {
        for (size_t i = 0; i < p->n_locations; i++) {
            p->locations[i].lines = NULL;
            p->locations[i].n_lines = 0;
        }
        p->n_functions = 0;
        for (size_t i = 0; i < p->n_mappings; i++) {
            profile_mapping_t *m = &p->mappings[i];
            m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = false;
        }
    }
    if (mode == RAW) {
        profgen_print_raw(p, stdout);
    } else if (mode == PROTO) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || profile_write_fd(p, fd) < 0 || close(fd) < 0) {
            snprintf(err, sizeof(err), "%s: %s", out, strerror(errno));
            die(err);
        }
    } else {
        printf("ok: %zu samples\n", p->n_samples);
    }
    profile_free(p);
    free(files);
    free(bases);
    return 0;
}
