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
