/* options.h — the report configuration: every setting pprof has as a flag
 * (-nodecount=…) and as an interactive variable (nodecount=…), in one table
 * so the command line, the shell and "o"/"help" share names, types and help.
 *
 * A config_t is a plain value: copy it to derive a per-command variant. The
 * strings it holds are owned by it (config_free, config_copy). */
#ifndef CPROF_TOOL_OPTIONS_H
#define CPROF_TOOL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *output; /* file for the report; NULL = stdout */
    bool call_tree, relative_percentages, compact_labels, intel_syntax, mean, normalize;
    char *unit;        /* "minimum" by default */
    char *source_path; /* search path for -list sources */
    char *trim_path;
    char *sample_index; /* "" = default */
    double divide_by;
    char *sort; /* "flat" | "cum" */
    char *tagroot, *tagleaf;
    bool drop_negative;
    int nodecount; /* -1 = the report's default */
    double nodefraction, edgefraction;
    bool trim;
    char *focus, *ignore, *prune_from, *hide, *show, *show_from;
    char *tagfocus, *tagignore, *tagshow, *taghide;
    bool noinlines;
    char *granularity; /* functions | filefunctions | files | lines | addresses */
} config_t;

typedef enum { OPT_BOOL, OPT_INT, OPT_FLOAT, OPT_STRING, OPT_CHOICE } opt_kind_t;

typedef struct {
    const char *name;
    opt_kind_t kind;
    size_t offset;            /* of the field in config_t */
    const char *const *choices; /* OPT_CHOICE: NULL-terminated */
    const char *help;         /* first line is the summary */
} opt_field_t;

/* The fields, in pprof's order. n receives the count. */
const opt_field_t *config_fields(size_t *n);
/* The field named name, or the choice group whose choice is name (then
 * *is_choice is set). NULL if unknown. */
const opt_field_t *config_field(const char *name, bool *is_choice);
/* Help text of a field or choice; NULL if unknown. */
const char *config_help(const char *name);

void config_default(config_t *c);
int config_copy(config_t *dst, const config_t *src); /* 0 or -ENOMEM */
void config_free(config_t *c);

/* Sets field (or choice, when value is true) from text, with pprof's
 * parsing; 0, or -EINVAL with a message. */
int config_set(config_t *c, const char *name, const char *value, char *err, size_t errlen);
/* Current value of a field as text, into buf. */
const char *config_get(const config_t *c, const opt_field_t *f, char *buf, size_t n);
/* String fields: set directly (takes a copy). */
int config_set_str(char **field, const char *value);

#endif
