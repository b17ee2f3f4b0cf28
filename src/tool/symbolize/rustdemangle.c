/* rustdemangle.c — Rust v0 and legacy symbol names (see rustdemangle.h).
 *
 * The v0 part is a recursive-descent parser of RFC 2603's grammar that
 * prints as it parses, function for function as ianlancetaylor/demangle's
 * rust.go (the rule each function parses is in its comment). Two things
 * make it more than a walk over the string:
 *   - back references ("B" <base-62-number>) re-parse an earlier part of
 *     the name, read only up to where the reference itself starts;
 *   - parts that are not printed (impl paths, the instantiating crate) are
 *     still parsed, with printing off (skip).
 * Errors set `failed`; every parser returns at once after one, so the
 * caller sees the flag once at the end.
 */
#include "rustdemangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"

#define MAX_DEPTH 500        /* nested paths and types (rustc-demangle's) */
#define MAX_OUT (64u << 10)  /* bytes of output: back references can
                                expand exponentially */

typedef struct {
    const char *orig; /* the name after "_R", without a '.' suffix */
    size_t pos, end;  /* what is left to parse: orig[pos, end) */
    sbuf_t out;
    bool skip;         /* parse without printing */
    bool failed;
    int depth;
    int64_t lifetimes; /* bound lifetimes in scope */
    char last;         /* last byte printed */
} rst_t;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

static void fail(rst_t *r) { r->failed = true; }

static size_t left(const rst_t *r) { return r->end - r->pos; }

/* The next byte, '\0' at the end (names hold no NUL). */
static char peek(const rst_t *r) { return r->pos < r->end ? r->orig[r->pos] : '\0'; }

static void check_char(rst_t *r, char c)
{
    if (peek(r) != c)
        fail(r);
    else
        r->pos++;
}

static void put_n(rst_t *r, const char *s, size_t n)
{
    if (r->skip || r->failed || n == 0)
        return;
    if (r->out.len + n > MAX_OUT) {
        fail(r);
        return;
    }
    sb_putn(&r->out, s, n);
    r->last = s[n - 1];
}

static void put(rst_t *r, const char *s) { put_n(r, s, strlen(s)); }
static void put_c(rst_t *r, char c) { put_n(r, &c, 1); }

static void put_i64(rst_t *r, int64_t v)
{
    if (r->skip || r->failed)
        return;
    char num[24];
    int n = 0;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do
        num[sizeof(num) - 1 - n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        num[sizeof(num) - 1 - n++] = '-';
    put_n(r, num + sizeof(num) - n, (size_t)n);
}

/* Recursion guard: false (and failed) past MAX_DEPTH. */
static bool enter(rst_t *r)
{
    if (r->failed)
        return false;
    if (++r->depth > MAX_DEPTH) {
        fail(r);
        return false;
    }
    return true;
}

static void leave(rst_t *r) { r->depth--; }

/* <base-62-number> = {<0-9a-zA-Z>} "_"; "_" alone is 0, digits d are d+1.
 * Wraps on overflow as Go's int64 does; users range-check. */
static int64_t base62(rst_t *r)
{
    if (peek(r) == '_') {
        r->pos++;
        return 0;
    }
    uint64_t v = 0;
    while (r->pos < r->end) {
        char c = r->orig[r->pos++];
        if (c == '_')
            return (int64_t)(v + 1);
        v *= 62;
        if (is_digit(c))
            v += (uint64_t)(c - '0');
        else if (is_lower(c))
            v += (uint64_t)(c - 'a' + 10);
        else if (is_upper(c))
            v += (uint64_t)(c - 'A' + 36);
        else
            break;
    }
    fail(r);
    return 0;
}

/* <decimal-number>; 0 when no digit follows, as rust.go reads it. */
static size_t decimal(rst_t *r)
{
    if (left(r) == 0) {
        fail(r);
        return 0;
    }
    int64_t v = 0;
    while (is_digit(peek(r))) {
        int add = peek(r) - '0';
        if (v >= INT32_MAX / 10 - add) {
            fail(r);
            return 0;
        }
        v = v * 10 + add;
        r->pos++;
    }
    return (size_t)v;
}

/* <disambiguator> = "s" <base-62-number>, optional: its value + 1, or 0. */
static int64_t disambiguator(rst_t *r)
{
    if (peek(r) != 's')
        return 0;
    r->pos++;
    return base62(r) + 1;
}

static void put_utf8(sbuf_t *b, uint32_t c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xc0 | c >> 6);
        u[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xe0 | c >> 12);
        u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | c >> 18);
        u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    sb_putn(b, u, n);
}

