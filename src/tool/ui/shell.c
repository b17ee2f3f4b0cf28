/* shell.c — the interactive command loop (pprof's interactive.go). */
#include "tool/ui/shell.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "base/strs.h"
#include "tool/report/commands.h"
#include "tool/driver/driver.h"
#include "tool/graph/filter.h"
#include "tool/driver/flags.h"
#include "tool/report/report.h"
#include "base/sbuf.h"

#define PROMPT "(cprof) "

/* A line from the user, or NULL at EOF. */
static char *read_command(bool tty)
{
    if (tty) {
        char *l = readline(PROMPT);
        if (l && *l)
            add_history(l);
        return l;
    }
    fputs(PROMPT, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = '\0';
    return line;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static void greetings(profile_t *p, const config_t *cfg)
{
    work_t *w;
    char err[256];
    int vi = driver_sample_index(p, cfg->sample_index, err, sizeof(err));
    if (vi >= 0 && p->n_sample_types && work_new(p, &w, err, sizeof(err)) == 0) {
        report_t r = {0};
        r.w = w;
        r.cfg = cfg;
        r.value_index = vi;
        r.mean_index = cfg->mean ? 0 : -1;
        char stype[256];
        snprintf(stype, sizeof(stype), "%s%s", cfg->mean ? "mean_" : "",
                 p->strings[p->sample_types[vi].type]);
        r.sample_type = stype;
        r.sample_unit = p->strings[p->sample_types[vi].unit];
        snprintf(r.output_unit, sizeof(r.output_unit), "%s", cfg->unit);
        r.ratio = cfg->divide_by != 0 ? 1 / cfg->divide_by : 1;
        r.total = report_compute_total(w, vi, r.mean_index);
        sbuf_t b = {0};
        report_profile_labels(&r, &b);
        fputs(sb_cstr(&b), stderr);
        sb_free(&b);
        if (r.total == 0 && p->n_sample_types > 1) {
            driver_msg("No samples were found with the default sample value type.");
            driver_msg("Try \"sample_index\" command to analyze different sample values.\n");
        }
        work_free(w);
    }
    driver_msg("Entering interactive mode (type \"help\" for commands, \"o\" for options)");
}

static void print_options(profile_t *p, const config_t *cfg)
{
    size_t nf;
    const opt_field_t *f = config_fields(&nf);
    char **lines = calloc(nf, sizeof(*lines));
    size_t nl = 0;
    for (size_t i = 0; lines && i < nf; i++) {
        char v[256];
        config_get(cfg, &f[i], v, sizeof(v));
        sbuf_t c = {0};
        if (f[i].kind == OPT_CHOICE) {
            const char *ch[8];
            size_t n = 0;
            for (const char *const *x = f[i].choices; *x && n < 8; x++)
                ch[n++] = *x;
            strs_sort(ch, n);
            sb_puts(&c, "//: [");
            for (size_t k = 0; k < n; k++)
                sb_printf(&c, "%s%s", k ? " | " : "", ch[k]);
            sb_puts(&c, "]");
        } else if (strcmp(f[i].name, "sample_index") == 0) {
            if (!*v && p->n_sample_types)
                snprintf(v, sizeof(v), "%s",
                         p->strings[p->sample_types[p->n_sample_types - 1].type]);
            sb_puts(&c, "//: [");
            for (size_t k = 0; k < p->n_sample_types; k++)
                sb_printf(&c, "%s%s", k ? " | " : "", p->strings[p->sample_types[k].type]);
            sb_puts(&c, "]");
        } else if (strcmp(f[i].name, "source_path") == 0) {
            sb_free(&c);
            continue;
        } else if (strcmp(f[i].name, "nodecount") == 0 && strcmp(v, "-1") == 0) {
            sb_puts(&c, "//: default");
        } else if (!*v) {
            snprintf(v, sizeof(v), "\"\"");
        }
        sbuf_t l = {0};
        sb_printf(&l, "  %-25s = %-20s %s", f[i].name, v, sb_cstr(&c));
        sb_free(&c);
        lines[nl++] = sb_steal(&l);
    }
    strs_sort(lines, nl);
    for (size_t i = 0; i < nl; i++) {
        fprintf(stderr, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
}

static void command_help(const char *arg)
{
    if (!*arg) {
        flags_usage(stderr, false);
        fputs("\n  :   Clear focus/ignore/hide/tagfocus/tagignore\n\n"
              "  type \"help <cmd|option>\" for more information\n",
              stderr);
        return;
    }
    const command_t *c = command_find(arg);
    if (c) {
        fprintf(stderr, "%s\n", c->description);
        if (c->usage) {
            fputs("  Usage:\n", stderr);
            const char *u = c->usage;
            while (*u) {
                const char *e = strchr(u, '\n');
                int n = e ? (int)(e - u) : (int)strlen(u);
                fprintf(stderr, "    %.*s\n", n, u);
                if (!e)
                    break;
                u = e + 1;
            }
        }
        fputc('\n', stderr);
        return;
    }
    const char *h = config_help(arg);
    if (h) {
        fprintf(stderr, "%s\n", h);
        return;
    }
    driver_msg("Unknown command: %s", arg);
}

static char *cat_regex(char *a, const char *b)
{
    char *r;
    if (a && *a && *b) {
        if (asprintf(&r, "%s|%s", a, b) < 0)
            r = NULL;
    } else {
        r = strdup(a && *a ? a : b);
    }
    free(a);
    return r;
}

/* Splits on whitespace (strings.Fields); returns count. */
static size_t fields(char *s, char **tok, size_t max)
{
    size_t n = 0;
    for (char *t = strtok(s, " \t\r\n\v\f"); t && n < max; t = strtok(NULL, " \t\r\n\v\f"))
        tok[n++] = t;
    return n;
}

/* pprof's parseCommandLine + generateReport. */
static void run_command(profile_t *p, const config_t *cur, char **tok, size_t nt)
{
    char name[128];
    snprintf(name, sizeof(name), "%s", tok[0]);
    char **args = tok + 1;
    size_t na = nt - 1;
    char *digits_arg = NULL;
    const command_t *c = command_find(name);
    if (!c) {
        size_t l = strlen(name), d = l;
        while (d > 0 && isdigit((unsigned char)name[d - 1]))
            d--;
        if (d < l && d > 0) {
            digits_arg = strdup(name + d);
            name[d] = '\0';
            c = command_find(name);
        }
    }
    if (!c) {
        if (config_help(name) && !command_find(name)) {
            bool ch;
            if (config_field(name, &ch) || config_help(name)) {
                driver_msg("did you mean: %s=%s", name, na > 0 ? args[0] : "<val>");
                free(digits_arg);
                return;
            }
        }
        driver_msg("unrecognized command: \"%s\"", name);
        free(digits_arg);
        return;
    }
    /* argument list with the split-off digits first */
    char *av[64];
    size_t n = 0;
    if (digits_arg)
        av[n++] = digits_arg;
    for (size_t i = 0; i < na && n < 64; i++)
        av[n++] = args[i];
    const char *param = NULL;
    size_t i = 0;
    if (c->has_param && !c->param_is_file) {
        if (n == 0) {
            driver_msg("command %s requires an argument", name);
            free(digits_arg);
            return;
        }
        param = av[i++];
    }
    config_t cfg;
    if (config_copy(&cfg, cur) < 0) {
        free(digits_arg);
        return;
    }
    char *focus = NULL, *ignore = NULL;
    bool ok = true;
    for (; i < n; i++) {
        const char *t = av[i];
        char *end;
        errno = 0;
        long v = strtol(t, &end, 10);
        if (*t && !*end && !errno && v >= -2147483648L && v <= 2147483647L) {
            cfg.nodecount = (int)v;
            continue;
        }
        if (t[0] == '>') {
            const char *f = t + 1;
            if (!*f) {
                if (++i >= n) {
                    driver_msg("unexpected end of line after >");
                    ok = false;
                    break;
                }
                f = av[i];
            }
            config_set_str(&cfg.output, f);
        } else if (t[0] == '-') {
            if (strcmp(t, "--cum") == 0 || strcmp(t, "-cum") == 0) {
                config_set_str(&cfg.sort, "cum");
                continue;
            }
            ignore = cat_regex(ignore, t + 1);
        } else {
            focus = cat_regex(focus, t);
        }
    }
    if (ok) {
        bool tags = strcmp(name, "tags") == 0;
        if (focus && *focus)
            config_set_str(tags ? &cfg.tagfocus : &cfg.focus, focus);
        if (ignore && *ignore)
            config_set_str(tags ? &cfg.tagignore : &cfg.ignore, ignore);
        if (cfg.nodecount == -1 && (strcmp(name, "text") == 0 || strcmp(name, "top") == 0))
            cfg.nodecount = 10;
        driver_report(p, name, param, &cfg, true, false);
    }
    free(focus);
    free(ignore);
    free(digits_arg);
    config_free(&cfg);
}

/* Handles one (expanded) input; returns false to quit. */
static bool handle(profile_t *p, config_t *cfg, char *input)
{
    char *eq = strchr(input, '=');
    char name[256];
    snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - input) : (int)strlen(input), input);
    char *nm = trim(name);
    bool is_choice;
    const opt_field_t *f = config_field(nm, &is_choice);
    if (f) {
        char *value = eq ? eq + 1 : (char *)"";
        char *cm = NULL;
        for (char *x = strstr(value, "//:"); x; x = strstr(x + 1, "//:"))
            cm = x;
        if (cm)
            *cm = '\0';
        value = trim(value);
        if (!eq && !is_choice && f->kind != OPT_BOOL) {
            driver_msg("please specify a value, e.g. %s=<val>", nm);
            return true;
        }
        char err[512];
        if (strcmp(nm, "sample_index") == 0) {
            int idx = driver_sample_index(p, value, err, sizeof(err));
            if (idx < 0) {
                driver_msg("%s", err);
                return true;
            }
            value = p->strings[p->sample_types[idx].type];
        }
        if (config_set(cfg, nm, value, err, sizeof(err)) < 0)
            driver_msg("%s", err);
        return true;
    }
    char *tok[64];
    size_t nt = fields(input, tok, 64);
    if (nt == 0)
        return true;
    if (strcmp(tok[0], "o") == 0 || strcmp(tok[0], "options") == 0) {
        print_options(p, cfg);
        return true;
    }
    if (strcmp(tok[0], "exit") == 0 || strcmp(tok[0], "quit") == 0 || strcmp(tok[0], "q") == 0)
        return false;
    if (strcmp(tok[0], "help") == 0) {
        sbuf_t b = {0};
        for (size_t i = 1; i < nt; i++)
            sb_printf(&b, "%s%s", i > 1 ? " " : "", tok[i]);
        command_help(sb_cstr(&b));
        sb_free(&b);
        return true;
    }
    run_command(p, cfg, tok, nt);
    return true;
}

int shell_run(profile_t *p, const config_t *cfg0)
{
    config_t cfg;
    if (config_copy(&cfg, cfg0) < 0)
        return -1;
    cfg.compact_labels = true;
    bool tty = isatty(STDIN_FILENO);
    greetings(p, &cfg);
    bool go = true;
    while (go) {
        char *line = read_command(tty);
        if (!line)
            break;
        char *in = trim(line);
        /* shortcuts: ":" and the sample type names */
        const char *exp[6];
        size_t ne = 0;
        char buf[3][300];
        if (strcmp(in, ":") == 0) {
            static const char *const clr[] = {"focus=", "ignore=", "hide=", "tagfocus=",
                                              "tagignore="};
            for (size_t i = 0; i < 5; i++)
                exp[ne++] = clr[i];
        } else {
            for (size_t i = 0; i < p->n_sample_types && !ne; i++) {
                const char *t = p->strings[p->sample_types[i].type];
                if (strcmp(in, t) == 0) {
                    snprintf(buf[0], sizeof(buf[0]), "sample_index=%s", t);
                    exp[ne++] = buf[0];
                } else if (strncmp(in, "total_", 6) == 0 && strcmp(in + 6, t) == 0) {
                    exp[ne++] = "mean=0";
                    snprintf(buf[0], sizeof(buf[0]), "sample_index=%s", t);
                    exp[ne++] = buf[0];
                } else if (strncmp(in, "mean_", 5) == 0 && strcmp(in + 5, t) == 0) {
                    exp[ne++] = "mean=1";
                    snprintf(buf[0], sizeof(buf[0]), "sample_index=%s", t);
                    exp[ne++] = buf[0];
                }
            }
        }
        if (ne == 0)
            exp[ne++] = in;
        for (size_t i = 0; i < ne && go; i++) {
            char *copy = strdup(exp[i]);
            if (copy)
                go = handle(p, &cfg, copy);
            free(copy);
        }
        free(line);
    }
    config_free(&cfg);
    return 0;
}
