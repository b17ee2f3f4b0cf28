/* rx.h — the regular expressions of pprof's options (-focus, -list, ...).
 *
 * pprof takes Go (RE2) syntax. A pattern is first parsed by Go's rules
 * (regexp/syntax: what it accepts, and its error messages), which also
 * rewrites it into an equivalent PCRE2 pattern; PCRE2 then does the
 * matching. Matching is unanchored, like Go's MatchString. */
#ifndef CPROF_TOOL_RX_H
#define CPROF_TOOL_RX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rx rx_t;

/* Compiles pattern; NULL on failure, with Go's message in err
 * ("error parsing regexp: missing closing ): `(abc`"). */
rx_t *rx_compile(const char *pattern, char *err, size_t errlen);
bool rx_match(const rx_t *rx, const char *s);
const char *rx_pattern(const rx_t *rx);
void rx_free(rx_t *rx);

#endif
