/* url.c — Go's net/url escapes (see url.h). */
#include "url.h"

int url_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool url_unescape(const char *s, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            if (i + 2 >= len)
                return false;
            int h = url_hex_digit(s[i + 1]), l = url_hex_digit(s[i + 2]);
            if (h < 0 || l < 0)
                return false;
            out[n++] = (char)(h * 16 + l);
            i += 2;
        } else {
            out[n++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    out[n] = '\0';
    return true;
}

bool url_query_escape(const char *s, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == '~';
        if (n + (plain || c == ' ' ? 1 : 3) >= outlen)
            return false;
        if (plain) {
            out[n++] = (char)c;
        } else if (c == ' ') {
            out[n++] = '+';
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    if (n >= outlen)
        return false;
    out[n] = '\0';
    return true;
}
