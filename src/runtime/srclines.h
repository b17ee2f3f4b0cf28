/* srclines.h — source file and line of code addresses, from the DWARF
 * line tables of the objects loaded in the process, for the execution
 * trace's stacks (tracewriter.c writes them at the trace's end).
 *
 * libcprof.so does not link libdw: it is loaded with dlopen at the first
 * use (libdw.so.1; the cprof tool links it, so it is there wherever the
 * tool is installed). Without it, or for an object without DWARF (no -g,
 * no separate debug file is looked for: no network, no debuginfod),
 * there are no lines and the caller keeps the object as the file.
 *
 * Threads: for cprof's own threads only (the trace's writer), guard set:
 * libdw allocates with malloc and reads the objects' files. Not for
 * signal handlers; one srclines_t per thread at a time. */
#ifndef CPROF_SRCLINES_H
#define CPROF_SRCLINES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct srclines srclines_t;

/* The process's objects as they are mapped now, or NULL (no libdw, out of
 * memory). */
srclines_t *srclines_open(void);

/* The file (absolute when the compilation's directory is known) and line
 * of the instruction at pc: true and *file (valid until the next lookup)
 * and *line set, or false when unknown. */
bool srclines_lookup(srclines_t *s, uintptr_t pc, const char **file, int *line);

void srclines_close(srclines_t *s);

#endif
