// links: report
/* test_report.c — value formatting (pprof's measurement package), the
 * time layouts, and whole text reports of a small profile compared with
 * what go tool pprof prints for the same data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/report/commands.h"
#include "tool/graph/measure.h"
#include "tool/report/report.h"
#include "unit/report_run.h"

static void test_scaled_labels(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(measure_scaled_label(b, sizeof(b), 67108864, "bytes", "minimum"), "64MB");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 16783360, "bytes", "MB"), "16.01MB");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 44964 * 1024, "bytes", "kB"), "44964kB");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 0, "bytes", "MB"), "0");
    assert_string_equal(measure_scaled_label(b, sizeof(b), -1536, "bytes", "auto"), "-1.50kB");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 2990000000, "nanoseconds", "ms"),
                        "2990ms");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 201012, "count", "minimum"), "201012");
    assert_string_equal(measure_label(b, sizeof(b), 3113000000, "nanoseconds"), "3.11s");
    assert_string_equal(measure_scaled_label(b, sizeof(b), 5, "widgets", "minimum"), "5");
}

static void test_percentages(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(measure_percentage(b, sizeof(b), 100, 100), "  100%");
    assert_string_equal(measure_percentage(b, sizeof(b), 7624, 10000), "76.24%");
    assert_string_equal(measure_percentage(b, sizeof(b), 4, 44964), "0.0089%");
    assert_string_equal(measure_percentage(b, sizeof(b), 5, 1000), "  0.5%");
    assert_string_equal(measure_percentage(b, sizeof(b), 0, 1000), "    0%");
    assert_string_equal(measure_percentage(b, sizeof(b), 1, 0), "    0%");
}

static void test_durations(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(measure_duration_string(b, sizeof(b), 3113456789), "3.113456789s");
    assert_string_equal(measure_duration_string(b, sizeof(b), 90000000000), "1m30s");
    assert_string_equal(measure_duration_string(b, sizeof(b), 1500), "1.5\xc2\xb5s");
    assert_string_equal(measure_duration_string(b, sizeof(b), 250000000), "250ms");
    assert_string_equal(measure_duration_string(b, sizeof(b), 0), "0s");
    assert_string_equal(measure_duration_string(b, sizeof(b), 3723000000000), "1h2m3s");
}

static void test_times(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    char b[128];
    /* 2026-11-21 09:14:27.775749292 UTC */
    int64_t t = 1795252467775749292LL;
    assert_string_equal(report_time_header(t, b, sizeof(b)), "Nov 21, 2026 at 9:14am (UTC)");
    assert_string_equal(report_time_string(t, b, sizeof(b)),
                        "2026-11-21 09:14:27.775749292 +0000 UTC");
    assert_string_equal(report_time_header(1700000000000000000LL, b, sizeof(b)),
                        "Nov 14, 2023 at 10:13pm (UTC)");
}

/* A Go-CPU-like profile: samples/count, cpu/nanoseconds; main -> a (2x)
 * and main -> b. */
static profile_t *cpu_profile(void)
{
    profile_t *p = profile_new();
    profile_add_sample_type(p, "samples", "count");
    profile_add_sample_type(p, "cpu", "nanoseconds");
    p->period_type = (profile_value_type_t){profile_intern(p, "cpu"),
                                            profile_intern(p, "nanoseconds")};
    p->period = 10000000;
    p->duration_nanos = 3110000000;
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->filename = profile_intern(p, "/tmp/cpugo");
    m->has_functions = true;
    const char *names[] = {"main.main", "main.hotLoopA", "main.hotLoopB"};
    for (int i = 0; i < 3; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = (uint64_t)i + 1;
        f->name = f->system_name = profile_intern(p, names[i]);
        f->filename = profile_intern(p, "cpugo/main.go");
        profile_line_t l = {(uint64_t)i + 1, 10 + i};
        profile_location_t *loc = profile_add_location(p, &l, 1);
        loc->id = (uint64_t)i + 1;
        loc->mapping_id = 1;
        loc->address = 0x1000 + (uint64_t)i;
    }
    uint64_t sa[] = {2, 1}, sb[] = {3, 1};
    int64_t va[] = {200, 2000000000}, vb[] = {99, 990000000};
    profile_add_sample(p, sa, 2, va);
    profile_add_sample(p, sb, 2, vb);
    profile_index(p);
    return p;
}