/* Rust's punycode (RFC 3492 section 6.2, '_' instead of '-' before the
 * encoded part) of s[0, n), decoded into r's output. */
static void punycode(rst_t *r, const char *s, size_t n)
{
    enum { BASE = 36, TMIN = 1, TMAX = 26, SKEW = 38, DAMP = 700 };
    uint32_t *cps = malloc((n + 1) * sizeof(*cps));
    if (!cps) {
        fail(r);
        return;
    }
    size_t len = 0, at = 0;
    const char *us = memrchr(s, '_', n);
    if (us) {
        for (const char *q = s; q < us; q++)
            cps[len++] = (unsigned char)*q;
        at = (size_t)(us - s) + 1;
    }
    int64_t i = 0, cp = 128, bias = 72;
    while (at < n && !r->failed) {
        int64_t old = i, w = 1;
        for (int64_t k = BASE;; k += BASE) {
            if (at == n) {
                fail(r);
                break;
            }
            char d = s[at++];
            int64_t digit = is_digit(d) ? d - '0' + 26 : is_upper(d) ? d - 'A' : d - 'a';
            i += digit * w;
            if (i < 0 || i > INT32_MAX) {
                fail(r);
                break;
            }
            int64_t t = k <= bias ? TMIN : k > bias + TMAX ? TMAX : k - bias;
            if (digit < t)
                break;
            if (w >= INT32_MAX / BASE) {
                fail(r);
                break;
            }
            w *= BASE - t;
        }
        if (r->failed)
            break;
        int64_t delta = i - old, points = (int64_t)len + 1;
        delta = old == 0 ? delta / DAMP : delta / 2;
        delta += delta / points;
        int64_t k = 0;
        while (delta > ((BASE - TMIN) * TMAX) / 2) {
            delta /= BASE - TMIN;
            k += BASE;
        }
        bias = k + ((BASE - TMIN + 1) * delta) / (delta + SKEW);
        cp += i / points;
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            fail(r);
            break;
        }
        i %= points;
        memmove(cps + i + 1, cps + i, (len - (size_t)i) * sizeof(*cps));
        cps[i++] = (uint32_t)cp;
        len++;
    }
    if (!r->failed && !r->skip) {
        sbuf_t b = {0};
        for (size_t j = 0; j < len; j++)
            put_utf8(&b, cps[j]);
        if (b.oom)
            fail(r);
        else
            put_n(r, b.s, b.len);
        sb_free(&b);
    }
    free(cps);
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes>:
 * its bytes in *id, *n and whether they are punycode. */
static bool ident_raw(rst_t *r, const char **id, size_t *n)
{
    bool puny = peek(r) == 'u';
    if (puny)
        r->pos++;
    size_t len = decimal(r);
    if (peek(r) == '_')
        r->pos++;
    *id = "";
    *n = 0;
    if (r->failed || left(r) < len) {
        fail(r);
        return false;
    }
    const char *s = r->orig + r->pos;
    r->pos += len;
    for (size_t i = 0; i < len; i++)
        if (!is_digit(s[i]) && !is_lower(s[i]) && !is_upper(s[i]) && s[i] != '_') {
            fail(r);
            return false;
        }
    *id = s;
    *n = len;
    return puny;
}

