/* options.c — the configuration table and its text conversions. */
#include "tool/report/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const sort_choices[] = {"cum", "flat", NULL};
static const char *const gran_choices[] = {"functions", "filefunctions", "files", "lines",
                                           "addresses", NULL};

#define F(n, k, field, ch, h) {n, k, offsetof(config_t, field), ch, h}
static const opt_field_t fields[] = {
    F("output", OPT_STRING, output, NULL, "Output filename for file-based outputs\n"),
    F("call_tree", OPT_BOOL, call_tree, NULL,
      "Create a context-sensitive call tree\n"
      "Treat locations reached through different paths as separate.\n"),
    F("relative_percentages", OPT_BOOL, relative_percentages, NULL,
      "Show percentages relative to focused subgraph\n"
      "If unset, percentages are relative to the whole profile before focusing.\n"),
    F("unit", OPT_STRING, unit, NULL,
      "Measurement units to display\n"
      "Scale the sample values to this unit (seconds, milliseconds, megabytes, ...).\n"
      "\"minimum\" picks one unit for the report, \"auto\" scales each value.\n"),
    F("compact_labels", OPT_BOOL, compact_labels, NULL, "Show minimal headers"),
    F("source_path", OPT_STRING, source_path, NULL, "Search path for source files"),
    F("trim_path", OPT_STRING, trim_path, NULL, "Path to trim from source paths before search"),
    F("intel_syntax", OPT_BOOL, intel_syntax, NULL,
      "Show assembly in Intel syntax\nOnly for disasm and weblist.\n"),
    F("mean", OPT_BOOL, mean, NULL,
      "Average sample value over first value (count)\n"
      "For memory profiles, the average size of an allocation.\n"),
    F("sample_index", OPT_STRING, sample_index, NULL,
      "Sample value to report (0-based index or name)\n"
      "Profiles hold several values per sample; pick one by index or type name.\n"),
    F("divide_by", OPT_FLOAT, divide_by, NULL,
      "Ratio to divide all samples before visualization\n"
      "Divide every value by a constant, e.g. the number of processors.\n"),
    F("normalize", OPT_BOOL, normalize, NULL, "Scales profile based on the base profile.\n"),
    F("sort", OPT_CHOICE, sort, sort_choices, ""),
    F("tagroot", OPT_STRING, tagroot, NULL,
      "Adds pseudo stack frames for labels key/value pairs at the callstack root.\n"),
    F("tagleaf", OPT_STRING, tagleaf, NULL,
      "Adds pseudo stack frames for labels key/value pairs at the callstack leaf.\n"),
    F("drop_negative", OPT_BOOL, drop_negative, NULL,
      "Ignore negative differences\nDo not show any locations with values <0.\n"),
    F("nodecount", OPT_INT, nodecount, NULL,
      "Max number of nodes to show\n"
      "Keeps the nodes with the highest values (after sorting).\n"),
    F("nodefraction", OPT_FLOAT, nodefraction, NULL, "Hide nodes below <f>*total"),
    F("edgefraction", OPT_FLOAT, edgefraction, NULL, "Hide edges below <f>*total"),
    F("trim", OPT_BOOL, trim, NULL,
      "Honor nodefraction/edgefraction/nodecount defaults\n"
      "Set to false to get the full profile, without any trimming.\n"),
    F("focus", OPT_STRING, focus, NULL,
      "Restricts to samples going through a node matching regexp\n"
      "Matching includes the function name, filename or object name.\n"),
    F("ignore", OPT_STRING, ignore, NULL,
      "Skips paths going through any nodes matching regexp\n"
      "Matching includes the function name, filename or object name.\n"),
    F("prune_from", OPT_STRING, prune_from, NULL,
      "Drops any functions below the matched frame.\n"),
    F("hide", OPT_STRING, hide, NULL,
      "Skips nodes matching regexp\n"
      "Other nodes of the samples through them are still shown.\n"),
    F("show", OPT_STRING, show, NULL, "Only show nodes matching regexp\n"),
    F("show_from", OPT_STRING, show_from, NULL,
      "Drops functions above the highest matched frame.\n"),
    F("tagfocus", OPT_STRING, tagfocus, NULL,
      "Restricts to samples with tags in range or matched by regexp\n"
      "Use name=value to restrict to one tag. Numeric: 1kb, 1kb:10kb, bytes=32mb:\n"),
    F("tagignore", OPT_STRING, tagignore, NULL,
      "Discard samples with tags in range or matched by regexp\n"
      "Use name=value to restrict to one tag. Numeric: 1kb, 1kb:10kb, bytes=32mb:\n"),
    F("tagshow", OPT_STRING, tagshow, NULL,
      "Only consider tags matching this regexp\n"),
    F("taghide", OPT_STRING, taghide, NULL, "Skip tags matching this regexp\n"),
    F("noinlines", OPT_BOOL, noinlines, NULL,
      "Ignore inlines.\nAttributes inlined functions to their first out-of-line caller.\n"),
    F("granularity", OPT_CHOICE, granularity, gran_choices, ""),
};
#undef F
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static const struct {
    const char *name, *help;
} choice_help[] = {
    {"flat", "Sort entries based on own weight\n"},
    {"cum", "Sort entries based on cumulative weight\n"},
    {"functions", "Aggregate at the function level.\nIgnores the file of the function.\n"},
    {"filefunctions", "Aggregate at the function level.\nKeeps the file of the function.\n"},
    {"files", "Aggregate at the file level."},
    {"lines", "Aggregate at the source code line level."},
    {"addresses", "Aggregate at the address level.\nIncludes functions' addresses.\n"},
};

