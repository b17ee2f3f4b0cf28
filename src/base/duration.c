/* duration.c — see duration.h; follows Go's time.ParseDuration. */
#include "duration.h"

#include <string.h>

static const struct {
    const char *name;
    int64_t ns;
} units[] = {
    {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000}, {"ms", 1000000},
    {"s", 1000000000}, {"m", 60000000000}, {"h", 3600000000000},
};

bool duration_parse(const char *s, int64_t *ns)
{
    if (!s || !*s)
        return false;
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return true;
    }
    double total = 0;
    while (*s) {
        double v = 0, scale = 1;
        bool digits = false;
        for (; *s >= '0' && *s <= '9'; s++, digits = true)
            v = v * 10 + (*s - '0');
        if (*s == '.')
            for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
                v += (*s - '0') * (scale /= 10);
        if (!digits)
            return false;
        size_t best = 0;
        int64_t unit = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].name);
            /* the longest match: "ms" before "m" */
            if (n > best && strncmp(s, units[i].name, n) == 0) {
                best = n;
                unit = units[i].ns;
            }
        }
        if (!best)
            return false;
        s += best;
        total += v * (double)unit;
        if (total >= 9.2e18)
            return false;
    }
    *ns = (int64_t)(total + 0.5);
    return true;
}
