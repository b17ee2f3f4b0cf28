/* procmaps.h — the executable mappings of this process, for a profile's
 * Mapping table: each r-xp line of /proc/self/maps (start, limit, file
 * offset, path), the GNU build id read from the loaded object's notes in
 * memory, and the main executable first, as pprof expects.
 * Called with the guard set (it allocates); not for signal handlers. */
#ifndef CPROF_PROCMAPS_H
#define CPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    uint64_t start, limit, offset;
    char *path;     /* "" for anonymous mappings named by the kernel: [vdso] */
    char build_id[41]; /* lowercase hex, or "" */
} procmap_t;

/* Reads the mappings; *out is an array of *n entries sorted by start
 * except that the main executable's come first. Free with procmaps_free. */
int procmaps_read(procmap_t **out, size_t *n);
void procmaps_free(procmap_t *m, size_t n);

/* The entry containing addr, or NULL. */
const procmap_t *procmaps_find(const procmap_t *m, size_t n, uint64_t addr);

/* Reads the whole of a /proc file (they report size 0) into a malloc'd,
 * NUL-terminated buffer. */
char *procmaps_slurp(const char *path, size_t *len);

/* Whether thread tid blocks signal sig (PROCMAPS_SIG_BLOCKED) and has it
 * pending already (PROCMAPS_SIG_PENDING), from its /proc status; -1 if the
 * thread is gone or a zombie. Does not allocate. */
enum { PROCMAPS_SIG_BLOCKED = 1, PROCMAPS_SIG_PENDING = 2 };
int procmaps_task_signal(pid_t tid, int sig);

/* A small /proc file into buf (NUL-terminated, cut at cap - 1 bytes) with
 * one read: no allocation, so usable while threads are stopped. Returns
 * its length, or -1. */
ssize_t procmaps_read_small(const char *path, char *buf, size_t cap);

#endif
