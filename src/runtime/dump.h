/* dump.h — profiles written at the moment something happens, not only at
 * exit: on a signal (CPROF_DUMP_SIGNAL), when the live heap or the
 * resident set crosses a step (CPROF_DUMP_INUSE, CPROF_DUMP_RSS), when the
 * cgroup's memory nears its limit (CPROF_DUMP_CGROUP, cgroupmem.h), and
 * once when an allocation fails (CPROF_DUMP_OOM).
 *
 * Owns: the dump thread ("cprof-dump"), the pending triggers, the
 * thresholds, the out-of-memory reserve. A dump writes every kind whose
 * variable names a file (profiles.h, the rows written whole: a session,
 * CPU or trace, is written at exit only), each to its pattern made a
 * series (config_series_pattern: %n, or ".N" added), all with one number
 * from profwriter's sequence, and says so in one stderr line.
 *
 * Threads and signals: a trigger only sets a bit in `pending` and wakes
 * the thread with the futex (dumpsig.c's handler, the sampled path through
 * dump_check_inuse): async-signal-safe, no lock, no allocation. The thread
 * runs guarded for its whole life, takes none of the program's signals,
 * and writes at most one dump per DUMP_MIN_GAP_NS (triggers meanwhile are
 * merged into the next). The out-of-memory dump runs on the thread whose
 * allocation failed, before the hook returns NULL, once: its address
 * space comes from a reserve mapped at start and unmapped then. A fork
 * child starts its own dump thread (dump_fork_child): a worker of a
 * preforking server dumps its own heap on its own signal (%p in the
 * patterns keeps the files apart). */
#ifndef CPROF_DUMP_H
#define CPROF_DUMP_H

#include "config.h"
#include "rt.h"

#include <stdbool.h>
#include <stdint.h>

/* Pending triggers: bits of dump_pending. */
enum { DUMP_SIGNAL = 1, DUMP_INUSE = 2, DUMP_RSS = 4, DUMP_CGROUP = 8 };

/* At most one dump per second: a signal storm or a heap crossing steps
 * quickly costs one profile set a second. */
#define DUMP_MIN_GAP_NS 1000000000ll

/* From cprof_init (guard set, tables ready): sets up what c asks for and
 * starts the thread if a trigger needs it. c stays valid for good. */
void dump_init(const rt_config_t *c);

/* In a forked child, once every cprof lock is free (api.c
 * fork_child_last): a dump thread of its own if the parent had one, no
 * trigger of the parent's pending. */
void dump_fork_child(void);

/* Sets trigger bits and wakes the thread; async-signal-safe. */
void dump_trigger_sigsafe(uint32_t bits);

/* The live heap's next step, UINT64_MAX when off. */
extern uint64_t dump_inuse_next __attribute__((visibility("hidden")));
void dump_inuse_crossed(uint64_t live);

/* On the sampled path, with the exact live bytes (peak.c has them): one
 * load and compare unless a step is crossed. */
static inline void dump_check_inuse(uint64_t live)
{
    if (RT_UNLIKELY(live >= __atomic_load_n(&dump_inuse_next, __ATOMIC_RELAXED)))
        dump_inuse_crossed(live);
}

/* Armed by CPROF_DUMP_OOM until its dump. */
extern int dump_oom_armed __attribute__((visibility("hidden")));
void dump_oom(void);

/* In a hook whose allocation returned NULL, before it returns. */
static inline void dump_on_null(void)
{
    if (RT_UNLIKELY(__atomic_load_n(&dump_oom_armed, __ATOMIC_RELAXED)))
        dump_oom();
}

/* dump_on_null, then NULL: for malloc's fast path, which tail-calls it
 * rather than keep its result across a call (a frame on every malloc). */
void *dump_null(void);

#endif
