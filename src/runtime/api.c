/* api.c — start-up and shut-down of the runtime, fork handling, and the
 * public functions of cprof.h.
 *
 * Start: a constructor, run before every other object's (-z initfirst, see
 * cprof_init), reads CPROF_*, maps the tables and only then sets the
 * sampling rate, so no sample is taken before everything it needs exists.
 * Allocations before that (the loader's own) are counted but not sampled.
 * Exit: a destructor ends the sessions recorded for the run and writes
 * each profile kind's file (profiles.h: every row with a variable set).
 * Tables are never torn down: threads still running during exit keep
 * allocating safely.
 * fork: every runtime lock is taken before fork and released after, in
 * both processes (lock order: buckets, livemap stripes, counters, the
 * threadcreate table and thread registry, the mutex and block tables, the
 * peak's snapshot lock, the label sets). A leak scan that another thread
 * runs at fork holds its locks in the child for good: the child frees
 * them. */
#include "cprof.h"

#include "arena.h"
#include "config.h"
#include "cpuprof.h"
#include "dump.h"
#include "flightrec.h"
#include "dumpsig.h"
#include "glibcheap.h"
#include "heap.h"
#include "heapprof.h"
#include "httpctl.h"
#include "labels.h"
#include "leaks.h"
#include "lockprof.h"
#include "heapoutput.h"
#include "mmaphooks.h"
#include "outfile.h"
#include "peak.h"
#include "profiles.h"
#include "rt.h"
#include "profwriter.h"
#include "push.h"
#include "sampler.h"
#include "session.h"
#include "sigmask.h"
#include "stackbounds.h"
#include "buckets.h"
#include "unwind.h"
#include "unwfds.h"
#include "threadprof.h"
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rt_config_t cfg;
static bool ready; /* tables exist: the rate may be nonzero */

static void fork_prepare(void)
{
    rt_self.guard++;
    buckets_fork_prepare();
    livemap_lock_all();
    counters_fork_prepare();
    threadprof_fork_prepare();
    lockprof_fork_prepare();
    peak_fork_prepare();
    labels_fork_prepare();
}

static void release(void)
{
    labels_fork_release();
    counters_fork_release();
    livemap_unlock_all();
    buckets_fork_release();
    rt_self.guard--;
}

static void fork_parent(void)
{
    peak_fork_parent();
    lockprof_fork_release();
    threadprof_fork_parent();
    release();
}

static void fork_child(void)
{
    peak_fork_child();
    leaks_fork_child();
    lockprof_fork_release();
    threadprof_fork_child(); /* the parent's other threads are gone */
    release();
    sampler_fork_child(&rt_self);
    flightrec_fork_child();
}

/* After every other child handler (cpuprof's, ownheap's: registered
 * earlier, they run earlier), when all of cprof's locks are free again:
 * the child may start threads of its own. */
static void fork_child_last(void)
{
    uint32_t g = rt_guard_enter();
    output_fork_child();
    dump_fork_child();
    rt_guard_leave(g);
}

/* Whether the program's malloc is this object's (preloaded or linked),
 * not the libc one a dlopen (cprof attach) leaves global. */
static bool hooks_global(void)
{
    Dl_info g, self;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    return m && dladdr(m, &g) && dladdr((const void *)hooks_global, &self) &&
           g.dli_fbase == self.dli_fbase;
}

/* libcprof.so is linked with -z initfirst: the loader runs this before
 * every other object's constructors (libc's and libstdc++'s included),
 * so the allocations they make are sampled too (libstdc++'s emergency
 * pool, a library's static tables). The C library's own start-up
 * (__libc_early_init: malloc, threads, TLS) is done by then, but not its
 * constructor, which sets environ and the program's name (%e in output
 * patterns; "" until then) from the same arguments, as here. */
__attribute__((constructor(101))) static void cprof_init(int argc, char **argv, char **envp)
{
    (void)argc;
    if (!environ && envp)
        environ = envp;
    if ((!program_invocation_name || !*program_invocation_name) && argv && argv[0]) {
        const char *slash = strrchr(argv[0], '/');
        program_invocation_name = argv[0];
        program_invocation_short_name = slash ? (char *)slash + 1 : argv[0];
    }
    uint32_t g = rt_guard_enter();
    rt_warn_init();
    stackbounds_init();
    config_read(&cfg, profile_kinds, profile_kinds_n);
    arena_set_limit(cfg.memory_limit);
    sampler_set_seed(cfg.seed);
    counters_init();
    unwfds_init(); /* before any other use of libunwind */
    sigmask_resolve(); /* no dlsym at a first call in a signal handler */
    dumpsig_resolve();
    mmaphooks_init();  /* before the program's first mmap */
    /* A kind that cannot be set up stays off: its start_env does nothing. */
    if (cfg.cpu_hz > 0)
        cpu_init(cfg.cpu_hz, cfg.depth);
    trace_init(cfg.trace_buffer);
    unwind_init(cfg.unwinder, cfg.depth, cfg.unwind_check);
    if (buckets_init() < 0 || livemap_init() < 0) {
        rt_warn("cannot map %llu bytes for its tables (CPROF_MEMORY_LIMIT); heap profiling is off",
                (unsigned long long)arena_limit());
    } else {
        ready = true;
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        /* The early chunks matter only to a scan of a process sampled
         * whole since its start (leaks.h): not otherwise worth a walk of
         * the heap, nor under attach, where the heap is the program's. */
        bool global = hooks_global();
        if (cfg.rate == 1 && global)
            glibcheap_note_start(); /* before the first sampled block */
        if (global)
            glibcheap_note_counts();
        leaks_note_rate(cfg.rate);
        leaks_set_suppressions(cfg.leak_suppress);
        heap_set_alloc_wrappers(cfg.alloc_wrappers);
        sampler_set_rate(cfg.rate);
        if (threadprof_init(cfg.depth) < 0)
            rt_warn("cannot track thread creation; no threadcreate profile");
        lockprof_set_mutex_rate(cfg.mutex_rate);
        lockprof_set_block_rate(cfg.block_rate);
        if (cfg.every > 0 && output_start_periodic(config_path(&cfg, "heap"),
                                                   config_path(&cfg, "memory"), cfg.every) < 0)
            rt_warn("cannot start the snapshot thread; no periodic snapshots");
        if (cfg.record > 0 && flightrec_init(cfg.record) < 0)
            rt_warn("cannot map the flight recorder's ring (CPROF_MEMORY_LIMIT); no recording");
        dump_init(&cfg);
    }
    for (size_t i = 0; i < profile_kinds_n; i++) {
        session_t *s = profile_kinds[i].session;
        if (s && s->start && cfg.path[i]) /* s->start: its module could bind it */
            session_start_env(s, cfg.path[i]);
    }
    /* After CPROF_CPU_PROFILE's session, which the deltas then follow. */
    push_start_from_env(session_cpu.start ? cfg.cpu_hz : 0, ready);
    httpctl_start_from_env();
    rt_guard_leave(g);
}

