/* rx.c — Go regexp syntax checked as Go's regexp/syntax parser does (its
 * errors, word for word), rewritten for PCRE2 and matched by PCRE2.
 *
 * The rewrite leaves nothing for PCRE2 to read differently from Go: every
 * literal that is not an ASCII letter or digit becomes \x{...} (so \1 is
 * never a back reference and { never a quantifier PCRE2 would see), named
 * groups become plain groups (PCRE2 restricts names more than Go), and
 * zero-width operators are wrapped in (?:...) so Go's "^*" stays legal.
 * $ is compiled DOLLAR_ENDONLY: without (?m) Go's $ is the end of text. */
#include "tool/graph/rx.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "base/url.h"

struct rx {
    pcre2_code *code;
    char *pattern;
};

/* Go's regexp/syntax ErrorCode strings. */
#define E_CHAR_RANGE "invalid character class range"
#define E_ESCAPE "invalid escape sequence"
#define E_NAMED_CAPTURE "invalid named capture"
#define E_PERL_OP "invalid or unsupported Perl syntax"
#define E_REPEAT_OP "invalid nested repetition operator"
#define E_REPEAT_SIZE "invalid repeat count"
#define E_UTF8 "invalid UTF-8"
#define E_BRACKET "missing closing ]"
#define E_PAREN "missing closing )"
#define E_REPEAT_ARG "missing argument to repetition operator"
#define E_BACKSLASH "trailing backslash at end of expression"
#define E_UNEXPECTED_PAREN "unexpected )"

typedef struct {
    const char *whole;
    sbuf_t *o;
    char *err;
    size_t errlen;
    int depth;   /* open groups */
    bool atom;   /* Go's stack top is an expression (not empty, "(" or "|") */
} parser_t;

static bool fail(parser_t *p, const char *code, const char *expr, size_t len)
{
    snprintf(p->err, p->errlen, "error parsing regexp: %s: `%.*s`", code, (int)len, expr);
    return false;
}

