/* rx.h — the regular expressions of pprof's options (-focus, -list, ...).
 *
 * pprof takes Go (RE2) syntax. We compile with POSIX extended regexps after
 * translating the RE2 spellings people use in practice: \d \w \s (and their
 * negations, also inside brackets), (?: ... ), a leading (?i), lazy
 * quantifiers (same match/no-match answer) and escapes of punctuation inside
 * brackets. Matching is unanchored, like Go's MatchString. */
#ifndef CPROF_TOOL_RX_H
#define CPROF_TOOL_RX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rx rx_t;

/* Compiles pattern; NULL with a message in err on failure. */
rx_t *rx_compile(const char *pattern, char *err, size_t errlen);
bool rx_match(const rx_t *rx, const char *s);
const char *rx_pattern(const rx_t *rx);
void rx_free(rx_t *rx);

#endif
