/* report.h — text reports of a filtered work profile, laid out exactly as
 * pprof's internal/report prints them: the header lines (File, Build ID,
 * comments, Type, Time, Duration, Active filters, Showing nodes ...,
 * Dropped ..., Showing top ...), -top/-text, -tree/-peek, -traces; the
 * others (-list, -raw, -tags, -proto) live in their own files and share
 * this context. Report functions write to r->out and return 0 or a negative
 * errno with a message in err; they never exit. */
#ifndef CPROF_TOOL_REPORT_H
#define CPROF_TOOL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tool/report/commands.h"
#include "tool/graph/filter.h"
#include "tool/graph/graph.h"
#include "tool/report/options.h"
#include "tool/graph/rx.h"
#include "base/sbuf.h"
#include "tool/graph/work.h"

/* report_t (commands.h): one report being made. */
struct report {
    work_t *w;
    const command_t *cmd;
    const config_t *cfg;
    const rx_t *symbol; /* -list/-peek argument, or NULL */
    int value_index;
    int mean_index; /* -1 unless -mean */
    const char *sample_type; /* shown in "Type:", with "mean_" for -mean */
    const char *sample_unit;
    char output_unit[32]; /* "minimum" until a report picks one */
    double ratio;         /* 1 / divide_by */
    int64_t total;
    const char *const *filters; /* "focus=..." for "Active filters:" */
    size_t n_filters;
    const char *title; /* basename of the main binary, or NULL */
    const numunits_t *units;
    FILE *out;
};

/* pprof's computeTotal (diff-base aware). */
int64_t report_compute_total(const work_t *w, int value_index, int mean_index);

/* Formats a value in the report's output unit. buf: 64 bytes. */
const char *report_format_value(const report_t *r, int64_t v, char *buf, size_t n);

/* Header lines (File:, Build ID:, comments, Type:, Time:, Duration:),
 * each followed by a newline, appended to out. */
void report_profile_labels(const report_t *r, sbuf_t *out);

/* pprof's newTrimmedGraph and selectOutputUnit (sets r->output_unit).
 * visual: the call-graph variant (tags, entropy order, tags counted as
 * nodes, redundant residual edges removed). 0, or -ENOMEM with the
 * message in err. */
int report_trimmed_graph(report_t *r, bool visual, graph_t **g, trim_result_t *t, char *err,
                         size_t errlen);

/* pprof's reportLabels, each line '\n'-terminated, into out. full (graphs):
 * the profile labels even with compact_labels, and the closing "See
 * https://git.io/JfYMW ..." line. */
void report_graph_labels(const report_t *r, graph_t *g, const trim_result_t *t, bool full,
                         sbuf_t *out);

/* pprof's InlineLabel: "(inline)" when every call into node ni of g is
 * inlined, "(partial-inline)" when some are, else "". */
const char *report_inline_label(const graph_t *g, uint32_t ni);

/* Generates r->cmd's report with the command's renderer. 0 or negative
 * errno (message in err). */
int report_generate(report_t *r, char *err, size_t errlen);

/* Individual printers. */
int report_text(report_t *r, char *err, size_t errlen);
int report_tree(report_t *r, char *err, size_t errlen);
int report_traces(report_t *r, char *err, size_t errlen);
int report_list(report_t *r, char *err, size_t errlen);   /* list.c */
int report_raw(report_t *r, char *err, size_t errlen);    /* raw.c */
int report_tags(report_t *r, char *err, size_t errlen);   /* tags.c */
int report_comments(report_t *r, char *err, size_t errlen); /* tags.c */
int report_proto(report_t *r, char *err, size_t errlen);  /* export.c */

/* Go's time layouts for local time: "Jan 2, 2006 at 3:04pm (MST)" and
 * "2006-01-02 15:04:05.999999999 -0700 MST". */
const char *report_time_header(int64_t nanos, char *buf, size_t n);
const char *report_time_string(int64_t nanos, char *buf, size_t n);

#endif
