/* gopclntab.h — function names and source lines of Go binaries from their
 * .gopclntab section, which Go keeps even in binaries linked with -s -w
 * (no DWARF, no symbol table). go tool pprof symbolizes Go code this way,
 * e.g. a legacy ?debug=1 heap profile given with its binary.
 *
 * Formats: Go 1.16/1.17 and Go 1.18 and later (1.20's layout differs only
 * in fields not read here). No inline frames: their tables are addressed
 * through runtime symbols that stripped binaries lack; go tool pprof does
 * not show them from this table either.
 *
 * The table is untrusted input: every offset is bounds-checked, a bad table
 * gives no answer, never a read outside it. No allocation after open.
 */
#ifndef CPROF_TOOL_GOPCLNTAB_H
#define CPROF_TOOL_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct gopcln gopcln_t;

/* Reads the header of a .gopclntab section (data stays the caller's and
 * must outlive the table); text_start is the address of .text. 0, or
 * -EINVAL for an unknown or broken header, -ENOMEM. */
int gopcln_open(const uint8_t *data, size_t len, uint64_t text_start, gopcln_t **out);
void gopcln_close(gopcln_t *t);

/* The function containing pc (a link-time address) with the file and line
 * of pc. Strings point into the table. 0 if found, -ENOENT if not. */
int gopcln_lookup(const gopcln_t *t, uint64_t pc, const char **func, const char **file,
                  int64_t *line);

#endif
