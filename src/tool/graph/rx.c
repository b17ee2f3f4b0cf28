/* rx.c — RE2-to-POSIX translation and matching. */
#include "tool/graph/rx.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"

struct rx {
    regex_t re;
    char *pattern;
};

static const char *class_body(char c)
{
    switch (c) {
    case 'd': return "0-9";
    case 'w': return "[:alnum:]_";
    case 's': return "[:space:]";
    default: return NULL;
    }
}

/* Translates one RE2 pattern to ERE; returns false for constructs ERE
 * cannot express. */
static bool translate(const char *p, sbuf_t *o, int *flags, char *err, size_t errlen)
{
    if (strncmp(p, "(?i)", 4) == 0) {
        *flags |= REG_ICASE;
        p += 4;
    }
    for (; *p; p++) {
        char c = *p;
        if (c == '\\') {
            char e = p[1];
            if (!e) {
                snprintf(err, errlen, "trailing backslash at end of expression");
                return false;
            }
            p++;
            const char *body = class_body((char)(e | 0x20));
            if (body && (e == 'd' || e == 'w' || e == 's')) {
                sb_printf(o, "[%s]", body);
            } else if (body && (e == 'D' || e == 'W' || e == 'S')) {
                sb_printf(o, "[^%s]", body);
            } else if (e == 'n') {
                sb_putc(o, '\n');
            } else if (e == 't') {
                sb_putc(o, '\t');
            } else {
                sb_putc(o, '\\');
                sb_putc(o, e);
            }
        } else if (c == '[') {
            /* Bracket expression: copy, translating escapes (a backslash is
             * literal inside POSIX brackets). */
            sb_putc(o, '[');
            p++;
            if (*p == '^')
                sb_putc(o, *p++);
            if (*p == ']')
                sb_putc(o, *p++);
            for (; *p && *p != ']'; p++) {
                if (*p == '[' && p[1] == ':') {
                    const char *end = strstr(p + 2, ":]");
                    if (end) {
                        sb_putn(o, p, (size_t)(end + 2 - p));
                        p = end + 1;
                        continue;
                    }
                }
                if (*p == '\\' && p[1]) {
                    p++;
                    const char *body = class_body(*p);
                    if (body)
                        sb_puts(o, body);
                    else if (*p == 'n')
                        sb_putc(o, '\n');
                    else if (*p == 't')
                        sb_putc(o, '\t');
                    else if (*p == ']')
                        sb_puts(o, "]"); /* best effort */
                    else
                        sb_putc(o, *p);
                    continue;
                }
                sb_putc(o, *p);
            }
            if (!*p) {
                snprintf(err, errlen, "missing closing ]");
                return false;
            }
            sb_putc(o, ']');
        } else if (c == '(' && p[1] == '?') {
            if (p[2] == ':') {
                sb_putc(o, '(');
                p += 2;
            } else {
                snprintf(err, errlen, "unsupported group flags");
                return false;
            }
        } else if ((c == '*' || c == '+' || c == '?' || c == '}') && p[1] == '?') {
            sb_putc(o, c); /* lazy quantifier: same set of matching strings */
            p++;
        } else {
            sb_putc(o, c);
        }
    }
    return true;
}

rx_t *rx_compile(const char *pattern, char *err, size_t errlen)
{
    sbuf_t o = {0};
    int flags = REG_EXTENDED | REG_NOSUB;
    if (!translate(pattern, &o, &flags, err, errlen)) {
        sb_free(&o);
        return NULL;
    }
    rx_t *rx = calloc(1, sizeof(*rx));
    if (!rx || o.oom) {
        snprintf(err, errlen, "out of memory");
        free(rx);
        sb_free(&o);
        return NULL;
    }
    int rc = regcomp(&rx->re, sb_cstr(&o), flags);
    sb_free(&o);
    if (rc != 0) {
        char msg[128];
        regerror(rc, &rx->re, msg, sizeof(msg));
        snprintf(err, errlen, "%s", msg);
        free(rx);
        return NULL;
    }
    rx->pattern = strdup(pattern);
    return rx;
}

bool rx_match(const rx_t *rx, const char *s)
{
    return regexec(&rx->re, s, 0, NULL, 0) == 0;
}

const char *rx_pattern(const rx_t *rx)
{
    return rx->pattern ? rx->pattern : "";
}

void rx_free(rx_t *rx)
{
    if (!rx)
        return;
    regfree(&rx->re);
    free(rx->pattern);
    free(rx);
}