/* The same, printed (punycode decoded) after prefix when not empty. */
static void ident(rst_t *r, const char *prefix)
{
    const char *id;
    size_t n;
    bool puny = ident_raw(r, &id, &n);
    if (r->failed)
        return;
    if (n)
        put(r, prefix);
    if (puny)
        punycode(r, id, n);
    else
        put_n(r, id, n);
}

static void path(rst_t *r, bool sep);
static void type(rst_t *r);
static void konst(rst_t *r);

/* <backref> = "B" <base-62-number>: parses what starts at that offset with
 * fn, reading no further than the reference itself. Not followed while
 * skipping (nothing to print). */
static void backref(rst_t *r, void (*fn)(rst_t *, bool), bool arg)
{
    size_t at = r->pos;
    check_char(r, 'B');
    int64_t idx = base62(r);
    if (r->skip || r->failed)
        return;
    if (idx < 0 || (uint64_t)idx >= at) {
        fail(r);
        return;
    }
    size_t pos = r->pos, end = r->end;
    r->pos = (size_t)idx;
    r->end = at;
    fn(r, arg);
    r->pos = pos;
    r->end = end;
}

static void path_fn(rst_t *r, bool sep) { path(r, sep); }
static void type_fn(rst_t *r, bool unused) { (void)unused, type(r); }
static void konst_fn(rst_t *r, bool unused) { (void)unused, konst(r); }

static void lifetime(rst_t *r, int64_t l)
{
    put_c(r, '\'');
    if (l == 0) {
        put_c(r, '_');
        return;
    }
    int64_t depth = r->lifetimes - l;
    if (depth < 0)
        fail(r);
    else if (depth < 26)
        put_c(r, (char)('a' + depth));
    else {
        put_c(r, 'z');
        put_i64(r, depth - 26 + 1);
    }
}

/* <generic-arg> = "L" <base-62-number> | "K" <const> | <type> */
static void generic_arg(rst_t *r)
{
    if (peek(r) == 'L') {
        r->pos++;
        lifetime(r, base62(r));
    } else if (peek(r) == 'K') {
        r->pos++;
        konst(r);
    } else {
        type(r);
    }
}

/* {<generic-arg>} up to (not including) the closing "E". */
static void generic_args(rst_t *r)
{
    for (bool first = true; !r->failed && left(r) && peek(r) != 'E'; first = false) {
        if (!first)
            put(r, ", ");
        generic_arg(r);
    }
}

/* <path> = "C" <identifier>                    crate root
 *        | "M" <impl-path> <type>              <T>
 *        | "X" <impl-path> <type> <path>       <T as Trait>
 *        | "Y" <type> <path>                   <T as Trait>
 *        | "N" <namespace> <path> <identifier> ...::ident
 *        | "I" <path> {<generic-arg>} "E"      ...<T, U>
 *        | <backref>
 * sep: "::" before generic arguments (a path in expression position). */
static void path(rst_t *r, bool sep)
{
    if (!enter(r))
        return;
    char c = peek(r);
    switch (c) {
    case 'C':
        r->pos++;
        disambiguator(r);
        ident(r, "");
        break;
    case 'M':
    case 'X': {
        r->pos++;
        /* <impl-path> = [<disambiguator>] <path>: parsed, not printed. */
        bool hold = r->skip;
        r->skip = true;
        disambiguator(r);
        path(r, false);
        r->skip = hold;
        put_c(r, '<');
        type(r);
        if (c == 'X') {
            put(r, " as ");
            path(r, false);
        }
        put_c(r, '>');
        break;
    }
    case 'Y':
        r->pos++;
        put_c(r, '<');
        type(r);
        put(r, " as ");
        path(r, false);
        put_c(r, '>');
        break;
    case 'N': {
        r->pos++;
        char ns = peek(r);
        if (!is_lower(ns) && !is_upper(ns)) {
            fail(r);
            break;
        }
        r->pos++;
        path(r, sep);
        int64_t dis = disambiguator(r);
        if (is_upper(ns)) {
            /* Closures and shims: {closure:name#N}. */
            put(r, "::{");
            put(r, ns == 'C' ? "closure" : ns == 'S' ? "shim" : (char[2]){ns, 0});
            ident(r, ":");
            put_c(r, '#');
            put_i64(r, dis);
            put_c(r, '}');
        } else {
            put(r, "::");
            ident(r, "");
        }
        break;
    }
    case 'I':
        r->pos++;
        path(r, sep);
        if (sep)
            put(r, "::");
        put_c(r, '<');
        generic_args(r);
        put_c(r, '>');
        check_char(r, 'E');
        break;
    case 'B':
        backref(r, path_fn, sep);
        break;
    default:
        fail(r);
    }
    leave(r);
}

