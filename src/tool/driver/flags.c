/* flags.c — command-line parsing with Go flag semantics. */
#include "tool/driver/flags.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strs.h"
#include "cprof.h"
#include "tool/report/commands.h"

typedef enum { FL_BOOL, FL_INT, FL_FLOAT, FL_STRING } fl_kind_t;

/* Flags that are not configuration fields or commands; X_* are their
 * positions in extras[]. */
enum {
    X_DIFF_BASE, X_BASE, X_SYMBOLIZE, X_BUILDID, X_TIMEOUT, X_ADD_COMMENT, X_SECONDS,
    X_INUSE_SPACE, X_INUSE_OBJECTS, X_ALLOC_SPACE, X_ALLOC_OBJECTS, X_TOTAL_DELAY,
    X_CONTENTIONS, X_MEAN_DELAY, X_TOOLS, X_HTTP, X_NO_BROWSER, X_POLL,
};
typedef struct {
    const char *name;
    fl_kind_t kind;
    const char *help;
} extra_flag_t;

static const extra_flag_t extras[] = {
    {"diff_base", FL_STRING, "Source of base profile for comparison"},
    {"base", FL_STRING, "Source of base profile for profile subtraction"},
    {"symbolize", FL_STRING, "Options for profile symbolization"},
    {"buildid", FL_STRING, "Override build id for first mapping"},
    {"timeout", FL_INT, "Timeout in seconds for fetching a profile"},
    {"add_comment", FL_STRING, "Annotation string to record in the profile"},
    {"seconds", FL_INT, "Length of time for dynamic profiles"},
    {"inuse_space", FL_BOOL, "Display in-use memory size"},
    {"inuse_objects", FL_BOOL, "Display in-use object counts"},
    {"alloc_space", FL_BOOL, "Display allocated memory size"},
    {"alloc_objects", FL_BOOL, "Display allocated object counts"},
    {"total_delay", FL_BOOL, "Display total delay at each region"},
    {"contentions", FL_BOOL, "Display number of delays at each region"},
    {"mean_delay", FL_BOOL, "Display mean delay at each region"},
    {"tools", FL_STRING, "Path for object tool pathnames"},
    {"http", FL_STRING, "Present interactive web UI at the specified http host:port"},
    {"no_browser", FL_BOOL, "Skip opening a browser for the interactive web UI"},
    {"poll", FL_INT, "Web UI: refetch the sources every N seconds (memory over time)"},
};
#define N_EXTRAS (sizeof(extras) / sizeof(extras[0]))

static void put_help(FILE *f, const char *name, const char *help)
{
    const char *nl = help ? strchr(help, '\n') : NULL;
    int len = help ? (nl ? (int)(nl - help) : (int)strlen(help)) : 0;
    fprintf(f, "    %-16s %.*s\n", name, len, help ? help : "");
}

