/* path.c — Go's filepath.Base and filepath.Clean (see path.h). */
#include "path.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *path_base(const char *path, char *buf, size_t n)
{
    size_t end = strlen(path);
    if (end == 0)
        return ".";
    while (end > 0 && path[end - 1] == '/')
        end--;
    if (end == 0)
        return "/";
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    if (path[end] == '\0')
        return path + start;
    size_t len = end - start < n ? end - start : n - 1;
    memcpy(buf, path + start, len);
    buf[len] = '\0';
    return buf;
}

char *path_clean(const char *path)
{
    size_t n = strlen(path);
    if (n == 0)
        return strdup(".");
    bool rooted = path[0] == '/';
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    size_t w = 0, r = 0, dotdot = 0;
    if (rooted) {
        out[w++] = '/';
        r = dotdot = 1;
    }
    while (r < n) {
        if (path[r] == '/') {
            r++;
        } else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
            r++;
        } else if (path[r] == '.' && path[r + 1] == '.' && (r + 2 == n || path[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            for (; r < n && path[r] != '/'; r++)
                out[w++] = path[r];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
    return out;
}
