/* sbuf.c — growable string buffer. */
#include "base/sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_free(sbuf_t *b)
{
    free(b->s);
    *b = (sbuf_t){0};
}

void sb_reset(sbuf_t *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
}

static bool reserve(sbuf_t *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t nc = b->cap ? b->cap : 64;
    while (nc < b->len + extra + 1)
        nc *= 2;
    char *n = realloc(b->s, nc);
    if (!n) {
        b->oom = true;
        return false;
    }
    b->s = n;
    b->cap = nc;
    return true;
}

void sb_putn(sbuf_t *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_puts(sbuf_t *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

void sb_putc(sbuf_t *b, char c)
{
    sb_putn(b, &c, 1);
}

void sb_vprintf(sbuf_t *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof(tmp), fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(tmp)) {
        sb_putn(b, tmp, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *sb_cstr(sbuf_t *b)
{
    return b->s ? b->s : "";
}

char *sb_steal(sbuf_t *b)
{
    char *s = b->s ? b->s : strdup("");
    *b = (sbuf_t){0};
    return s;
}

void sb_html_n(sbuf_t *b, const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&#34;"; break;
        case '\'': rep = "&#39;"; break;
        case '\0': rep = "\xef\xbf\xbd"; break;
        default: continue;
        }
        sb_putn(b, s + start, i - start);
        sb_puts(b, rep);
        start = i + 1;
    }
    sb_putn(b, s + start, n - start);
}

void sb_html(sbuf_t *b, const char *s)
{
    sb_html_n(b, s, strlen(s));
}