/* Decodes one UTF-8 rune as Go's nextRune: 0 for invalid input. */
static size_t next_rune(const char *s, uint32_t *r)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *r = u[0];
        return 1;
    }
    size_t n = u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || u[0] > 0xf4)
        return 0;
    uint32_t v = u[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (u[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *r = v;
    return n;
}

static bool rune(parser_t *p, const char **t, uint32_t *r)
{
    size_t n = next_rune(*t, r);
    if (!n)
        return fail(p, E_UTF8, *t, strlen(*t));
    *t += n;
    return true;
}

static void emit_rune(sbuf_t *o, uint32_t r)
{
    if ((r >= '0' && r <= '9') || ((r | 0x20) >= 'a' && (r | 0x20) <= 'z'))
        sb_putc(o, (char)r);
    else
        sb_printf(o, "\\x{%x}", (unsigned)r);
}

/* Go's parseEscape: s points at the backslash. */
static bool parse_escape(parser_t *p, const char **s, uint32_t *r)
{
    const char *start = *s, *t = *s + 1;
    if (!*t)
        return fail(p, E_BACKSLASH, "", 0);
    uint32_t c;
    if (!rune(p, &t, &c))
        return false;
    switch (c) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        if (*t < '0' || *t > '7')
            break; /* a back reference: not supported */
        /* fall through */
    case '0':
        *r = c - '0';
        for (int i = 1; i < 3 && *t >= '0' && *t <= '7'; i++)
            *r = *r * 8 + (uint32_t)(*t++ - '0');
        *s = t;
        return true;
    case 'x': {
        if (!*t)
            break;
        if (*t == '{') {
            t++;
            uint32_t v = 0;
            int n = 0;
            for (; *t && *t != '}'; t++, n++) {
                int h = url_hex_digit(*t);
                if (h < 0 || (v = v * 16 + (uint32_t)h) > 0x10ffff)
                    goto bad;
            }
            if (!*t || n == 0)
                goto bad;
            *r = v;
            *s = t + 1;
            return true;
        }
        int x = url_hex_digit(t[0]), y = t[1] ? url_hex_digit(t[1]) : -1;
        t += t[1] ? 2 : 1;
        if (x < 0 || y < 0)
            break;
        *r = (uint32_t)(x * 16 + y);
        *s = t;
        return true;
    }
    case 'a': *r = '\a'; *s = t; return true;
    case 'f': *r = '\f'; *s = t; return true;
    case 'n': *r = '\n'; *s = t; return true;
    case 'r': *r = '\r'; *s = t; return true;
    case 't': *r = '\t'; *s = t; return true;
    case 'v': *r = '\v'; *s = t; return true;
    default:
        if (c < 0x80 && !((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))) {
            *r = c; /* escaped punctuation is itself */
            *s = t;
            return true;
        }
    }
bad:
    return fail(p, E_ESCAPE, start, (size_t)(t - start));
}

/* \d \s \w and negations: copied (PCRE2 without UCP means the same ASCII sets). */
static bool perl_class(const char *t)
{
    return t[0] == '\\' && t[1] && strchr("dDsSwW", t[1]);
}

/* Go's parseUnicodeClass: \pL, \p{Greek}, \P{^Greek}. PCRE2 knows Go's
 * category and script names: a name it rejects alone is Go's error too.
 * Returns false on error, *done when one was read. */
static bool unicode_class(parser_t *p, const char **s, bool *done)
{
    const char *t = *s;
    *done = false;
    if (t[0] != '\\' || (t[1] != 'p' && t[1] != 'P'))
        return true;
    const char *end;
    if (t[2] == '{') {
        end = strchr(t, '}');
        if (!end)
            return fail(p, E_CHAR_RANGE, t, strlen(t));
        end++;
    } else {
        uint32_t c;
        const char *u = t + 2;
        if (!*u || !next_rune(u, &c))
            return true; /* Go falls through to parseEscape's error */
        end = u + next_rune(u, &c);
    }
    int code;
    PCRE2_SIZE off;
    pcre2_code *alone = pcre2_compile((PCRE2_SPTR)t, (PCRE2_SIZE)(end - t), PCRE2_UTF, &code, &off, NULL);
    if (!alone)
        return fail(p, E_CHAR_RANGE, t, (size_t)(end - t));
    pcre2_code_free(alone);
    sb_putn(p->o, t, (size_t)(end - t));
    *s = end;
    *done = true;
    return true;
}

static bool posix_name(const char *name, size_t len)
{
    static const char *const names[] = {"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
                                        "lower", "print", "punct", "space", "upper", "word", "xdigit"};
    if (len && name[0] == '^')
        name++, len--;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    return false;
}

static bool class_char(parser_t *p, const char **t, const char *whole_class, uint32_t *r)
{
    if (!**t)
        return fail(p, E_BRACKET, whole_class, strlen(whole_class));
    if (**t == '\\')
        return parse_escape(p, t, r);
    return rune(p, t, r);
}

/* Go's parseClass: s points at the '['. */
static bool parse_class(parser_t *p, const char **s)
{
    const char *whole = *s, *t = *s + 1;
    sb_putc(p->o, '[');
    if (*t == '^') {
        sb_putc(p->o, '^');
        t++;
    }
    for (bool first = true; !*t || *t != ']' || first; first = false) {
        if (t[0] == '[' && t[1] == ':' && t[2]) {
            const char *end = strstr(t + 2, ":]");
            if (end) {
                if (!posix_name(t + 2, (size_t)(end - t - 2)))
                    return fail(p, E_CHAR_RANGE, t, (size_t)(end + 2 - t));
                sb_putn(p->o, t, (size_t)(end + 2 - t));
                t = end + 2;
                continue;
            }
        }
        bool done;
        if (!unicode_class(p, &t, &done))
            return false;
        if (done)
            continue;
        if (perl_class(t)) {
            sb_putn(p->o, t, 2);
            t += 2;
            continue;
        }
        const char *rng = t;
        uint32_t lo, hi;
        if (!class_char(p, &t, whole, &lo))
            return false;
        hi = lo;
        if (t[0] == '-' && t[1] && t[1] != ']') {
            t++;
            if (!class_char(p, &t, whole, &hi))
                return false;
            if (hi < lo)
                return fail(p, E_CHAR_RANGE, rng, (size_t)(t - rng));
        }
        emit_rune(p->o, lo);
        if (hi != lo) {
            sb_putc(p->o, '-');
            emit_rune(p->o, hi);
        }
    }
    sb_putc(p->o, ']');
    *s = t + 1;
    return true;
}

/* Go's parseInt: digits without a leading zero; -1 when too big. */
static bool parse_int(const char **s, int *n)
{
    const char *t = *s;
    if (*t < '0' || *t > '9' || (t[0] == '0' && t[1] >= '0' && t[1] <= '9'))
        return false;
    *n = 0;
    for (; *t >= '0' && *t <= '9'; t++)
        if (*n >= 0)
            *n = *n >= 100000000 ? -1 : *n * 10 + (*t - '0');
    *s = t;
    return true;
}

/* Go's parseRepeat: {n} {n,} {n,m}; false when s is not one (a literal {). */
static bool parse_repeat(const char **s, int *min, int *max)
{
    const char *t = *s + 1;
    if (!parse_int(&t, min))
        return false;
    if (*t == ',') {
        t++;
        if (*t == '}')
            *max = -1;
        else if (!parse_int(&t, max))
            return false;
        else if (*max < 0)
            *min = -1; /* too big */
    } else {
        *max = *min;
    }
    if (*t != '}')
        return false;
    *s = t + 1;
    return true;
}

/* Go's parsePerlFlags: s points at "(?". */
static bool perl_flags(parser_t *p, const char **s)
{
    const char *t = *s + 2;
    if (t[0] == 'P' && t[1] == '<' && t[2]) {
        const char *end = strchr(t, '>');
        if (!end)
            return fail(p, E_NAMED_CAPTURE, *s, strlen(*s));
        bool ok = end > t + 2;
        for (const char *c = t + 2; c < end; c++)
            if (!(*c == '_' || (*c >= '0' && *c <= '9') || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z') ||
                  (unsigned char)*c >= 0x80))
                ok = false;
        if (!ok)
            return fail(p, E_NAMED_CAPTURE, *s, (size_t)(end + 1 - *s));
        sb_putc(p->o, '(');
        p->depth++;
        p->atom = false;
        *s = end + 1;
        return true;
    }
    int sign = 1;
    bool saw = false;
    while (*t) {
        uint32_t c;
        if (!rune(p, &t, &c))
            return false;
        if (c == 'i' || c == 'm' || c == 's' || c == 'U') {
            saw = true;
        } else if (c == '-') {
            if (sign < 0)
                break;
            sign = -1;
            saw = false;
        } else if (c == ':' || c == ')') {
            if (sign < 0 && !saw)
                break;
            sb_putn(p->o, *s, (size_t)(t - *s));
            if (c == ':') {
                p->depth++;
                p->atom = false;
            }
            *s = t;
            return true;
        } else {
            break;
        }
    }
    return fail(p, E_PERL_OP, *s, (size_t)(t - *s));
}

static bool translate(parser_t *p)
{
    const char *t = p->whole, *last_repeat = NULL;
    while (*t) {
        const char *repeat = NULL, *before = t;
        switch (*t) {
        case '(':
            if (t[1] == '?') {
                if (!perl_flags(p, &t))
                    return false;
                break;
            }
            sb_putc(p->o, '(');
            p->depth++;
            p->atom = false;
            t++;
            break;
        case '|':
            sb_putc(p->o, '|');
            p->atom = false;
            t++;
            break;
        case ')':
            if (p->depth == 0)
                return fail(p, E_UNEXPECTED_PAREN, p->whole, strlen(p->whole));
            sb_putc(p->o, ')');
            p->depth--;
            p->atom = true;
            t++;
            break;
        case '^': case '$':
            sb_printf(p->o, "(?:%c)", *t++);
            p->atom = true;
            break;
        case '.':
            sb_putc(p->o, *t++);
            p->atom = true;
            break;
        case '[':
            if (!parse_class(p, &t))
                return false;
            p->atom = true;
            break;
        case '*': case '+': case '?': case '{': {
            int min = 0, max = 0;
            if (*t == '{') {
                if (!parse_repeat(&t, &min, &max)) {
                    sb_puts(p->o, "\\x{7b}"); /* not a repeat: a literal { */
                    t++;
                    p->atom = true;
                    break;
                }
                if (min < 0 || min > 1000 || max > 1000 || (max >= 0 && min > max))
                    return fail(p, E_REPEAT_SIZE, before, (size_t)(t - before));
            } else {
                t++;
            }
            if (*t == '?')
                t++; /* non-greedy */
            if (last_repeat)
                return fail(p, E_REPEAT_OP, last_repeat, (size_t)(t - last_repeat));
            if (!p->atom)
                return fail(p, E_REPEAT_ARG, before, (size_t)(t - before));
            sb_putn(p->o, before, (size_t)(t - before));
            repeat = before;
            break;
        }
        case '\\': {
            char e = t[1];
            if (e == 'A' || e == 'b' || e == 'B' || e == 'z') {
                sb_printf(p->o, "(?:\\%c)", e);
                t += 2;
                p->atom = true;
                break;
            }
            if (e == 'C')
                return fail(p, E_ESCAPE, t, 2);
            if (e == 'Q') {
                const char *lit = t + 2, *end = strstr(lit, "\\E");
                const char *stop = end ? end : lit + strlen(lit);
                while (lit < stop) {
                    uint32_t c;
                    if (!rune(p, &lit, &c))
                        return false;
                    emit_rune(p->o, c);
                    p->atom = true;
                }
                t = end ? end + 2 : stop;
                break;
            }
            bool done;
            if (!unicode_class(p, &t, &done))
                return false;
            if (!done && perl_class(t)) {
                sb_putn(p->o, t, 2);
                t += 2;
                done = true;
            }
            if (!done) {
                uint32_t c;
                if (!parse_escape(p, &t, &c))
                    return false;
                emit_rune(p->o, c);
            }
            p->atom = true;
            break;
        }
        default: {
            uint32_t c;
            if (!rune(p, &t, &c))
                return false;
            emit_rune(p->o, c);
            p->atom = true;
        }
        }
        last_repeat = repeat;
    }
    if (p->depth > 0)
        return fail(p, E_PAREN, p->whole, strlen(p->whole));
    return true;
}

rx_t *rx_compile(const char *pattern, char *err, size_t errlen)
{
    sbuf_t o = {0};
    parser_t p = {.whole = pattern, .o = &o, .err = err, .errlen = errlen};
    if (!translate(&p)) {
        sb_free(&o);
        return NULL;
    }
    rx_t *rx = calloc(1, sizeof(*rx));
    if (!rx || o.oom || !(rx->pattern = strdup(pattern))) {
        snprintf(err, errlen, "out of memory");
        free(rx);
        sb_free(&o);
        return NULL;
    }
    int code;
    PCRE2_SIZE off;
    rx->code = pcre2_compile((PCRE2_SPTR)sb_cstr(&o), PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &code, &off, NULL);
    sb_free(&o);
    if (!rx->code) {
        /* Left to PCRE2: its own limits (nesting, pattern size). */
        PCRE2_UCHAR m[128];
        pcre2_get_error_message(code, m, sizeof(m));
        snprintf(err, errlen, "error parsing regexp: %s: `%s`", (char *)m, pattern);
        rx_free(rx);
        return NULL;
    }
    pcre2_jit_compile(rx->code, PCRE2_JIT_COMPLETE); /* optional: matching works without it */
    return rx;
}

/* One match block per thread (the web UI matches on its server thread),
 * freed when the thread ends. */
static pthread_key_t md_key;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;

static void md_free(void *md)
{
    pcre2_match_data_free(md);
}

static void md_init(void)
{
    pthread_key_create(&md_key, md_free);
}

bool rx_match(const rx_t *rx, const char *s)
{
    pthread_once(&md_once, md_init);
    pcre2_match_data *md = pthread_getspecific(md_key);
    if (!md) {
        if (!(md = pcre2_match_data_create(1, NULL)))
            return false;
        pthread_setspecific(md_key, md);
    }
    return pcre2_match(rx->code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0;
}

const char *rx_pattern(const rx_t *rx)
{
    return rx->pattern ? rx->pattern : "";
}

void rx_free(rx_t *rx)
{
    if (!rx)
        return;
    pcre2_code_free(rx->code);
    free(rx->pattern);
    free(rx);
}
