/* A mkstemp/mkdtemp template in the test's TMPDIR, which tests/run-one.sh
 * gives each test and removes after it, whatever the test left there; in
 * /tmp when a test runs by hand. */
#ifndef CPROF_TESTS_TMPNAME_H
#define CPROF_TESTS_TMPNAME_H

#include <stdio.h>
#include <stdlib.h>

static inline void tmpname(char *buf, size_t n, const char *stem)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/%s.XXXXXX", dir && *dir ? dir : "/tmp", stem);
}

#endif
