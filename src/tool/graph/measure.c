/* measure.c — unit scaling and value formatting (pprof's measurement). */
#include "tool/graph/measure.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *aliases[4];
    double factor;
} unit_t;

typedef struct {
    unit_t dflt;
    unit_t units[10];
} unit_type_t;

static const unit_type_t unit_types[] = {
    {{"B", {"b", "byte"}, 1},
     {{"B", {"b", "byte"}, 1},
      {"kB", {"kb", "kbyte", "kilobyte"}, 1024.0},
      {"MB", {"mb", "mbyte", "megabyte"}, 1048576.0},
      {"GB", {"gb", "gbyte", "gigabyte"}, 1073741824.0},
      {"TB", {"tb", "tbyte", "terabyte"}, 1099511627776.0},
      {"PB", {"pb", "pbyte", "petabyte"}, 1125899906842624.0}}},
    {{"s", {0}, 1e9},
     {{"ns", {"ns", "nanosecond"}, 1},
      {"us", {"\xce\xbcs", "us", "microsecond"}, 1e3},
      {"ms", {"ms", "millisecond"}, 1e6},
      {"s", {"s", "sec", "second"}, 1e9},
      {"hrs", {"hour", "hr"}, 3600e9}}},
    {{"GCU", {0}, 1},
     {{"n*GCU", {"nanogcu"}, 1e-9},
      {"u*GCU", {"microgcu"}, 1e-6},
      {"m*GCU", {"milligcu"}, 1e-3},
      {"GCU", {"gcu"}, 1},
      {"k*GCU", {"kilogcu"}, 1e3},
      {"M*GCU", {"megagcu"}, 1e6},
      {"G*GCU", {"gigagcu"}, 1e9},
      {"T*GCU", {"teragcu"}, 1e12},
      {"P*GCU", {"petagcu"}, 1e15}}},
};
#define N_TYPES (sizeof(unit_types) / sizeof(unit_types[0]))

/* Lower-cases the unit and drops one trailing 's' when longer than two
 * bytes, then looks the alias up. */
static const unit_t *sniff(const unit_type_t *ut, const char *unit)
{
    char low[64];
    size_t n = strlen(unit);
    if (n >= sizeof(low))
        return NULL;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)unit[i]);
    low[n] = '\0';
    if (n > 2 && low[n - 1] == 's')
        low[n - 1] = '\0';
    for (size_t i = 0; i < sizeof(ut->units) / sizeof(ut->units[0]) && ut->units[i].name; i++)
        for (size_t a = 0; a < 4 && ut->units[i].aliases[a]; a++)
            if (strcmp(ut->units[i].aliases[a], low) == 0)
                return &ut->units[i];
    return NULL;
}

static bool convert(const unit_type_t *ut, int64_t value, const char *from, const char *to,
                    double *out, const char **unit)
{
    const unit_t *fu = sniff(ut, from);
    if (!fu)
        return false;
    double v = (double)value * fu->factor;
    if (strcmp(to, "minimum") == 0 || strcmp(to, "auto") == 0) {
        double f = 0;
        const char *name = NULL;
        for (size_t i = 0; i < sizeof(ut->units) / sizeof(ut->units[0]) && ut->units[i].name;
             i++) {
            const unit_t *u = &ut->units[i];
            if (u->factor >= f && v / u->factor >= 1.0) {
                f = u->factor;
                name = u->name;
            }
        }
        if (f != 0) {
            *out = v / f;
            *unit = name;
            return true;
        }
        *out = v / ut->dflt.factor;
        *unit = ut->dflt.name;
        return true;
    }
    const unit_t *tu = sniff(ut, to);
    if (!tu)
        tu = &ut->dflt;
    *out = v / tu->factor;
    *unit = tu->name;
    return true;
}

double measure_scale(int64_t value, const char *from, const char *to, const char **unit)
{
    if (value < 0 && -value > 0) {
        double v = measure_scale(-value, from, to, unit);
        return -v;
    }
    for (size_t i = 0; i < N_TYPES; i++) {
        double v;
        if (convert(&unit_types[i], value, from, to, &v, unit))
            return v;
    }
    static const char *const boring[] = {"count", "sample", "unit", "minimum", "auto"};
    for (size_t i = 0; i < 5; i++)
        if (strcmp(to, boring[i]) == 0) {
            *unit = "";
            return (double)value;
        }
    *unit = to;
    return (double)value;
}

