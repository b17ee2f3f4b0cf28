/* query.c — Go-compatible parsing of queries, numbers and paths (see
 * query.h). */
#include "query.h"

#include "base/url.h"

#include <stdlib.h>
#include <string.h>

char *query_get(const char *raw, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = raw; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t plen = amp ? (size_t)(amp - p) : strlen(p);
        const char *pair = p;
        p = amp ? amp + 1 : NULL;
        if (plen == 0 || memchr(pair, ';', plen))
            continue;
        const char *eq = memchr(pair, '=', plen);
        size_t kl = eq ? (size_t)(eq - pair) : plen;
        char *k = malloc(kl + 1);
        if (!k)
            return NULL;
        bool match = url_unescape(pair, kl, k) && strlen(k) == klen && memcmp(k, key, klen) == 0;
        free(k);
        if (!match)
            continue;
        size_t vl = eq ? plen - kl - 1 : 0;
        char *v = malloc(vl + 1);
        if (!v)
            return NULL;
        if (url_unescape(eq ? eq + 1 : "", vl, v))
            return v;
        free(v); /* Go skips the pair; a later one may still match */
    }
    return NULL;
}

bool query_atoi(const char *s, int64_t *out)
{
    bool neg = false;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool query_parse_uint0(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return false;
    unsigned base = 10;
    size_t i = 0;
    bool prefix = false;
    if (s[0] == '0' && len >= 2) {
        char c = (char)(s[1] | 0x20);
        if (c == 'x' || c == 'o' || c == 'b') {
            base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
            i = 2;
            prefix = true;
        } else {
            base = 8;
            i = 1;
            prefix = true; /* octal: that 0 is a digit as well */
        }
    }
    /* Go's underscoreOK (base 0 allows separators): '_' only after a digit
     * or a base prefix, and never last. */
    char saw = prefix ? '0' : '^';
    uint64_t v = 0;
    bool digits = i == 1; /* the leading "0" of octal is itself a digit */
    for (; i < len; i++) {
        char c = s[i];
        if (c == '_') {
            if (saw != '0')
                return false;
            saw = '_';
            continue;
        }
        int d = url_hex_digit(c);
        if (d < 0 || (unsigned)d >= base)
            return false;
        saw = '0';
        digits = true;
        if (v > (UINT64_MAX - (unsigned)d) / base)
            return false;
        v = v * base + (unsigned)d;
    }
    if (!digits || saw == '_')
        return false;
    *out = v;
    return true;
}

char *query_clean_path(const char *p)
{
    size_t n = strlen(p);
    /* Rooted copy; the result is never longer than it, plus a slash. */
    char *out = malloc(n + 3);
    if (!out)
        return NULL;
    size_t w = 0;
    out[w++] = '/';
    for (size_t r = 0; r < n;) {
        if (p[r] == '/') {
            r++;
        } else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) {
            r++;
        } else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
            r += 2;
            if (w > 1) { /* back up to the previous slash */
                w--;
                while (w > 1 && out[w - 1] != '/')
                    w--;
                if (w > 1)
                    w--; /* drop that slash too, unless it is the root */
            }
        } else {
            if (w > 1)
                out[w++] = '/';
            while (r < n && p[r] != '/')
                out[w++] = p[r++];
        }
    }
    /* Go: the trailing slash of the request survives cleaning. */
    if (n > 0 && p[n - 1] == '/' && w > 1)
        out[w++] = '/';
    out[w] = '\0';
    return out;
}

bool query_base64_decode(const char *in, char *out, size_t outlen)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (; *in && *in != '='; in++) {
        const char *alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *at = strchr(alpha, *in);
        if (!at)
            return false;
        acc = (acc << 6) | (uint32_t)(at - alpha);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n + 1 >= outlen)
                return false;
            out[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    for (; *in == '='; in++)
        ;
    if (*in || outlen == 0)
        return false;
    out[n] = '\0';
    return true;
}

bool query_secret_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < alen; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

const char *query_check_uri(const char *uri)
{
    const char *q = strchr(uri, '?');
    size_t plen = q ? (size_t)(q - uri) : strlen(uri);
    /* The decoded path and values are C strings: a %00 would cut them
     * (/heap%00.txt served as /heap, seconds=%00 taken as absent). */
    for (size_t i = 0; i + 2 < plen; i++)
        if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0')
            return "invalid URL escape \"%00\" in the path";
    if (!q)
        return NULL;
    size_t args = 0;
    for (const char *p = q + 1; *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len && ++args > QUERY_MAX_ARGS)
            return "too many query arguments";
        for (size_t i = 0; i + 2 < len; i++)
            if (p[i] == '%' && p[i + 1] == '0' && p[i + 2] == '0')
                return "invalid URL escape \"%00\" in the query";
        if (!amp)
            break;
        p = amp + 1;
    }
    return NULL;
}
