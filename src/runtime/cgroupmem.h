/* cgroupmem.h — the memory of the process's cgroup v2, for
 * CPROF_DUMP_CGROUP (dump.h): memory.current against memory.max and
 * memory.high, and memory.events' high, max, oom and oom_kill counts.
 *
 * Owns: finding the cgroup (/proc/self/cgroup's "0::PATH" line under
 * /sys/fs/cgroup, or a directory a test gives) and reading its files; the
 * rule that says when a reading calls for a dump. cgroup v1 is not read
 * (its memory controller has other files and meanings).
 * Called from the dump thread (guard set): plain reads, no stdio, no lock. */
#ifndef CPROF_CGROUPMEM_H
#define CPROF_CGROUPMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char dir[4096];   /* the cgroup's directory */
} cgroupmem_t;

typedef struct {
    uint64_t current;          /* memory.current, bytes */
    uint64_t max, high;        /* memory.max, memory.high; UINT64_MAX: "max" */
    uint64_t ev_high, ev_max;  /* memory.events' counts */
    uint64_t ev_oom, ev_oom_kill;
} cgroupmem_state_t;

/* Finds the process's cgroup v2 with a memory controller (dir NULL), or
 * takes dir. 0, or -ENOENT (no cgroup v2, or its memory controller is not
 * enabled for it: no memory.current). */
int cgroupmem_open(cgroupmem_t *c, const char *dir);

/* Reads the files. 0 or a negative errno. */
int cgroupmem_read(const cgroupmem_t *c, cgroupmem_state_t *s);

/* Whether s calls for a dump after prev (the last reading; the first is
 * taken at start): current reached fraction of the lower of max and high,
 * having been below it, or a count of memory.events rose. why gets a
 * phrase for the announcement. */
bool cgroupmem_crossed(const cgroupmem_state_t *prev, const cgroupmem_state_t *s, double fraction,
                       char *why, size_t whylen);

#endif
