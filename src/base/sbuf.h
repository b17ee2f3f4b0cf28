/* sbuf.h — a growable string buffer (base: shared by the HTTP server and
 * the tool), and HTML escaping into it.
 *
 * On allocation failure the buffer keeps what it had and sets oom; callers
 * check oom once at the end rather than after every append. Not thread-safe
 * (one buffer, one thread). It allocates with malloc: none of it is
 * async-signal-safe, and the runtime's hooks must not use it. */
#ifndef CPROF_BASE_SBUF_H
#define CPROF_BASE_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *s;    /* NUL-terminated when len > 0 or after sb_cstr */
    size_t len; /* bytes used, without the NUL */
    size_t cap;
    bool oom;
} sbuf_t;

void sb_free(sbuf_t *b);
void sb_reset(sbuf_t *b);
void sb_putn(sbuf_t *b, const char *s, size_t n);
void sb_puts(sbuf_t *b, const char *s);
void sb_putc(sbuf_t *b, char c);
void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(sbuf_t *b, const char *fmt, va_list ap);
/* The contents as a C string ("" for an empty buffer). */
const char *sb_cstr(sbuf_t *b);
/* Takes ownership of the contents (malloc'd; "" duplicated when empty). */
char *sb_steal(sbuf_t *b);

/* n bytes of text, HTML-escaped as Go's html.EscapeString and
 * html/template do (& < > " ' as entities, NUL as U+FFFD). */
void sb_html_n(sbuf_t *b, const char *s, size_t n);
void sb_html(sbuf_t *b, const char *s);

#endif
