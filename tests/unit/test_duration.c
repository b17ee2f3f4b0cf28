// links: src/base/duration.c
/* test_duration.c — duration_parse against Go's time.ParseDuration. */
#include "base/duration.h"

#include <stdio.h>

static int failures;

static void want(const char *s, bool ok, int64_t ns)
{
    int64_t got = -1;
    bool r = duration_parse(s, &got);
    if (r != ok || (ok && got != ns)) {
        printf("FAIL: duration_parse(\"%s\") = %d, %lld; want %d, %lld\n", s, r, (long long)got,
               ok, (long long)ns);
        failures++;
    }
}

int main(void)
{
    want("0", true, 0);
    want("10m", true, 600000000000);
    want("1h30m", true, 5400000000000);
    want("1.5s", true, 1500000000);
    want("250ms", true, 250000000);
    want("3us", true, 3000);
    want("7ns", true, 7);
    want(".5s", true, 500000000);
    want("", false, 0);
    want("10", false, 0);
    want("-1s", false, 0);
    want("1x", false, 0);
    want("s", false, 0);
    want("9999999999h", false, 0);
    if (!failures)
        printf("ok\n");
    return failures != 0;
}
