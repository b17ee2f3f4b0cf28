/* settings.c — pprof's settings.json: reading, writing, saving, deleting
 * (see settings.h). The reader takes any JSON and keeps what pprof would:
 * the "configs" array's objects, their "name" and saved fields. */
#include "tool/ui/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sbuf.h"

/* Fields pprof marks json:"-": per invocation, never saved. */
bool settings_saved(const opt_field_t *f)
{
    static const char *const transient[] = {"output", "source_path", "trim_path", "sample_index",
                                            "divide_by"};
    for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
        if (strcmp(f->name, transient[i]) == 0)
            return false;
    return true;
}

int settings_path(char *buf, size_t n)
{
    /* Go's os.UserConfigDir */
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    if (x && *x)
        snprintf(buf, n, "%s/pprof/settings.json", x);
    else if (h && *h)
        snprintf(buf, n, "%s/.config/pprof/settings.json", h);
    else
        return -ENOENT;
    return 0;
}

void settings_free(settings_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        config_free(&s->v[i].cfg);
    }
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* --- JSON in ---------------------------------------------------------------------- */

typedef struct {
    const char *p, *end;
} json_t;

static void ws(json_t *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool eat(json_t *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static void put_utf8(sbuf_t *b, unsigned cp)
{
    if (cp < 0x80) {
        sb_putc(b, (char)cp);
    } else if (cp < 0x800) {
        sb_putc(b, (char)(0xc0 | cp >> 6));
        sb_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        sb_putc(b, (char)(0xe0 | cp >> 12));
        sb_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        sb_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else {
        sb_putc(b, (char)(0xf0 | cp >> 18));
        sb_putc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
        sb_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        sb_putc(b, (char)(0x80 | (cp & 0x3f)));
    }
}

static bool hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (d < 0)
            return false;
        *v = *v * 16 + (unsigned)d;
    }
    return true;
}

/* A string into b (decoded). */
static bool json_string(json_t *j, sbuf_t *b)
{
    if (!eat(j, '"'))
        return false;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c != '\\') {
            sb_putc(b, c);
            continue;
        }
        if (j->p >= j->end)
            return false;
        c = *j->p++;
        unsigned cp;
        switch (c) {
        case 'b': sb_putc(b, '\b'); break;
        case 'f': sb_putc(b, '\f'); break;
        case 'n': sb_putc(b, '\n'); break;
        case 'r': sb_putc(b, '\r'); break;
        case 't': sb_putc(b, '\t'); break;
        case 'u':
            if (j->end - j->p < 4 || !hex4(j->p, &cp))
                return false;
            j->p += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                unsigned lo;
                if (hex4(j->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    j->p += 6;
                }
            }
            put_utf8(b, cp);
            break;
        default: sb_putc(b, c);
        }
    }
    return eat(j, '"');
}

/* Skips any value; nesting is counted, not recursed into. */
static bool json_skip(json_t *j)
{
    int depth = 0;
    do {
        ws(j);
        if (j->p >= j->end)
            return false;
        char c = *j->p;
        if (c == '"') {
            sbuf_t t = {0};
            bool ok = json_string(j, &t);
            sb_free(&t);
            if (!ok)
                return false;
        } else if (c == '{' || c == '[') {
            depth++;
            j->p++;
        } else if (c == '}' || c == ']') {
            depth--;
            j->p++;
        } else {
            while (j->p < j->end && !strchr(",:}] \t\r\n", *j->p))
                j->p++;
        }
        ws(j);
        if (depth > 0 && j->p < j->end && (*j->p == ',' || *j->p == ':'))
            j->p++;
    } while (depth > 0);
    return depth == 0;
}

/* A scalar as the text config_set takes: strings decoded, numbers and
 * true/false as written. */
static bool json_scalar(json_t *j, sbuf_t *b)
{
    ws(j);
    if (j->p < j->end && *j->p == '"')
        return json_string(j, b);
    const char *s = j->p;
    while (j->p < j->end && !strchr(",}] \t\r\n", *j->p))
        j->p++;
    sb_putn(b, s, (size_t)(j->p - s));
    return j->p > s;
}

/* A configuration as Go decodes one: a field the file leaves out is zero
 * (omitempty dropped it), not its default. */
static void zero_config(config_t *c)
{
    config_default(c);
    size_t n;
    const opt_field_t *fs = config_fields(&n);
    for (size_t i = 0; i < n; i++) {
        void *p = (char *)c + fs[i].offset;
        if (!settings_saved(&fs[i]))
            continue;
        switch (fs[i].kind) {
        case OPT_BOOL: *(bool *)p = false; break;
        case OPT_INT: *(int *)p = 0; break;
        case OPT_FLOAT: *(double *)p = 0; break;
        case OPT_STRING:
        case OPT_CHOICE: config_set_str(p, ""); break;
        }
    }
}

