/* profiles.c — the registry's rows (see profiles.h): one per profile kind,
 * sorted by name, each naming its module's functions. */
#include "profiles.h"

#include "flightrec.h"
#include "heap.h"
#include "leaks.h"
#include "lifetimes.h"
#include "lockprof.h"
#include "heapoutput.h"
#include "memprof.h"
#include "peak.h"
#include "session.h"
#include "threadprof.h"

#include "cprof.h"

#include <string.h>

/* The heap, allocs and peak rows' count on the index page: the stack
 * buckets (Go counts the heap profile's records). */
static size_t count_buckets(void)
{
    cprof_stats_t st = {0};
    heap_stats(&st);
    return (size_t)st.stack_buckets;
}

/* The file-pattern kinds print "no <what> is written" for a bad value and
 * "cannot write <what> PATH" at exit. */
const profile_kind_t profile_kinds[] = {
    {
        .name = "allocs",
        .desc = "A sampling of all past memory allocations",
        .how = PROFILE_HEAP,
        .params = PROFILE_P_DELTA | PROFILE_P_GC | PROFILE_P_DEBUG,
        .what = "allocs profile",
        .write = output_write_heap_fd,
        .max_debug = 1,
        .count = count_buckets,
        .sample_type = "alloc_space",
    },
    {
        .name = "block",
        .desc = "Stack traces that led to blocking on synchronization primitives",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DELTA | PROFILE_P_DEBUG,
        .env = "CPROF_BLOCK_PROFILE",
        .what = "block profile",
        .write = lockprof_write_block,
        .max_debug = 1,
        .count = lockprof_count_block,
    },
    {
        .name = "goroutine",
        .desc = "Stack traces of all current threads",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DELTA | PROFILE_P_DEBUG,
        .what = "threads profile",
        .write = threadprof_write_threads,
        .max_debug = 2,
        .count = threadprof_count_threads,
    },
    {
        .name = "heap",
        .desc = "A sampling of memory allocations of live objects. You can specify the gc GET "
                "parameter to run GC before taking the heap sample.",
        .how = PROFILE_HEAP,
        .params = PROFILE_P_DELTA | PROFILE_P_GC | PROFILE_P_DEBUG,
        .env = "CPROF_HEAP_PROFILE",
        .what = "heap profile",
        .write = output_write_heap_fd,
        .max_debug = 1,
        .count = count_buckets,
    },
    /* cprof's own: no delta (a scan) */
    {
        .name = "leaks",
        .desc = "Sampled objects still live that no pointer reaches (a conservative scan of "
                "memory; the other threads are stopped while it reads)",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DEBUG,
        .env = "CPROF_LEAK_PROFILE",
        .what = "leak profile",
        .write = leaks_write,
        .max_debug = 1,
#ifndef __GLIBC__ /* its scan misses musl's roots: every block would be a leak */
        .off = "the musl build of libcprof.so has no leak scan",
#endif
    },
    /* cprof's own: from the flight recorder's events (lifetimes.h) */
    {
        .name = "lifetimes",
        .desc = "How long sampled objects lived, per allocation stack, labelled freed=same-thread, "
                "other-thread or live (live ones counted up to now); needs CPROF_RECORD",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DEBUG,
        .env = "CPROF_LIFETIME_PROFILE",
        .what = "lifetime profile",
        .write = lifetimes_write,
        .max_debug = 1,
    },
    /* cprof's own: the whole process's memory, by class (memprof.h) */
    {
        .name = "memory",
        .desc = "The whole process's memory by class (heap, heap-free, allocator, mmap, stack, "
                "file, code, cprof, other), adding up to its resident and virtual size",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DEBUG,
        .env = "CPROF_MEMORY_PROFILE",
        .what = "memory profile",
        .write = memprof_write,
        .max_debug = 1,
    },
    {
        .name = "mutex",
        .desc = "Stack traces of threads waiting for contended mutexes",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DELTA | PROFILE_P_DEBUG,
        .env = "CPROF_MUTEX_PROFILE",
        .what = "mutex profile",
        .write = lockprof_write_mutex,
        .max_debug = 1,
        .count = lockprof_count_mutex,
    },
    /* cprof's own: no delta (a high) */
    {
        .name = "peak",
        .desc = "The heap profile as it was when the live bytes were at their highest. You can "
                "specify reset=1 to start a new window after this one.",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DEBUG | PROFILE_P_RESET,
        .env = "CPROF_PEAK_PROFILE",
        .what = "peak profile",
        .write = output_write_peak_fd,
        .max_debug = 1,
        .count = count_buckets,
        .reset = peak_reset,
    },
    {
        .name = "profile",
        .desc = "CPU profile. You can specify the duration in the seconds GET parameter. After "
                "you get the profile file, use the go tool pprof command to investigate the "
                "profile.",
        .how = PROFILE_SESSION,
        .params = PROFILE_P_SECONDS,
        .env = "CPROF_CPU_PROFILE",
        .what = "CPU profile",
        .start = session_cpu_start_fd,
        .stop = session_cpu_stop,
        .session = &session_cpu,
        .enable = "CPU profiling",
        .busy = "cpu profiling already in use",
    },
    {
        .name = "threadcreate",
        .desc = "Stack traces that led to the creation of new OS threads",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DELTA | PROFILE_P_DEBUG,
        .what = "threadcreate profile",
        .write = threadprof_write_threadcreate,
        .max_debug = 1,
        .count = threadprof_count_threadcreate,
    },
    {
        .name = "trace",
        .desc = "A trace of execution of the current program. You can specify the duration in "
                "the seconds GET parameter. After you get the trace file, use the go tool trace "
                "command to investigate the trace.",
        .how = PROFILE_SESSION,
        .params = PROFILE_P_TRACE_SECONDS | PROFILE_P_STREAM,
        .env = "CPROF_TRACE",
        .what = "trace",
        .start = session_trace_start_fd,
        .stop = session_trace_stop,
        .session = &session_trace,
        .enable = "tracing",
        .busy = "tracing is already enabled",
    },
    /* cprof's own: the flight recorder's last CPROF_RECORD (flightrec.h);
     * /debug/pprof/heap?window= asks it for any other window */
    {
        .name = "window",
        .desc = "The heap's flight recorder (CPROF_RECORD): what was allocated over the recorded "
                "time and is live, its high, what was freed. heap?window=START,END asks for "
                "another window.",
        .how = PROFILE_WHOLE,
        .params = PROFILE_P_DEBUG,
        .env = "CPROF_WINDOW_PROFILE",
        .what = "window profile",
        .write = flightrec_write_fd,
        .max_debug = 1,
    },
};

const size_t profile_kinds_n = sizeof(profile_kinds) / sizeof(profile_kinds[0]);

_Static_assert(sizeof(profile_kinds) / sizeof(profile_kinds[0]) <= PROFILE_KINDS_MAX,
               "config.h keeps PROFILE_KINDS_MAX paths: raise it");

const profile_kind_t *profile_find(const char *name)
{
    for (size_t i = 0; i < profile_kinds_n; i++)
        if (strcmp(profile_kinds[i].name, name) == 0)
            return &profile_kinds[i];
    return NULL;
}
