/* config.h — the CPROF_* environment variables, read once at start.
 * Every value is validated; a bad one prints one line naming the variable
 * and what it accepts, and turns off what that variable controls (never
 * the program). Each profile kind's file comes from its row's variable
 * (profiles.h), all checked alike. secure_getenv only: safe before main
 * and inside the constructor; a setuid or setgid program (AT_SECURE) reads none of them
 * (nor does httpctl's CPROF_HTTP*), with one line if any was set. */
#ifndef CPROF_CONFIG_H
#define CPROF_CONFIG_H

#include "profiles.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t rate;             /* CPROF_RATE: bytes per sample, 0 off (default 524288) */
    int unwinder;             /* CPROF_UNWIND: UNWIND_CFI (default) | UNWIND_LIBUNWIND | UNWIND_FP */
    bool unwind_check;        /* CPROF_UNWIND_CHECK: compare every stack with a full unwind */
    int depth;                /* CPROF_DEPTH: 1..256 (default 64) */
    double every;             /* CPROF_HEAP_PROFILE_EVERY: seconds, 0 = none */
    uint64_t memory_limit;    /* CPROF_MEMORY_LIMIT: bytes (default 1 GiB) */
    uint64_t seed;            /* CPROF_SEED: 0 = from the clock */
    int cpu_hz;               /* CPROF_CPU_HZ: CPU samples per second (default 100) */
    int64_t mutex_rate;       /* CPROF_MUTEX_RATE: 1 in N contentions recorded, 0 off */
    int64_t block_rate;       /* CPROF_BLOCK_RATE: nanoseconds blocked per sample, 0 off */
    const char *leak_suppress; /* CPROF_LEAK_SUPPRESS: LSan suppressions file, or NULL */
    /* CPROF_ALLOC_WRAPPERS: a regular expression (pprof's, anchored) of the
     * program's allocation wrappers, written as the heap-layout profiles'
     * drop_frames; NULL: the built-in list (heapprof.h); "": none. */
    const char *alloc_wrappers;
    uint64_t trace_buffer;    /* CPROF_TRACE_BUFFER: bytes of trace buffers (default 16 MiB) */
    /* Dumps on triggers (dump.h); each 0/false: off. */
    int dump_signal;          /* CPROF_DUMP_SIGNAL: a signal number */
    uint64_t dump_inuse;      /* CPROF_DUMP_INUSE: bytes, the live heap's step */
    uint64_t dump_rss;        /* CPROF_DUMP_RSS: bytes, the resident set's step */
    bool dump_oom;            /* CPROF_DUMP_OOM=1: once, when an allocation fails */
    double dump_cgroup;       /* CPROF_DUMP_CGROUP: fraction of the cgroup's limit */
    int64_t record;           /* CPROF_RECORD: ns of heap events kept (flightrec.h), 0 off */
    /* Each profile kind's variable (profiles.h: kinds[i].env), the file
     * pattern made absolute, or NULL (unset, invalid, or a kind without). */
    const profile_kind_t *kinds;
    size_t n_kinds;
    const char *path[PROFILE_KINDS_MAX];
} rt_config_t;

/* Reads every variable: the settings above, and the pattern of each of the
 * n kinds (at most PROFILE_KINDS_MAX; the registry's, or a test's). */
void config_read(rt_config_t *c, const profile_kind_t *kinds, size_t n);

/* The pattern of the kind named name, or NULL. */
const char *config_path(const rt_config_t *c, const char *name);

/* Seconds as a plain decimal number ("5", "0.25") within [min, max]: no
 * sign, space, exponent, hex or infinity. Also push.h's interval. */
bool config_parse_seconds(const char *s, double min, double max, double *out);

/* Checks a file-name pattern (%p %e %t %n %%); 0 or -EINVAL. */
int config_check_pattern(const char *pattern);

/* A pattern for a series of files: pattern itself when it has %n, else
 * with ".%n" before a trailing ".pb.gz" (or at its end). 0 or
 * -ENAMETOOLONG. */
int config_series_pattern(const char *pattern, char *out, size_t outlen);

/* Expands %p %e %t %n(seq) %% into out. -EINVAL or -ENAMETOOLONG. */
int config_expand_pattern(const char *pattern, uint64_t seq, char *out, size_t outlen);

#endif