static int parse_config(json_t *j, settings_entry_t *e)
{
    zero_config(&e->cfg);
    if (eat(j, '}'))
        return 0;
    do {
        sbuf_t key = {0}, val = {0};
        bool ok = json_string(j, &key) && eat(j, ':');
        bool is_choice;
        const opt_field_t *f = ok ? config_field(sb_cstr(&key), &is_choice) : NULL;
        if (ok && strcmp(sb_cstr(&key), "name") == 0) {
            ok = json_scalar(j, &val);
            free(e->name);
            e->name = ok ? strdup(sb_cstr(&val)) : NULL;
        } else if (ok && f && !is_choice && settings_saved(f)) {
            char err[256];
            ok = json_scalar(j, &val);
            if (ok && strcmp(sb_cstr(&val), "null") != 0)
                config_set(&e->cfg, f->name, sb_cstr(&val), err, sizeof(err));
        } else if (ok) {
            ok = json_skip(j);
        }
        sb_free(&key);
        sb_free(&val);
        if (!ok)
            return -EINVAL;
    } while (eat(j, ','));
    return eat(j, '}') ? 0 : -EINVAL;
}

static int parse_settings(json_t *j, settings_t *s)
{
    if (!eat(j, '{'))
        return -EINVAL;
    if (eat(j, '}'))
        return 0;
    do {
        sbuf_t key = {0};
        bool ok = json_string(j, &key) && eat(j, ':');
        bool configs = ok && strcmp(sb_cstr(&key), "configs") == 0;
        sb_free(&key);
        if (!ok)
            return -EINVAL;
        if (!configs) {
            if (!json_skip(j))
                return -EINVAL;
            continue;
        }
        if (!eat(j, '['))
            return -EINVAL;
        if (eat(j, ']'))
            continue;
        do {
            if (!eat(j, '{'))
                return -EINVAL;
            settings_entry_t *nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
            if (!nv)
                return -ENOMEM;
            s->v = nv;
            settings_entry_t *e = &s->v[s->n++];
            memset(e, 0, sizeof(*e));
            int rc = parse_config(j, e);
            if (rc < 0)
                return rc;
            if (!e->name && !(e->name = strdup("")))
                return -ENOMEM;
        } while (eat(j, ','));
        if (!eat(j, ']'))
            return -EINVAL;
    } while (eat(j, ','));
    return eat(j, '}') ? 0 : -EINVAL;
}

int settings_read(const char *path, settings_t *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "could not read settings: open %s: %s", path, strerror(errno));
        return -errno;
    }
    sbuf_t b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        sb_putn(&b, chunk, n);
    fclose(f);
    json_t j = {b.s ? b.s : "", (b.s ? b.s : "") + b.len};
    int rc = b.oom ? -ENOMEM : parse_settings(&j, s);
    sb_free(&b);
    if (rc < 0) {
        settings_free(s);
        snprintf(err, errlen, "could not parse settings: %s",
                 rc == -ENOMEM ? "out of memory" : "invalid JSON");
    }
    return rc;
}

/* --- JSON out, as Go's json.MarshalIndent(settings, "", "  ") --------------------- */

/* Go's encoding/json string: <, >, & and the line separators as \u escapes. */
static void json_out_string(sbuf_t *b, const char *s)
{
    sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p == '\n')
            sb_puts(b, "\\n");
        else if (*p == '\r')
            sb_puts(b, "\\r");
        else if (*p == '\t')
            sb_puts(b, "\\t");
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            sb_printf(b, "\\u%04x", *p);
        else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            sb_printf(b, "\\u202%c", p[2] == 0xa8 ? '8' : '9'), p += 2;
        else
            sb_putc(b, (char)*p);
    }
    sb_putc(b, '"');
}

/* Go's encoding/json float64: the shortest digits that read back, plain
 * notation for 1e-6 <= |v| < 1e21, else exponent form without a leading
 * zero in the exponent ("1e-7"). */
static void json_out_float(sbuf_t *b, double v)
{
    char s[64];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(s, sizeof(s), "%.*e", prec - 1, v);
        if (strtod(s, NULL) == v)
            break;
    }
    double a = fabs(v);
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        snprintf(s, sizeof(s), "%.*e", prec - 1, v);
        char *e = strchr(s, 'e');
        if (e && e[1] == '-' && e[2] == '0' && e[3])
            memmove(e + 2, e + 3, strlen(e + 3) + 1);
        sb_puts(b, s);
        return;
    }
    int exp = a == 0 ? 0 : (int)floor(log10(a));
    int decimals = prec - 1 - exp;
    snprintf(s, sizeof(s), "%.*f", decimals > 0 ? decimals : 0, v);
    sb_puts(b, s);
}