/* <binder> = "G" <base-62-number>, optional: for<'a, 'b> */
static void binder(rst_t *r)
{
    if (peek(r) != 'G')
        return;
    r->pos++;
    int64_t n = base62(r) + 1;
    /* Every bound lifetime is used later, so there are fewer than the
     * bytes left. */
    if (r->failed || n >= (int64_t)left(r) - r->lifetimes) {
        fail(r);
        return;
    }
    put(r, "for<");
    for (int64_t i = 0; i < n && !r->failed; i++) {
        if (i > 0)
            put(r, ", ");
        r->lifetimes++;
        lifetime(r, 1);
    }
    put(r, "> ");
}

/* <fn-sig> = [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type> */
static void fn_sig(rst_t *r)
{
    binder(r);
    if (peek(r) == 'U') {
        r->pos++;
        put(r, "unsafe ");
    }
    if (peek(r) == 'K') {
        r->pos++;
        if (peek(r) == 'C') {
            r->pos++;
            put(r, "extern \"C\" ");
        } else {
            const char *id;
            size_t n;
            if (ident_raw(r, &id, &n))
                fail(r); /* no punycode in an ABI name */
            put(r, "extern \"");
            for (size_t i = 0; i < n; i++)
                put_c(r, id[i] == '_' ? '-' : id[i]);
            put(r, "\" ");
        }
    }
    put(r, "fn(");
    for (bool first = true; !r->failed && left(r) && peek(r) != 'E'; first = false) {
        if (!first)
            put(r, ", ");
        type(r);
    }
    check_char(r, 'E');
    put_c(r, ')');
    if (peek(r) == 'u') {
        r->pos++;
    } else {
        put(r, " -> ");
        type(r);
    }
}

/* A path whose generic arguments stay open for associated-type bindings:
 * true if it opened them ("Trait<A"). */
static bool path_open_generics(rst_t *r)
{
    if (!enter(r))
        return false;
    bool opened = false;
    switch (peek(r)) {
    case 'I':
        r->pos++;
        path(r, false);
        put_c(r, '<');
        generic_args(r);
        check_char(r, 'E');
        opened = true;
        break;
    case 'B': {
        /* backref() takes a void parser; follow the reference here. */
        size_t at = r->pos;
        r->pos++;
        int64_t idx = base62(r);
        if (r->skip || r->failed)
            break;
        if (idx < 0 || (uint64_t)idx >= at) {
            fail(r);
            break;
        }
        size_t pos = r->pos, end = r->end;
        r->pos = (size_t)idx;
        r->end = at;
        opened = path_open_generics(r);
        r->pos = pos;
        r->end = end;
        break;
    }
    default:
        path(r, false);
    }
    leave(r);
    return opened;
}

/* <dyn-trait> = <path> {"p" <undisambiguated-identifier> <type>} */
static void dyn_trait(rst_t *r)
{
    bool started = path_open_generics(r);
    while (!r->failed && peek(r) == 'p') {
        r->pos++;
        put(r, started ? ", " : "<");
        started = true;
        ident(r, "");
        put(r, " = ");
        type(r);
    }
    if (started)
        put_c(r, '>');
}

/* <dyn-bounds> = [<binder>] {<dyn-trait>} "E" */
static void dyn_bounds(rst_t *r)
{
    put(r, "dyn ");
    binder(r);
    for (bool first = true; !r->failed && left(r) && peek(r) != 'E'; first = false) {
        if (!first)
            put(r, " + ");
        dyn_trait(r);
    }
    check_char(r, 'E');
}

