/* cprof.h — the public C API of libcprof, Go's pprof profiling for C and C++.
 *
 * Link with -lcprof (pkg-config cprof), or LD_PRELOAD libcprof.so into an
 * unmodified program and drive it with CPROF_* environment variables.
 * Every function here is thread-safe, may be called at any time (also before
 * main), never aborts the program, and returns 0 or a negative errno.
 */
#ifndef CPROF_H
#define CPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CPROF_VERSION "0.1.0"

/* Whole-process allocation counters, exact (not sampled). Byte counts are
 * the allocator's usable sizes (malloc_usable_size), as Go's MemStats counts
 * size-class bytes. */
typedef struct {
    uint64_t mallocs;           /* allocations made (malloc, calloc, realloc, aligned) */
    uint64_t frees;             /* blocks released (free, realloc) */
    uint64_t total_alloc_bytes; /* bytes ever allocated */
    uint64_t live_bytes;        /* bytes allocated and not yet freed */
    uint64_t live_objects;      /* mallocs - frees */
    int64_t rate;               /* bytes between samples; 0 = off, 1 = every allocation */
    uint64_t sampled_allocs;    /* allocations recorded in the profile */
    uint64_t sampled_frees;     /* frees of recorded allocations */
    uint64_t dropped_samples;   /* samples not recorded because a table was full */
    uint64_t stack_buckets;     /* heap profile buckets: distinct (stack, size, rate) recorded,
                                 * one per stack at rate 1 */
    uint64_t profiler_bytes;    /* memory cprof itself holds (mapped for its tables) */
    uint64_t profiler_limit;    /* the bound on profiler_bytes */
} cprof_stats_t;

/* Sets the heap sampling rate in bytes (Go's MemProfileRate): 0 turns heap
 * profiling off, 1 records every allocation, default 524288. -EINVAL if
 * rate < 0. Already-recorded samples keep counting their frees, and keep
 * the rate they were taken at: profiles scale each sample by its own rate. */
int cprof_set_rate(int64_t rate);

/* Fills *st with the current counters. */
int cprof_stats(cprof_stats_t *st);

/* --- Allocation limits for unit tests ----------------------------------------
 *
 * CPROF_ALLOC_LIMIT(max_objects, max_bytes) { code } runs code and then fails
 * when it allocated more than max_objects blocks or max_bytes bytes on this
 * thread, exactly (the per-thread counters, not the sampled profile): every
 * malloc, calloc, realloc, aligned allocation and C++ new counts, frees do
 * not, other threads' allocations never do. Bytes are usable sizes
 * (malloc_usable_size), as cprof_stats counts them. Leave the block at its
 * end or with continue: break, return or goto skip the check.
 *
 * A failure writes one line to stderr ("cprof: FILE:LINE: allocation limit
 * exceeded: ...") and calls the handler set with
 * cprof_set_alloc_limit_handler (a test framework's fail function, e.g.
 * cmocka's fail_msg("%s", message)), or abort() when none is set.
 *
 * Without libcprof (neither linked nor preloaded into a PIE program) the
 * declarations below are weak and null: the block runs its code and checks
 * nothing. While cprof is detached (cprof detach) it checks nothing either. */
typedef struct {
    uint64_t objects, bytes; /* the count at the start, then the block's own */
    uint64_t max_objects, max_bytes;
    const char *file;
    int line;
    int done; /* the block ran */
    int rc;   /* 0: counted; negative errno: not checked (-ENOSYS: no libcprof) */
} cprof_alloc_limit_t;

#if defined(CPROF__RUNTIME)
#define CPROF__WEAK
#else
#define CPROF__WEAK __attribute__((weak))
#endif

/* This thread's allocations so far (blocks and usable bytes); only the
 * difference of two calls on one thread means something. -EINVAL, or
 * -ENOTCONN while cprof is detached. */