static char *run(profile_t *p, const char *cmd, const char *sym)
{
    char err[256];
    config_t cfg;
    config_default(&cfg);
    cfg.nodecount = 0;
    if (strcmp(cmd, "peek") == 0)
        cfg.nodefraction = cfg.edgefraction = 0;
    rx_t *rx = sym ? rx_compile(sym, err, sizeof(err)) : NULL;
    char *buf = report_run(p, cmd, report_generate, &cfg, 1, "cpu", "nanoseconds", rx);
    rx_free(rx);
    return buf;
}

static void test_top(void **state)
{
    (void)state;
    profile_t *p = cpu_profile();
    char *out = run(p, "top", NULL);
    assert_string_equal(out,
                        "File: cpugo\n"
                        "Type: cpu\n"
                        "Duration: 3.11s, Total samples = 2990ms (96.14%)\n"
                        "Showing nodes accounting for 2990ms, 100% of 2990ms total\n"
                        "      flat  flat%   sum%        cum   cum%\n"
                        "    2000ms 66.89% 66.89%     2000ms 66.89%  main.hotLoopA\n"
                        "     990ms 33.11%   100%      990ms 33.11%  main.hotLoopB\n"
                        "         0     0%   100%     2990ms   100%  main.main\n");
    free(out);
    profile_free(p);
}

static void test_peek_and_traces(void **state)
{
    (void)state;
    profile_t *p = cpu_profile();
    char *out = run(p, "peek", "main\\.main");
    const char *want =
        "File: cpugo\n"
        "Type: cpu\n"
        "Duration: 3.11s, Total samples = 2990ms (96.14%)\n"
        "Showing nodes accounting for 2990ms, 100% of 2990ms total\n"
        "----------------------------------------------------------+-------------\n"
        "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t \n"
        "----------------------------------------------------------+-------------\n"
        "         0     0%     0%     2990ms   100%                | main.main\n"
        "                                            2000ms 66.89% |   main.hotLoopA\n"
        "                                             990ms 33.11% |   main.hotLoopB\n"
        "----------------------------------------------------------+-------------\n";
    assert_string_equal(out, want);
    free(out);
    out = run(p, "traces", NULL);
    assert_non_null(strstr(out, "-----------+-------------------------------------------------------\n"
                                "        2s   main.hotLoopA\n"
                                "             main.main\n"));
    free(out);
    profile_free(p);
}

static void test_raw(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    profile_t *p = cpu_profile();
    char *out = run(p, "raw", NULL);
    assert_string_equal(out, "PeriodType: cpu nanoseconds\n"
                             "Period: 10000000\n"
                             "Duration: 3.11\n"
                             "Samples:\n"
                             "samples/count cpu/nanoseconds\n"
                             "        200 2000000000: 2 1 \n"
                             "         99  990000000: 3 1 \n"
                             "Locations\n"
                             "     1: 0x0 M=1 main.main :0 s=0\n"
                             "     2: 0x0 M=1 main.hotLoopA :0 s=0\n"
                             "     3: 0x0 M=1 main.hotLoopB :0 s=0\n"
                             "Mappings\n"
                             "1: 0x0/0x0/0x0 /tmp/cpugo  [FN]\n");
    free(out);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaled_labels), cmocka_unit_test(test_percentages),
        cmocka_unit_test(test_durations),     cmocka_unit_test(test_times),
        cmocka_unit_test(test_top),           cmocka_unit_test(test_peek_and_traces),
        cmocka_unit_test(test_raw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
