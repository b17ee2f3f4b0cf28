/* decode_peak — reads one profile with the format library
 * (profile_read_file) and prints what that cost in memory, in KB:
 *
 *   before HWM_BEFORE after RSS_AFTER peak HWM_AFTER samples N locations N
 *
 * HWM is the process's peak resident set (VmHWM), RSS_AFTER its resident
 * set once the profile is decoded (the decoded structures and what the
 * program held before): peak - after is what decoding held beyond its
 * result. Exit 1 with the decoder's message if the profile is refused. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/parse.h"

/* A field of /proc/self/status in KB, -1 if missing. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: decode_peak PROFILE\n");
        return 2;
    }
    /* glibc's mmap threshold slides up as mapped blocks are freed, after
     * which growing a large array copies it: fixed, the peak measures
     * the decoder, not malloc's history. */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    long before = status_kb("VmHWM");
    profile_t *p;
    char err[512];
    if (profile_read_file(argv[1], &p, err, sizeof(err)) < 0) {
        fprintf(stderr, "decode_peak: %s\n", err);
        return 1;
    }
    long after = status_kb("VmRSS"), peak = status_kb("VmHWM");
    printf("before %ld after %ld peak %ld samples %zu locations %zu\n", before, after, peak,
           p->n_samples, p->n_locations);
    profile_free(p);
    return 0;
}