static void json_out_config(sbuf_t *b, const settings_entry_t *e)
{
    sb_puts(b, "    {\n      \"name\": ");
    json_out_string(b, e->name);
    size_t n;
    const opt_field_t *fs = config_fields(&n);
    for (size_t i = 0; i < n; i++) {
        const opt_field_t *f = &fs[i];
        if (!settings_saved(f))
            continue;
        const void *p = (const char *)&e->cfg + f->offset;
        /* omitempty: false, 0 and "" are left out */
        switch (f->kind) {
        case OPT_BOOL:
            if (*(const bool *)p)
                sb_printf(b, ",\n      \"%s\": true", f->name);
            break;
        case OPT_INT:
            if (*(const int *)p)
                sb_printf(b, ",\n      \"%s\": %d", f->name, *(const int *)p);
            break;
        case OPT_FLOAT:
            if (*(const double *)p != 0) {
                sb_printf(b, ",\n      \"%s\": ", f->name);
                json_out_float(b, *(const double *)p);
            }
            break;
        case OPT_STRING:
        case OPT_CHOICE:
            if (*(char *const *)p && **(char *const *)p) {
                sb_printf(b, ",\n      \"%s\": ", f->name);
                json_out_string(b, *(char *const *)p);
            }
            break;
        }
    }
    sb_puts(b, "\n    }");
}

static int write_settings(const char *path, const settings_t *s, char *err, size_t errlen)
{
    sbuf_t b = {0};
    if (s->n == 0) {
        sb_puts(&b, "{\n  \"configs\": []\n}");
    } else {
        sb_puts(&b, "{\n  \"configs\": [\n");
        for (size_t i = 0; i < s->n; i++) {
            json_out_config(&b, &s->v[i]);
            sb_puts(&b, i + 1 < s->n ? ",\n" : "\n");
        }
        sb_puts(&b, "  ]\n}");
    }
    /* The directory as XDG asks (0700), each level that is missing. */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    for (char *q = dir + 1; slash && *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(dir, 0700);
            *q = '/';
        }
    if (slash && mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "failed to create settings directory: mkdir %s: %s", dir, strerror(errno));
        sb_free(&b);
        return -errno;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = 0;
    if (b.oom) {
        rc = -ENOMEM;
    } else if (fd < 0 || write(fd, b.s, b.len) != (ssize_t)b.len || close(fd) < 0 ||
               rename(tmp, path) < 0) {
        rc = -errno;
        if (fd >= 0)
            unlink(tmp);
    }
    if (rc < 0)
        snprintf(err, errlen, "failed to write settings: %s", strerror(-rc));
    sb_free(&b);
    return rc;
}

int settings_save(const char *path, const char *name, const config_t *cfg, char *err, size_t errlen)
{
    if (!name || !*name) {
        snprintf(err, errlen, "invalid config name");
        return -EINVAL;
    }
    settings_t s;
    int rc = settings_read(path, &s, err, errlen);
    if (rc < 0)
        return rc;
    size_t i = 0;
    while (i < s.n && strcmp(s.v[i].name, name) != 0)
        i++;
    if (i == s.n) {
        settings_entry_t *nv = realloc(s.v, (s.n + 1) * sizeof(*nv));
        if (nv) {
            s.v = nv;
            memset(&s.v[s.n], 0, sizeof(s.v[s.n]));
            if ((s.v[s.n].name = strdup(name)))
                config_default(&s.v[s.n++].cfg);
        }
        if (i == s.n) {
            settings_free(&s);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    config_free(&s.v[i].cfg);
    rc = config_copy(&s.v[i].cfg, cfg);
    if (rc < 0) {
        config_default(&s.v[i].cfg);
        snprintf(err, errlen, "out of memory");
    } else {
        rc = write_settings(path, &s, err, errlen);
    }
    settings_free(&s);
    return rc;
}

int settings_delete(const char *path, const char *name, char *err, size_t errlen)
{
    settings_t s;
    int rc = settings_read(path, &s, err, errlen);
    if (rc < 0)
        return rc;
    size_t i = 0;
    while (i < s.n && strcmp(s.v[i].name, name ? name : "") != 0)
        i++;
    if (i == s.n) {
        snprintf(err, errlen, "config %s not found", name ? name : "");
        rc = -ENOENT;
    } else {
        free(s.v[i].name);
        config_free(&s.v[i].cfg);
        memmove(&s.v[i], &s.v[i + 1], (s.n - i - 1) * sizeof(*s.v));
        s.n--;
        rc = write_settings(path, &s, err, errlen);
    }
    settings_free(&s);
    return rc;
}