int cprof_thread_allocs(uint64_t *objects, uint64_t *bytes) CPROF__WEAK;
/* The failure of a block: the message, then the handler or abort(). */
void cprof_alloc_limit_failed(const cprof_alloc_limit_t *l) CPROF__WEAK;
/* Sets the handler of failures (NULL: abort()); returns the previous one.
 * It gets the line written to stderr, without its newline. */
typedef void (*cprof_alloc_limit_handler_t)(const char *message);
cprof_alloc_limit_handler_t cprof_set_alloc_limit_handler(cprof_alloc_limit_handler_t h) CPROF__WEAK;

#if !defined(CPROF__RUNTIME)
static inline cprof_alloc_limit_t cprof__alloc_limit_begin(uint64_t max_objects, uint64_t max_bytes,
                                                           const char *file, int line)
{
    cprof_alloc_limit_t l = {0, 0, max_objects, max_bytes, file, line, 0, -38 /* ENOSYS */};
    if (cprof_thread_allocs)
        l.rc = cprof_thread_allocs(&l.objects, &l.bytes);
    return l;
}

static inline void cprof__alloc_limit_end(cprof_alloc_limit_t *l)
{
    uint64_t objects, bytes;
    l->done = 1;
    if (l->rc < 0 || (l->rc = cprof_thread_allocs(&objects, &bytes)) < 0)
        return;
    l->objects = objects - l->objects;
    l->bytes = bytes - l->bytes;
    if (l->objects > l->max_objects || l->bytes > l->max_bytes)
        cprof_alloc_limit_failed(l);
}

#define CPROF__CAT2(a, b) a##b
#define CPROF__CAT(a, b) CPROF__CAT2(a, b)
#define CPROF_ALLOC_LIMIT(max_objects, max_bytes)                                              \
    for (cprof_alloc_limit_t CPROF__CAT(cprof__limit_, __LINE__) =                             \
             cprof__alloc_limit_begin((max_objects), (max_bytes), __FILE__, __LINE__);         \
         !CPROF__CAT(cprof__limit_, __LINE__).done;                                            \
         cprof__alloc_limit_end(&CPROF__CAT(cprof__limit_, __LINE__)))
#endif

/* Writes the heap profile to path (pattern expansion: %p pid, %e program
 * name, %t unix time, %n sequence number; %% a percent sign), gzipped
 * profile.proto, atomically (temporary file + rename). */
int cprof_heap_profile_write(const char *path);

/* Writes the heap profile to fd: debug=0 gzipped profile.proto, debug=1 the
 * legacy text form of Go's /debug/pprof/heap?debug=1 with the statistics
 * block. */
int cprof_heap_profile_write_fd(int fd, int debug);

/* Peak profile: the heap profile (Go's four sample types) as it was when
 * the exact live bytes were at their highest since the start or the last
 * cprof_peak_reset — the sampled objects live at that moment, scaled as in
 * the heap profile; a comment gives the exact peak bytes and its time.
 * Exact at CPROF_RATE=1 in a single-threaded program
 * (docs/peak-temporaries-leaks.md: how close it is otherwise). write:
 * path patterns as cprof_heap_profile_write; write_fd: debug 0 gzipped
 * profile.proto, 1 the legacy text. reset: the peak becomes
 * the heap now. */
int cprof_peak_profile_write(const char *path);
int cprof_peak_profile_write_fd(int fd, int debug);
int cprof_peak_reset(void);

/* Leak profile: the sampled objects still live that no pointer reaches, found
 * by a conservative scan of the roots (writable data of every loaded object,
 * thread stacks, registers and static TLS) and of the live sampled objects,
 * as LeakSanitizer defines a leak; the other threads are stopped while
 * memory is read. Go's heap profile layout: alloc_* and inuse_* both count
 * the unreachable objects (scaled as in the heap profile); a comment counts
 * the reachable ones and says how the scan went. CPROF_LEAK_SUPPRESS applies.
 * docs/peak-temporaries-leaks.md says what is exact and what is
 * conservative. write: path patterns as cprof_heap_profile_write;
 * write_fd: debug 0 gzipped profile.proto, 1 the legacy text. */