static const char *basic_type(char c)
{
    static const char *const names[26] = {
        ['a' - 'a'] = "i8",   ['b' - 'a'] = "bool", ['c' - 'a'] = "char", ['d' - 'a'] = "f64",
        ['e' - 'a'] = "str",  ['f' - 'a'] = "f32",  ['h' - 'a'] = "u8",   ['i' - 'a'] = "isize",
        ['j' - 'a'] = "usize", ['l' - 'a'] = "i32", ['m' - 'a'] = "u32",  ['n' - 'a'] = "i128",
        ['o' - 'a'] = "u128", ['p' - 'a'] = "_",    ['s' - 'a'] = "i16",  ['t' - 'a'] = "u16",
        ['u' - 'a'] = "()",   ['v' - 'a'] = "...",  ['x' - 'a'] = "i64",  ['y' - 'a'] = "u64",
        ['z' - 'a'] = "!",
    };
    return is_lower(c) ? names[c - 'a'] : NULL;
}

/* <type> = <basic-type> | <path> | "A" <type> <const> | "S" <type>
 *        | "T" {<type>} "E" | "R" [<lifetime>] <type> | "Q" [<lifetime>] <type>
 *        | "P" <type> | "O" <type> | "F" <fn-sig> | "D" <dyn-bounds> <lifetime>
 *        | <backref> */
static void type(rst_t *r)
{
    if (!enter(r))
        return;
    char c = peek(r);
    if (is_lower(c)) {
        const char *b = basic_type(c);
        if (!b)
            fail(r);
        r->pos++;
        put(r, b ? b : "");
        leave(r);
        return;
    }
    switch (c) {
    case 'C': case 'M': case 'X': case 'Y': case 'N': case 'I':
        path(r, false);
        break;
    case 'A':
    case 'S':
        r->pos++;
        put_c(r, '[');
        type(r);
        if (c == 'A') {
            put(r, "; ");
            konst(r);
        }
        put_c(r, ']');
        break;
    case 'T': {
        r->pos++;
        put_c(r, '(');
        int n = 0;
        for (; !r->failed && left(r) && peek(r) != 'E'; n++) {
            if (n > 0)
                put(r, ", ");
            type(r);
        }
        if (n == 1)
            put_c(r, ',');
        put_c(r, ')');
        check_char(r, 'E');
        break;
    }
    case 'R':
    case 'Q':
        r->pos++;
        put_c(r, '&');
        if (peek(r) == 'L') {
            r->pos++;
            int64_t l = base62(r);
            if (l > 0) {
                lifetime(r, l);
                put_c(r, ' ');
            }
        }
        if (c == 'Q')
            put(r, "mut ");
        type(r);
        break;
    case 'P':
        r->pos++;
        put(r, "*const ");
        type(r);
        break;
    case 'O':
        r->pos++;
        put(r, "*mut ");
        type(r);
        break;
    case 'F': {
        r->pos++;
        int64_t hold = r->lifetimes;
        fn_sig(r);
        r->lifetimes = hold;
        break;
    }
    case 'D': {
        r->pos++;
        int64_t hold = r->lifetimes;
        dyn_bounds(r);
        r->lifetimes = hold;
        if (peek(r) != 'L') {
            fail(r);
            break;
        }
        r->pos++;
        int64_t l = base62(r);
        if (l > 0) {
            if (r->last != ' ')
                put_c(r, ' ');
            put(r, "+ ");
            lifetime(r, l);
        }
        break;
    }
    case 'B':
        backref(r, type_fn, false);
        break;
    default:
        fail(r);
    }
    leave(r);
}

/* <const> = <type> <const-data> | "p" | <backref>
 * <const-data> = ["n"] {<hex-digit>} "_"
 * Integers print in decimal (hex past 16 digits), bools and chars as such. */