const char *measure_scaled_label(char *buf, size_t n, int64_t value, const char *from,
                                 const char *to)
{
    const char *u;
    double v = measure_scale(value, from, to, &u);
    char num[64];
    snprintf(num, sizeof(num), "%.2f", v);
    size_t l = strlen(num);
    if (l >= 3 && strcmp(num + l - 3, ".00") == 0)
        num[l - 3] = '\0';
    if (strcmp(num, "0") == 0 || strcmp(num, "-0") == 0)
        snprintf(buf, n, "0");
    else
        snprintf(buf, n, "%s%s", num, u);
    return buf;
}

const char *measure_label(char *buf, size_t n, int64_t value, const char *unit)
{
    return measure_scaled_label(buf, n, value, unit, "auto");
}

const char *measure_percentage(char *buf, size_t n, int64_t value, int64_t total)
{
    double ratio = 0;
    if (total != 0)
        ratio = fabs((double)value / (double)total) * 100;
    if (ratio >= 99.95 && ratio <= 100.05)
        snprintf(buf, n, "  100%%");
    else if (ratio >= 1.0)
        snprintf(buf, n, "%5.2f%%", ratio);
    else
        snprintf(buf, n, "%5.2g%%", ratio);
    return buf;
}

static bool same_family(const char *u1, const char *u2)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (sniff(&unit_types[i], u1) && sniff(&unit_types[i], u2))
            return true;
    return false;
}

bool measure_compatible(const char *t1, const char *u1, const char *t2, const char *u2)
{
    size_t l1 = strlen(t1), l2 = strlen(t2);
    if (l1 && t1[l1 - 1] == 's')
        l1--;
    if (l2 && t2[l2 - 1] == 's')
        l2--;
    if (l1 != l2 || memcmp(t1, t2, l1) != 0)
        return false;
    return strcmp(u1, u2) == 0 || same_family(u1, u2);
}

/* Formats v/10^prec with trailing zeros (and a bare dot) removed. */
static void frac(char *out, size_t n, uint64_t v, int prec)
{
    uint64_t p = 1;
    for (int i = 0; i < prec; i++)
        p *= 10;
    uint64_t ip = v / p, fp = v % p;
    if (fp == 0) {
        snprintf(out, n, "%llu", (unsigned long long)ip);
        return;
    }
    char digits[32];
    snprintf(digits, sizeof(digits), "%0*llu", prec, (unsigned long long)fp);
    size_t l = strlen(digits);
    while (l > 0 && digits[l - 1] == '0')
        digits[--l] = '\0';
    snprintf(out, n, "%llu.%s", (unsigned long long)ip, digits);
}

const char *measure_duration_string(char *buf, size_t n, int64_t d)
{
    bool neg = d < 0;
    uint64_t u = neg ? -(uint64_t)d : (uint64_t)d;
    char num[48];
    const char *sign = neg ? "-" : "";
    if (u == 0) {
        snprintf(buf, n, "0s");
    } else if (u < 1000000000ull) {
        /* Sub-second: ns, µs or ms with a fraction. */
        if (u < 1000) {
            snprintf(buf, n, "%s%lluns", sign, (unsigned long long)u);
        } else if (u < 1000000) {
            frac(num, sizeof(num), u, 3);
            snprintf(buf, n, "%s%s\xc2\xb5s", sign, num);
        } else {
            frac(num, sizeof(num), u, 6);
            snprintf(buf, n, "%s%sms", sign, num);
        }
    } else {
        uint64_t secs_ns = u % 60000000000ull;
        uint64_t mins = u / 60000000000ull;
        uint64_t hours = mins / 60;
        mins %= 60;
        frac(num, sizeof(num), secs_ns, 9);
        if (hours)
            snprintf(buf, n, "%s%lluh%llum%ss", sign, (unsigned long long)hours,
                     (unsigned long long)mins, num);
        else if (mins)
            snprintf(buf, n, "%s%llum%ss", sign, (unsigned long long)mins, num);
        else
            snprintf(buf, n, "%s%ss", sign, num);
    }
    return buf;
}