int cprof_leak_profile_write(const char *path);
int cprof_leak_profile_write_fd(int fd, int debug);

/* The memory profile: the whole process's memory by class (label class=
 * heap, heap-free, allocator, mmap, stack, file, code, cprof, other), its
 * samples adding up to /proc/self/smaps's Rss (resident_space, the default)
 * and Size (virtual_space), and swap_space; docs/memory.md. write: path
 * patterns as cprof_heap_profile_write; write_fd: debug 0 gzipped profile.proto, 1 a text of the classes. */
int cprof_memory_profile_write(const char *path);
int cprof_memory_profile_write_fd(int fd, int debug);

/* CPU profile, as Go's pprof.StartCPUProfile: every thread sampled
 * CPROF_CPU_HZ times per second of the CPU time it uses (default 100), on
 * its own CPU-time clock. cprof_cpu_start begins profiling into path (the
 * patterns of cprof_heap_profile_write; a relative path is taken from the
 * current directory now), cprof_cpu_stop ends it and writes the gzipped
 * profile.proto there atomically. One profile at a time, also counting
 * CPROF_CPU_PROFILE and /debug/pprof/profile: -EBUSY while one runs.
 * start: 0, -EINVAL (bad pattern), -EBUSY, -ENOTSUP (CPROF_CPU_HZ was
 * invalid), or the errno of creating the file. stop: 0, -ENOTCONN if none
 * runs, or the errno of writing. A profile still running at exit is
 * written then. */
int cprof_cpu_start(const char *path);
int cprof_cpu_stop(void);

/* Threads profile (Go's goroutine profile, for threads): every thread of
 * the program with its stack, name and state, each stack taken by the
 * thread itself in a handler of a real-time signal (see
 * docs/threads-and-locks.md). debug=0
 * gzipped profile.proto (sample type goroutine/count, label thread=NAME),
 * 1 the grouped text "goroutine profile: total N", 2 one block per thread
 * ("thread TID "NAME" [STATE]:", frames, "created by"). Threads that block
 * the signal or do not answer within a second are listed without a stack. */
int cprof_threads_profile_write_fd(int fd, int debug);

/* Thread creation profile (Go's threadcreate): the stacks that created the
 * live threads (through pthread_create), with counts. debug 0 or 1. */
int cprof_threadcreate_profile_write_fd(int fd, int debug);

/* Mutex profile (Go's SetMutexProfileFraction): with rate N, one in N
 * contended pthread_mutex/rwlock lock calls on average is recorded with
 * the waiter's stack and the time it waited; 0 turns it off (default), 1
 * records every contention. -EINVAL if rate < 0. */
int cprof_set_mutex_rate(int64_t rate);

/* Block profile (Go's SetBlockProfileRate): time blocked in
 * pthread_cond_*wait and contended lock calls, one sample per rate_ns
 * nanoseconds blocked on average (an event of rate_ns or more always);
 * 0 off (default), 1 every event. -EINVAL if rate_ns < 0. */
int cprof_set_block_rate(int64_t rate_ns);

/* Mutex and block profiles: debug=0 gzipped profile.proto (contentions/
 * count, delay/nanoseconds), 1 Go's "--- mutex:" / "--- contention:" text. */
int cprof_mutex_profile_write_fd(int fd, int debug);
int cprof_block_profile_write_fd(int fd, int debug);

/* Execution trace, as Go's runtime/trace.Start: every thread's life
 * (created, running, blocked on a lock, condition variable, semaphore or
 * join), the live heap, CPU samples while a CPU profile runs, and the user
 * annotations below, in Go 1.19's trace format for `go tool trace`.
 * cprof_trace_start traces into path (the patterns of
 * cprof_heap_profile_write), cprof_trace_stop completes the file. One
 * trace at a time, also counting CPROF_TRACE and /debug/pprof/trace:
 * start: 0, -EINVAL (bad pattern), -EBUSY, or the errno of creating the
 * file; stop: 0, -ENOTCONN if none runs, or the errno of writing. A trace
 * still running at exit is written then. */