const opt_field_t *config_fields(size_t *n)
{
    *n = N_FIELDS;
    return fields;
}

const opt_field_t *config_field(const char *name, bool *is_choice)
{
    if (is_choice)
        *is_choice = false;
    for (size_t i = 0; i < N_FIELDS; i++) {
        if (strcmp(fields[i].name, name) == 0)
            return &fields[i];
        if (fields[i].choices)
            for (const char *const *c = fields[i].choices; *c; c++)
                if (strcmp(*c, name) == 0) {
                    if (is_choice)
                        *is_choice = true;
                    return &fields[i];
                }
    }
    return NULL;
}

const char *config_help(const char *name)
{
    for (size_t i = 0; i < sizeof(choice_help) / sizeof(choice_help[0]); i++)
        if (strcmp(choice_help[i].name, name) == 0)
            return choice_help[i].help;
    bool ch;
    const opt_field_t *f = config_field(name, &ch);
    return f && !ch ? f->help : NULL;
}

#define STR(c, off) ((char **)((char *)(c) + (off)))

int config_set_str(char **field, const char *value)
{
    char *d = strdup(value ? value : "");
    if (!d)
        return -ENOMEM;
    free(*field);
    *field = d;
    return 0;
}

void config_default(config_t *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].kind == OPT_STRING || fields[i].kind == OPT_CHOICE)
            config_set_str(STR(c, fields[i].offset), "");
    config_set_str(&c->unit, "minimum");
    config_set_str(&c->sort, "flat");
    config_set_str(&c->granularity, "functions");
    c->nodecount = -1;
    c->nodefraction = 0.005;
    c->edgefraction = 0.001;
    c->trim = true;
    c->divide_by = 1.0;
}

int config_copy(config_t *dst, const config_t *src)
{
    *dst = *src;
    int rc = 0;
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].kind == OPT_STRING || fields[i].kind == OPT_CHOICE) {
            char **p = STR(dst, fields[i].offset);
            const char *v = *p;
            *p = NULL;
            if (config_set_str(p, v) < 0)
                rc = -ENOMEM;
        }
    return rc;
}

void config_free(config_t *c)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].kind == OPT_STRING || fields[i].kind == OPT_CHOICE) {
            free(*STR(c, fields[i].offset));
            *STR(c, fields[i].offset) = NULL;
        }
}

/* pprof's lenient booleans ("" is true). */
static int parse_bool(const char *v, bool *out)
{
    static const char *const t[] = {"true", "t", "yes", "y", "1", ""};
    static const char *const f[] = {"false", "f", "no", "n", "0"};
    for (size_t i = 0; i < 6; i++)
        if (strcasecmp(v, t[i]) == 0) {
            *out = true;
            return 0;
        }
    for (size_t i = 0; i < 5; i++)
        if (strcasecmp(v, f[i]) == 0) {
            *out = false;
            return 0;
        }
    return -EINVAL;
}

int config_set(config_t *c, const char *name, const char *value, char *err, size_t errlen)
{
    bool is_choice;
    const opt_field_t *f = config_field(name, &is_choice);
    if (!f) {
        snprintf(err, errlen, "unknown config field \"%s\"", name);
        return -EINVAL;
    }
    void *ptr = (char *)c + f->offset;
    if (is_choice) {
        /* "cum=true" style: Go's strconv.ParseBool decides. */
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        for (size_t i = 0; i < 6; i++)
            if (strcmp(value, yes[i]) == 0)
                return config_set_str(ptr, name);
        snprintf(err, errlen, "unknown config field \"%s\"", name);
        return -EINVAL;
    }
    switch (f->kind) {
    case OPT_CHOICE:
        for (const char *const *ch = f->choices; *ch; ch++)
            if (strcmp(*ch, value) == 0)
                return config_set_str(ptr, value);
        snprintf(err, errlen, "invalid \"%s\" value \"%s\"", f->name, value);
        return -EINVAL;
    case OPT_STRING:
        return config_set_str(ptr, value);
    case OPT_INT: {
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (!*value || *end || errno || v < -2147483648LL || v > 2147483647LL) {
            snprintf(err, errlen, "strconv.Atoi: parsing \"%s\": invalid syntax", value);
            return -EINVAL;
        }
        *(int *)ptr = (int)v;
        return 0;
    }
    case OPT_FLOAT: {
        char *end;
        double v = strtod(value, &end);
        if (!*value || *end) {
            snprintf(err, errlen, "strconv.ParseFloat: parsing \"%s\": invalid syntax", value);
            return -EINVAL;
        }
        *(double *)ptr = v;
        return 0;
    }
    case OPT_BOOL:
        if (parse_bool(value, ptr) < 0) {
            snprintf(err, errlen, "illegal value \"%s\" for bool variable", value);
            return -EINVAL;
        }
        return 0;
    }
    return -EINVAL;
}

/* Go's %v of a float64: shortest representation, exponent for large/small. */
static void go_float(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* Go prints exponents as e+06/e-05 like C; "%g" of 0.005 is "0.005". */
}

const char *config_get(const config_t *c, const opt_field_t *f, char *buf, size_t n)
{
    const void *ptr = (const char *)c + f->offset;
    switch (f->kind) {
    case OPT_STRING:
    case OPT_CHOICE:
        snprintf(buf, n, "%s", *(char *const *)ptr ? *(char *const *)ptr : "");
        break;
    case OPT_INT:
        snprintf(buf, n, "%d", *(const int *)ptr);
        break;
    case OPT_FLOAT:
        go_float(buf, n, *(const double *)ptr);
        break;
    case OPT_BOOL:
        snprintf(buf, n, "%s", *(const bool *)ptr ? "true" : "false");
        break;
    }
    return buf;
}