void flags_usage(FILE *f, bool cl)
{
    const char *pre = cl ? "-" : "";
    if (cl)
        fputs("usage:\n\n"
              "Produce output in the specified format.\n\n"
              "   cprof <format> [options] [binary] <source> ...\n\n"
              "Omit the format to get an interactive shell whose commands can be used\n"
              "to generate various views of a profile\n\n"
              "   cprof [options] [binary] <source> ...\n\n"
              "Details:\n"
              "  Output formats (select at most one):\n",
              f);
    else
        fputs("  Commands:\n", f);
    int n;
    const command_t *c = commands_all(&n);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s%s", pre, c[i].name);
        char desc[160];
        snprintf(desc, sizeof(desc), "%s%s", c[i].description,
                 c[i].render ? "" : " (not available yet)");
        put_help(f, name, desc);
    }
    if (!cl) {
        put_help(f, "o/options", "List options and their current values");
        put_help(f, "q/quit/exit/^D", "Exit cprof");
    }
    fputs("\n  Options:\n", f);
    size_t nf;
    const opt_field_t *fl = config_fields(&nf);
    char *lines[64];
    size_t nl = 0;
    for (size_t i = 0; i < nf && nl < 64; i++) {
        if (fl[i].kind == OPT_CHOICE)
            continue;
        char name[64], line[256];
        snprintf(name, sizeof(name), "%s%s", pre, fl[i].name);
        const char *h = fl[i].help, *e = strchr(h, '\n');
        snprintf(line, sizeof(line), "    %-16s %.*s", name, e ? (int)(e - h) : (int)strlen(h),
                 h);
        lines[nl++] = strdup(line);
    }
    strs_sort(lines, nl);
    for (size_t i = 0; i < nl; i++) {
        if (lines[i])
            fprintf(f, "%s\n", lines[i]);
        free(lines[i]);
    }
    fputs("\n  Option groups (only set one per group):\n", f);
    for (size_t i = 0; i < nf; i++) {
        if (fl[i].kind != OPT_CHOICE)
            continue;
        put_help(f, fl[i].name, "");
        for (const char *const *ch = fl[i].choices; *ch; ch++) {
            char name[64];
            snprintf(name, sizeof(name), "  %s%s", pre, *ch);
            put_help(f, name, config_help(*ch));
        }
    }
    if (cl) {
        fputs("\n  Source options:\n", f);
        for (size_t i = 0; i < N_EXTRAS; i++) {
            if (strstr(extras[i].name, "_space") || strstr(extras[i].name, "_objects") ||
                strstr(extras[i].name, "delay") || strcmp(extras[i].name, "contentions") == 0)
                continue;
            char name[64];
            snprintf(name, sizeof(name), "-%s", extras[i].name);
            put_help(f, name, extras[i].help);
        }
        fputs("    profile.pb.gz         Profile in compressed protobuf format\n"
              "    legacy_profile        Profile in legacy pprof format\n"
              "    Binary                Local path or build id of binary for symbolization\n"
              "\n  Legacy convenience options:\n"
              "   -inuse_space           Same as -sample_index=inuse_space\n"
              "   -inuse_objects         Same as -sample_index=inuse_objects\n"
              "   -alloc_space           Same as -sample_index=alloc_space\n"
              "   -alloc_objects         Same as -sample_index=alloc_objects\n"
              "   -total_delay           Same as -sample_index=delay\n"
              "   -contentions           Same as -sample_index=contentions\n"
              "   -mean_delay            Same as -mean -sample_index=delay\n"
              "\n  Environment Variables:\n"
              "   PPROF_TMPDIR       Location for saved profiles (default $HOME/pprof)\n"
              "   PPROF_BINARY_PATH  Search path for local binary files\n"
              "                      default: $HOME/pprof/binaries\n"
              "\n  Running a program under the heap profiler (libcprof.so):\n"
              "   cprof record [-o FILE] [-rate N] -- PROG ARGS   (cprof record -h)\n"
              "   cprof attach [-http=ADDR] [-rate=N] PID, cprof detach PID   (cprof attach -h)\n"
              "   cprof check [-base OLD] -max SPEC... NEW: a CI gate   (cprof check -h)\n"
              "\n  cprof also accepts --version and 'cprof help'. See cprof(1).\n",
              f);
    }
}

/* --- parsing ---------------------------------------------------------------- */

typedef struct {
    bool extra_bool[N_EXTRAS];
    const char *extra_str[N_EXTRAS];
    long long extra_int[N_EXTRAS];
    bool choice_set[16]; /* by choice position across groups */
    const char *choice_name[16];
    size_t n_choices;
    const char *cmd_bool[40];
    size_t n_cmd_bool;
    const char *cmd_param_name[8], *cmd_param_val[8];
    size_t n_cmd_param;
} parsed_t;

