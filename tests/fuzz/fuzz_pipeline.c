/* fuzz_pipeline.c — libFuzzer harness: the tool's whole path from bytes to
 * reports, as `cprof -REPORT a b` takes it: the input decoded twice,
 * combined (unit scaling, merge) and checked (profile_check_sums), then
 * every report that reads nothing but the profile (not list/weblist/disasm,
 * which open the source and binary files a profile names) for each of its
 * first four sample types. Extreme values that crashed reports
 * (measure_scale's endless recursion on INT64_MIN, overflowing totals)
 * are in tests/fuzz/crashes/pipeline. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/parse.h"
#include "profile/merge.h"
#include "tool/fetch/combine.h"
#include "tool/driver/driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const reports[][2] = {
    {"top", NULL},  {"traces", NULL}, {"tree", NULL},   {"dot", NULL},   {"peek", "."},
    {"flame", NULL}, {"folded", NULL}, {"proto", NULL}, {"raw", NULL},  {"tags", NULL},
    {"comments", NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    profile_t *ps[2] = {NULL, NULL}, *p = NULL;
    if (profile_parse(data, size, &ps[0], err, sizeof(err)) < 0)
        return 0;
    if (profile_parse(data, size, &ps[1], err, sizeof(err)) < 0) {
        profile_free(ps[0]);
        return 0;
    }
    if (combine_profiles(ps, 2, &p, err, sizeof(err)) < 0)
        return 0;
    if (profile_check_sums(p, err, sizeof(err)) < 0) {
        profile_free(p);
        return 0;
    }
    FILE *out = fopen("/dev/null", "w"), *msgs = fopen("/dev/null", "w");
    size_t types = p->n_sample_types < 4 ? p->n_sample_types : 4;
    for (size_t t = 0; out && msgs && t < types; t++) {
        config_t cfg;
        config_default(&cfg);
        char idx[8];
        snprintf(idx, sizeof(idx), "%zu", t);
        if (config_set(&cfg, "sample_index", idx, err, sizeof(err)) == 0)
            for (size_t r = 0; r < sizeof(reports) / sizeof(reports[0]); r++)
                driver_report_with(p, reports[r][0], reports[r][1], &cfg, out, msgs, NULL, NULL);
        config_free(&cfg);
    }
    if (out)
        fclose(out);
    if (msgs)
        fclose(msgs);
    profile_free(p);
    return 0;
}