static void konst(rst_t *r)
{
    if (!enter(r))
        return;
    char t = peek(r);
    if (t == 'B') {
        backref(r, konst_fn, false);
        leave(r);
        return;
    }
    if (t == 'p') {
        r->pos++;
        put_c(r, '_');
        leave(r);
        return;
    }
    enum { SIGNED, UNSIGNED, BOOL, CHAR } kind;
    if (t && strchr("aslxni", t))
        kind = SIGNED;
    else if (t && strchr("htmyoj", t))
        kind = UNSIGNED;
    else if (t == 'b')
        kind = BOOL;
    else if (t == 'c')
        kind = CHAR;
    else {
        fail(r);
        leave(r);
        return;
    }
    r->pos++;
    if (kind == SIGNED && peek(r) == 'n') {
        r->pos++;
        put_c(r, '-');
    }
    const char *start = r->orig + r->pos;
    size_t digits = 0;
    uint64_t v = 0;
    for (;;) {
        char c = peek(r);
        uint64_t d;
        if (is_digit(c))
            d = (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint64_t)(c - 'a' + 10);
        else if (c == '_') {
            r->pos++;
            break;
        } else {
            fail(r);
            break;
        }
        r->pos++;
        if (v == 0 && d == 0 && peek(r) != '_') {
            fail(r); /* a leading 0 */
            break;
        }
        v = v * 16 + d;
        digits++;
    }
    if (!r->failed && digits == 0)
        fail(r);
    if (r->failed) {
        leave(r);
        return;
    }
    switch (kind) {
    case SIGNED:
    case UNSIGNED:
        if (digits > 16) {
            put(r, "0x");
            put_n(r, start, digits);
        } else if (!r->skip) {
            char num[24];
            size_t n = 0;
            do
                num[sizeof(num) - 1 - n++] = (char)('0' + v % 10);
            while ((v /= 10) != 0);
            put_n(r, num + sizeof(num) - n, n);
        }
        break;
    case BOOL:
        if (digits > 1 || v > 1)
            fail(r);
        else
            put(r, v ? "true" : "false");
        break;
    case CHAR:
        if (digits > 6) {
            fail(r);
            break;
        }
        put_c(r, '\'');
        if (v == '\t')
            put(r, "\\t");
        else if (v == '\r')
            put(r, "\\r");
        else if (v == '\n')
            put(r, "\\n");
        else if (v == '\\')
            put(r, "\\\\");
        else if (v == '\'')
            put(r, "\\'");
        else if (v >= ' ' && v <= '~')
            put_c(r, (char)v);
        else if (!r->skip) {
            static const char hex[] = "0123456789abcdef";
            char u[16];
            size_t n = 0;
            do
                u[sizeof(u) - 1 - n++] = hex[v % 16];
            while ((v /= 16) != 0);
            put(r, "\\u{");
            put_n(r, u + sizeof(u) - n, n);
            put_c(r, '}');
        }
        put_c(r, '\'');
        break;
    }
    leave(r);
}

/* <symbol-name> = "_R" [<decimal-number>] <path> [<instantiating-crate>] */
static char *demangle_v0(const char *sym)
{
    size_t n = strcspn(sym + 2, "."); /* a ".llvm.N" suffix is dropped */
    rst_t r = {.orig = sym + 2, .end = n};
    if (n == 0 || is_digit(r.orig[0])) /* encoding versions: none defined */
        return NULL;
    path(&r, true);
    if (left(&r) > 0) {
        r.skip = true; /* the instantiating crate */
        path(&r, false);
    }
    /* An empty result (rust.go returns "" for "_RC" + non-digits) would
     * make a nameless function: the symbol is kept. */
    if (left(&r) > 0 || r.failed || r.out.oom || r.out.len == 0) {
        sb_free(&r.out);
        return NULL;
    }
    return sb_steal(&r.out);
}

/* --- legacy names ------------------------------------------------------------ */