static bool go_parse_bool(const char *v, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(v, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(v, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static bool go_parse_int(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (!*v || *end || errno)
        return false;
    *out = x;
    return true;
}

static bool go_parse_float(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end)
        return false;
    *out = x;
    return true;
}

static bool is_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char m[4];
    bool r = read(fd, m, 4) == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
    close(fd);
    return r;
}

static bool is_build_id(const char *s)
{
    for (; *s; s++)
        if (!strchr("0123456789abcdefABCDEF", *s))
            return false;
    return true;
}

static void add_warn(char *warn, size_t warnlen, const char *msg)
{
    size_t l = strlen(warn);
    snprintf(warn + l, warnlen - l, "%s\n", msg);
}

flags_result_t flags_parse(int argc, char **argv, config_t *cfg, source_opts_t *src,
                           cmdline_cmd_t *cmd, char *err, size_t errlen, char *warn,
                           size_t warnlen)
{
    parsed_t ps;
    memset(&ps, 0, sizeof(ps));
    memset(src, 0, sizeof(*src));
    src->seconds = src->timeout = -1;
    cmd->name = cmd->param = NULL;
    if (warnlen)
        warn[0] = '\0';
    for (size_t i = 0; i < N_EXTRAS; i++)
        ps.extra_int[i] = -1;

    int i = 1;
    if (argc == 2 && strcmp(argv[1], "help") == 0) {
        flags_usage(stdout, true);
        return FLAGS_EXIT_OK;
    }
    while (i < argc) {
        const char *s = argv[i];
        if (strlen(s) < 2 || s[0] != '-')
            break;
        int dashes = 1;
        if (s[1] == '-') {
            dashes = 2;
            if (s[2] == '\0') {
                i++;
                break;
            }
        }
        const char *name = s + dashes;
        if (!*name || *name == '-' || *name == '=') {
            snprintf(err, errlen, "bad flag syntax: %s", s);
            return FLAGS_ERROR;
        }
        i++;
        char nbuf[128];
        const char *eq = strchr(name, '=');
        const char *value = NULL;
        if (eq) {
            snprintf(nbuf, sizeof(nbuf), "%.*s", (int)(eq - name), name);
            value = eq + 1;
        } else {
            snprintf(nbuf, sizeof(nbuf), "%s", name);
        }
        name = nbuf;

        if (strcmp(name, "version") == 0 && !value) {
            printf("cprof %s\n", CPROF_VERSION);
            return FLAGS_EXIT_OK;
        }
        if (strcmp(name, "h") == 0 || strcmp(name, "help") == 0) {
            flags_usage(stdout, true);
            return FLAGS_EXIT_OK;
        }

        /* Which kind of flag? */
        fl_kind_t kind;
        int extra = -1;
        const opt_field_t *field = NULL;
        bool is_choice = false;
        const command_t *c = command_find(name);
        for (size_t k = 0; k < N_EXTRAS; k++)
            if (strcmp(extras[k].name, name) == 0)
                extra = (int)k;
        if (extra >= 0) {
            kind = extras[extra].kind;
        } else if (c) {
            kind = c->has_param ? FL_STRING : FL_BOOL;
        } else if ((field = config_field(name, &is_choice)) &&
                   (is_choice || field->kind != OPT_CHOICE)) {
            if (is_choice)
                kind = FL_BOOL;
            else
                switch (field->kind) {
                case OPT_BOOL: kind = FL_BOOL; break;
                case OPT_INT: kind = FL_INT; break;
                case OPT_FLOAT: kind = FL_FLOAT; break;
                default: kind = FL_STRING; break;
                }
        } else {
            snprintf(err, errlen, "flag provided but not defined: -%s", name);
            return FLAGS_ERROR;
        }

        bool bv = true;
        long long iv = 0;
        double dv = 0;
        if (kind == FL_BOOL) {
            if (value && !go_parse_bool(value, &bv)) {
                snprintf(err, errlen, "invalid boolean value \"%s\" for -%s: parse error", value,
                         name);
                return FLAGS_ERROR;
            }
        } else {
            if (!value) {
                if (i >= argc) {
                    snprintf(err, errlen, "flag needs an argument: -%s", name);
                    return FLAGS_ERROR;
                }
                value = argv[i++];
            }
            if ((kind == FL_INT && !go_parse_int(value, &iv)) ||
                (kind == FL_FLOAT && !go_parse_float(value, &dv))) {
                snprintf(err, errlen, "invalid value \"%s\" for flag -%s: parse error", value,
                         name);
                return FLAGS_ERROR;
            }
        }

        if (extra >= 0) {
            ps.extra_bool[extra] = bv;
            ps.extra_str[extra] = value;
            ps.extra_int[extra] = iv;
        } else if (c) {
            /* Repeated flags override; keep one entry per name. */
            if (c->has_param) {
                size_t k;
                for (k = 0; k < ps.n_cmd_param && strcmp(ps.cmd_param_name[k], c->name); k++)
                    ;
                if (k == ps.n_cmd_param && k < 8)
                    ps.cmd_param_name[ps.n_cmd_param++] = c->name;
                if (k < 8)
                    ps.cmd_param_val[k] = value;
            } else {
                size_t k;
                for (k = 0; k < ps.n_cmd_bool && strcmp(ps.cmd_bool[k], c->name); k++)
                    ;
                if (bv && k == ps.n_cmd_bool && k < 40)
                    ps.cmd_bool[ps.n_cmd_bool++] = c->name;
                else if (!bv && k < ps.n_cmd_bool)
                    ps.cmd_bool[k] = ps.cmd_bool[--ps.n_cmd_bool];
            }
        } else if (is_choice) {
            size_t k;
            for (k = 0; k < ps.n_choices && strcmp(ps.choice_name[k], name); k++)
                ;
            if (k == ps.n_choices && k < 16) {
                ps.choice_name[k] = field->choices[0]; /* placeholder, fixed below */
                for (const char *const *ch = field->choices; *ch; ch++)
                    if (strcmp(*ch, name) == 0)
                        ps.choice_name[k] = *ch;
                ps.n_choices++;
            }
            if (k < 16)
                ps.choice_set[k] = bv;
        } else {
            char e[256];
            char num[64];
            const char *v = value;
            if (kind == FL_BOOL)
                v = bv ? "true" : "false";
            else if (kind == FL_INT) {
                if (iv < -2147483648LL || iv > 2147483647LL) {
                    snprintf(err, errlen, "invalid value \"%s\" for flag -%s: value out of range",
                             value, name);
                    return FLAGS_ERROR;
                }
                snprintf(num, sizeof(num), "%lld", iv);
                v = num;
            }
            if (config_set(cfg, name, v, e, sizeof(e)) < 0) {
                snprintf(err, errlen, "invalid value \"%s\" for flag -%s: %s", value, name, e);
                return FLAGS_ERROR;
            }
        }
    }

    int nargs = argc - i;
    char **args = argv + i;
    if (nargs == 0) {
        snprintf(err, errlen, "no profile source specified");
        return FLAGS_ERROR;
    }
    if (nargs > 1) {
        if (is_elf(args[0])) {
            src->exec_name = args[0];
            args++;
            nargs--;
        } else if (!ps.extra_str[X_BUILDID] && is_build_id(args[0])) {
            src->build_id = args[0];
            args++;
            nargs--;
        }
    }

    /* Choice groups: at most one per group. */
    size_t nf;
    const opt_field_t *fl = config_fields(&nf);
    for (size_t f = 0; f < nf; f++) {
        if (fl[f].kind != OPT_CHOICE)
            continue;
        const char *set[8];
        size_t ns = 0;
        for (size_t k = 0; k < ps.n_choices; k++) {
            bool ic;
            if (ps.choice_set[k] && config_field(ps.choice_name[k], &ic) == &fl[f] && ns < 8)
                set[ns++] = ps.choice_name[k];
        }
        if (ns == 1) {
            config_set_str((char **)((char *)cfg + fl[f].offset), set[0]);
        } else if (ns > 1) {
            size_t l = (size_t)snprintf(err, errlen, "conflicting options set: [");
            for (size_t k = 0; k < ns && l < errlen; k++)
                l += (size_t)snprintf(err + l, errlen - l, "%s%s", k ? " " : "", set[k]);
            if (l < errlen)
                snprintf(err + l, errlen - l, "]");
            return FLAGS_ERROR;
        }
    }

    /* Output format: at most one. */
    size_t nout = ps.n_cmd_bool;
    for (size_t k = 0; k < ps.n_cmd_param; k++)
        if (ps.cmd_param_val[k] && *ps.cmd_param_val[k])
            nout++;
    if (nout > 1) {
        snprintf(err, errlen, "must set at most one output format");
        return FLAGS_ERROR;
    }
    if (ps.n_cmd_bool == 1)
        cmd->name = ps.cmd_bool[0];
    for (size_t k = 0; k < ps.n_cmd_param; k++)
        if (ps.cmd_param_val[k] && *ps.cmd_param_val[k]) {
            cmd->name = ps.cmd_param_name[k];
            cmd->param = ps.cmd_param_val[k];
        }

    /* extras by position in the table */
    src->diff_base = false;
    const char *base = ps.extra_str[X_BASE], *diff = ps.extra_str[X_DIFF_BASE];
    if (base && !*base)
        base = NULL;
    if (diff && !*diff)
        diff = NULL;
    if (base && diff) {
        snprintf(err, errlen, "-base and -diff_base flags cannot both be specified");
        return FLAGS_ERROR;
    }
    src->base = base ? base : diff;
    src->diff_base = diff != NULL;
    src->symbolize = ps.extra_str[X_SYMBOLIZE];
    if (ps.extra_str[X_BUILDID] && *ps.extra_str[X_BUILDID])
        src->build_id = ps.extra_str[X_BUILDID];
    src->timeout = (int)ps.extra_int[X_TIMEOUT];
    src->comment = ps.extra_str[X_ADD_COMMENT];
    src->seconds = (int)ps.extra_int[X_SECONDS];
    src->tools = ps.extra_str[X_TOOLS];
    src->http = ps.extra_str[X_HTTP] && *ps.extra_str[X_HTTP] ? ps.extra_str[X_HTTP] : NULL;
    src->no_browser = ps.extra_bool[X_NO_BROWSER];
    if (cmd->name && src->http) {
        snprintf(err, errlen, "-http is not compatible with an output format on the command line");
        return FLAGS_ERROR;
    }
    if (src->no_browser && !src->http) {
        snprintf(err, errlen, "-no_browser only makes sense with -http");
        return FLAGS_ERROR;
    }
    src->poll = ps.extra_int[X_POLL] > 0 ? (int)ps.extra_int[X_POLL] : 0;
    if (ps.extra_str[X_POLL] && (!src->http || src->poll <= 0)) {
        snprintf(err, errlen, src->http ? "-poll needs a number of seconds > 0"
                                        : "-poll only makes sense with -http");
        return FLAGS_ERROR;
    }

    /* Sample index shorthands, in pprof's order. */
    static const struct {
        int extra;
        const char *type, *flag;
    } si[] = {{X_TOTAL_DELAY, "delay", "-total_delay"},
              {X_MEAN_DELAY, "delay", "-mean_delay"},
              {X_CONTENTIONS, "contentions", "-contentions"},
              {X_INUSE_SPACE, "inuse_space", "-inuse_space"},
              {X_INUSE_OBJECTS, "inuse_objects", "-inuse_objects"},
              {X_ALLOC_SPACE, "alloc_space", "-alloc_space"},
              {X_ALLOC_OBJECTS, "alloc_objects", "-alloc_objects"}};
    for (size_t k = 0; k < sizeof(si) / sizeof(si[0]); k++) {
        if (!ps.extra_bool[si[k].extra])
            continue;
        if (!cfg->sample_index || !*cfg->sample_index) {
            config_set_str(&cfg->sample_index, si[k].type);
        } else {
            char m[128];
            snprintf(m, sizeof(m), "Multiple value selections, ignoring %s", si[k].flag);
            add_warn(warn, warnlen, m);
        }
    }
    if (ps.extra_bool[X_MEAN_DELAY])
        cfg->mean = true;

    src->normalize = cfg->normalize;
    if (src->normalize && !src->base) {
        snprintf(err, errlen, "must have base profile to normalize by");
        return FLAGS_ERROR;
    }
    src->sources = args;
    src->n_sources = (size_t)nargs;
    return FLAGS_OK;
}