int cprof_trace_start(const char *path);
int cprof_trace_stop(void);

/* User annotations of the trace, as runtime/trace's NewTask, StartRegion
 * and Log: each costs one branch when no trace runs (and then does nothing:
 * -ENOTCONN). task_begin returns the new task's id (child of parent, 0 for
 * none), or 0 when no trace runs; regions nest per thread and belong to a
 * task (0: none); log records category and message. Names and categories
 * are interned (the first 4096 distinct ones); strings are cut at 1024
 * bytes. */
uint64_t cprof_trace_task_begin(uint64_t parent, const char *name);
int cprof_trace_task_end(uint64_t task);
int cprof_trace_region_begin(uint64_t task, const char *name);
int cprof_trace_region_end(uint64_t task, const char *name);
int cprof_trace_log(uint64_t task, const char *category, const char *message);

/* Profiler labels, as Go's pprof.Do / pprof.Labels: key=value pairs of
 * the calling thread that every sample it takes while they are set
 * carries as pprof string labels — CPU samples, heap allocations (kept
 * with the object: inuse, peak and leak profiles show the labels of the
 * code that allocated it), mutex and block waits, the threads profile,
 * and the regions of an execution trace — so that `pprof -tagfocus`
 * isolates a request, a tenant or an endpoint (docs/labels.md).
 * OpenTelemetry's span profiles correlate through the keys "trace_id" and
 * "span_id" (hex, as OpenTelemetry writes them).
 * push adds key=value to the thread's labels (replacing the key's value
 * if set) until the matching pop; pushes nest. Keys and values are copied
 * (cut at 1024 bytes). With no label set a sample costs one thread-local
 * load more. Bounds: 65535 distinct pushes (labels before, key, value) a
 * process, 32 labels a set; a push past them (or past CPROF_MEMORY_LIMIT)
 * leaves the labels as they were, returns -ENOSPC and warns once. Every
 * push is undone by one pop, whatever it returned: unchecked pairs stay
 * balanced. push: 0, -EINVAL (NULL), -ENOSPC; pop: 0, -ENOENT (nothing
 * pushed). Signal handlers may not push or pop. A link
 * dependency, as every function here (docs/labels.md: running without
 * libcprof). */
int cprof_labels_push(const char *key, const char *value);
int cprof_labels_pop(void);

/* The /debug/pprof/ endpoints of Go's net/http/pprof, served by a thread of
 * this process (libcprof-http.so, loaded on first use from the directory
 * libcprof.so was loaded from). addr is HOST:PORT: a numeric IPv4 address,
 * [IPv6], "localhost" or nothing (127.0.0.1) as HOST, and PORT 0 for any
 * free port. CPROF_HTTP_TOKEN and CPROF_HTTP_ADDR_FILE apply as for
 * CPROF_HTTP. One server per process: -EALREADY if one runs, -EINVAL for a
 * bad address, -ENOENT if libcprof-http.so cannot be loaded, or the errno
 * of socket/bind/listen. */
int cprof_http_start(const char *addr);

/* Stops the server and closes its sockets; -ENOTCONN if none runs. */
int cprof_http_stop(void);

/* The port the server listens on, or -ENOTCONN if none runs. */
int cprof_http_port(void);

#ifdef __cplusplus
}
#endif
#ifdef __cplusplus
/* C++: labels for a scope, as pprof.Do's function body:
 *     { cprof::label_scope l("kind", "a"); handle(request); } */
namespace cprof {
class label_scope {
public:
    label_scope(const char *key, const char *value) { cprof_labels_push(key, value); }
    ~label_scope() { cprof_labels_pop(); }
    label_scope(const label_scope &) = delete;
    label_scope &operator=(const label_scope &) = delete;
};
} // namespace cprof
#endif
#endif