/* Runs after ownheap's constructor (102), which registers its fork
 * handlers. */
__attribute__((constructor(103))) static void cprof_init_last(void)
{
    if (ready)
        pthread_atfork(NULL, NULL, fork_child_last);
}

__attribute__((destructor)) static void cprof_fini(void)
{
    uint32_t g = rt_guard_enter();
    /* The sessions first, in the rows' order: the CPU profile's last
     * samples go into the trace. */
    for (size_t i = 0; i < profile_kinds_n; i++)
        if (profile_kinds[i].session)
            session_fini(profile_kinds[i].session);
    push_fini(); /* after the CPU session: its last delta is complete */
    output_stop_periodic();
    for (size_t i = 0; i < profile_kinds_n; i++) {
        const profile_kind_t *k = &profile_kinds[i];
        if (!ready || k->how == PROFILE_SESSION || !cfg.path[i])
            continue;
        int rc = profwriter_write_file(cfg.path[i], k->write);
        if (rc < 0)
            rt_warn("cannot write %s %s: %s", k->what, cfg.path[i], outfile_strerror(rc));
    }
    rt_guard_leave(g);
}

RT_EXPORT int cprof_set_rate(int64_t rate)
{
    if (rate < 0)
        return -EINVAL;
    if (!ready)
        return -ENOMEM;
    leaks_note_rate(rate);
    sampler_set_rate(rate);
    return 0;
}

RT_EXPORT int cprof_stats(cprof_stats_t *st)
{
    if (!st)
        return -EINVAL;
    heap_stats(st);
    return 0;
}

/* --- the profiles' public writers: a registry row's writer and levels --- */

/* A kind's profile to fd, as Go's pprof.Lookup(name).WriteTo(w, debug). */
static int write_kind_fd(const char *name, int fd, int debug)
{
    const profile_kind_t *k = profile_find(name);
    if (fd < 0 || debug < 0 || debug > k->max_debug)
        return -EINVAL;
    if (!ready)
        return -ENOMEM;
    uint32_t g = rt_guard_enter();
    int rc = k->write(fd, debug);
    rt_guard_leave(g);
    return rc;
}

/* A kind's profile to the file a pattern names. */
static int write_kind_file(const char *name, const char *path)
{
    if (!path || config_check_pattern(path) < 0)
        return -EINVAL;
    if (!ready)
        return -ENOMEM;
    uint32_t g = rt_guard_enter();
    int rc = profwriter_write_file(path, profile_find(name)->write);
    rt_guard_leave(g);
    return rc;
}

RT_EXPORT int cprof_heap_profile_write(const char *path)
{
    return write_kind_file("heap", path);
}

RT_EXPORT int cprof_heap_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("heap", fd, debug);
}

RT_EXPORT int cprof_peak_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("peak", fd, debug);
}

RT_EXPORT int cprof_peak_profile_write(const char *path)
{
    return write_kind_file("peak", path);
}

RT_EXPORT int cprof_peak_reset(void)
{
    if (!ready)
        return -ENOMEM;
    uint32_t g = rt_guard_enter();
    peak_reset();
    rt_guard_leave(g);
    return 0;
}

RT_EXPORT int cprof_leak_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("leaks", fd, debug);
}

RT_EXPORT int cprof_leak_profile_write(const char *path)
{
    return write_kind_file("leaks", path);
}

RT_EXPORT int cprof_memory_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("memory", fd, debug);
}

RT_EXPORT int cprof_memory_profile_write(const char *path)
{
    return write_kind_file("memory", path);
}

RT_EXPORT int cprof_threads_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("goroutine", fd, debug);
}

RT_EXPORT int cprof_threadcreate_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("threadcreate", fd, debug);
}

RT_EXPORT int cprof_mutex_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("mutex", fd, debug);
}

RT_EXPORT int cprof_block_profile_write_fd(int fd, int debug)
{
    return write_kind_fd("block", fd, debug);
}

RT_EXPORT int cprof_set_mutex_rate(int64_t rate)
{
    if (rate < 0)
        return -EINVAL;
    if (!ready)
        return -ENOMEM;
    lockprof_set_mutex_rate(rate);
    return 0;
}

RT_EXPORT int cprof_set_block_rate(int64_t rate_ns)
{
    if (rate_ns < 0)
        return -EINVAL;
    if (!ready)
        return -ENOMEM;
    lockprof_set_block_rate(rate_ns);
    return 0;
}