static int hex_digit(char c)
{
    return is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Length of sym without a ".suffix" after the final "E" (rust.go cuts at
 * the last "E."). */
static size_t legacy_len(const char *sym)
{
    size_t n = strlen(sym);
    for (size_t i = n; i-- > 1;)
        if (sym[i] == '.' && sym[i - 1] == 'E')
            return i;
    return n;
}

bool rust_is_legacy(const char *sym)
{
    if (strncmp(sym, "_ZN", 3) != 0)
        return false;
    size_t n = legacy_len(sym);
    return n > 23 && sym[n - 1] == 'E' && memcmp(sym + n - 20, "17h", 3) == 0;
}

/* "$LT$"-style escapes of legacy names. */
static char escape_code(const char *s)
{
    static const struct {
        char code[3], c;
    } codes[] = {{"SP", '@'}, {"BP", '*'}, {"RF", '&'}, {"LT", '<'},
                 {"GT", '>'}, {"LP", '('}, {"RP", ')'}};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (s[0] == codes[i].code[0] && s[1] == codes[i].code[1])
            return codes[i].c;
    return 0;
}

/* rust.go's oldRustToString: "_ZN" {<length><part>} "17h" <hash> "E";
 * the parts joined by "::", escapes decoded, ".." read as "::". */
static char *demangle_legacy(const char *sym)
{
    size_t n = legacy_len(sym);
    /* The hash: 16 hex digits with at least 5 distinct ones. */
    unsigned seen = 0;
    for (size_t i = n - 17; i < n - 1; i++) {
        int d = hex_digit(sym[i]);
        if (d < 0)
            return NULL;
        seen |= 1u << d;
    }
    if (__builtin_popcount(seen) < 5)
        return NULL;
    const char *s = sym + 3, *end = sym + n - 20;
    sbuf_t b = {0};
    while (s < end) {
        if (!is_digit(*s))
            goto bad;
        long v = 0;
        while (s < end && is_digit(*s)) {
            int add = *s - '0';
            if (v >= INT32_MAX / 10 - add)
                goto bad;
            v = v * 10 + add;
            s++;
        }
        /* rust.go takes a '_' after the length for a separator and drops
         * it ("_rust_begin_short_backtrace"); legacy names have none: the
         * part is "__rust_begin_short_backtrace", as c++filt shows it. */
        if (end - s < v)
            goto bad;
        const char *id = s, *id_end = s + v;
        s = id_end;
        if (b.len > 0)
            sb_puts(&b, "::");
        if (id_end - id >= 2 && id[0] == '_' && id[1] == '$')
            id++;
        while (id < id_end) {
            size_t k = (size_t)(id_end - id);
            if (*id == '$') {
                int d1, d2;
                char c;
                if (k > 2 && id[1] == 'C' && id[2] == '$') {
                    sb_putc(&b, ',');
                    id += 3;
                } else if (k > 4 && id[1] == 'u' && id[4] == '$' && (d1 = hex_digit(id[2])) >= 0 &&
                           (d2 = hex_digit(id[3])) >= 0 && d1 <= 7 && (d1 << 4 | d2) >= ' ') {
                    sb_putc(&b, (char)(d1 << 4 | d2));
                    id += 5;
                } else if (k > 3 && id[3] == '$' && (c = escape_code(id + 1)) != 0) {
                    sb_putc(&b, c);
                    id += 4;
                } else {
                    /* Not an escape: the rest of the part as it is. */
                    sb_putn(&b, id, k);
                    break;
                }
            } else if (*id == '.' && k >= 2 && id[1] == '.') {
                sb_puts(&b, "::");
                id += 2;
            } else {
                sb_putc(&b, *id++);
            }
        }
    }
    if (b.oom)
        goto bad;
    return sb_steal(&b);
bad:
    sb_free(&b);
    return NULL;
}

char *rust_demangle(const char *sym)
{
    if (!sym)
        return NULL;
    if (sym[0] == '_' && sym[1] == 'R')
        return demangle_v0(sym);
    return rust_is_legacy(sym) ? demangle_legacy(sym) : NULL;
}
