/* report_run.h — for the unit tests of the report writers: one report of
 * profile p into a string, as the driver makes it (functions granularity,
 * value index vi named type/unit, the caller's config, which it frees). */
#ifndef CPROF_TEST_REPORT_RUN_H
#define CPROF_TEST_REPORT_RUN_H

#include "tool/report/commands.h"
#include "tool/report/report.h"

typedef int (*report_fn)(report_t *r, char *err, size_t errlen);

static char *report_run(profile_t *p, const char *cmd, report_fn fn, config_t *cfg, int vi,
                        const char *type, const char *unit, rx_t *symbol)
{
    char err[256];
    work_t *w;
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    filter_aggregate(w, true, true, false, false, false);
    numunits_t u = {0};
    report_t r = {0};
    r.w = w;
    r.cmd = command_find(cmd);
    r.cfg = cfg;
    r.symbol = symbol;
    r.value_index = vi;
    r.mean_index = -1;
    r.sample_type = type;
    r.sample_unit = unit;
    snprintf(r.output_unit, sizeof(r.output_unit), "minimum");
    r.ratio = 1;
    r.total = report_compute_total(w, vi, -1);
    r.units = &u;
    char *buf;
    size_t len;
    r.out = open_memstream(&buf, &len);
    assert_int_equal(fn(&r, err, sizeof(err)), 0);
    fclose(r.out);
    work_free(w);
    config_free(cfg);
    return buf;
}

#endif
