/* dump.c — dumps on triggers (see dump.h). */
#include "dump.h"

#include "cgroupmem.h"
#include "dumpsig.h"
#include "outfile.h"
#include "profiles.h"
#include "profwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint64_t dump_inuse_next = UINT64_MAX;
int dump_oom_armed;

static const rt_config_t *cfg;
static uint32_t pending;       /* DUMP_* bits; the futex word */
static uint64_t inuse_seen;    /* live bytes when the last step was crossed */
static uint64_t rss_next = UINT64_MAX, rss_seen;
static bool cgroup_on;         /* CPROF_DUMP_CGROUP, and the cgroup was found */
static cgroupmem_t cgroup;
static cgroupmem_state_t cgroup_last;
static char cgroup_why[200];
static void *reserve;          /* address space the out-of-memory dump frees, and
                                * takes back */
#define RESERVE_SIZE (8u << 20) /* for the writers' mmaps: their buffers are in the
                                    * private heap, reserved at start too */

void dump_trigger_sigsafe(uint32_t bits)
{
    __atomic_or_fetch(&pending, bits, __ATOMIC_RELEASE);
    rt_futex_wake(&pending, 1);
}

/* The first step at or above v, past v: gperftools' inuse interval. */
static uint64_t step_after(uint64_t v, uint64_t step)
{
    return (v / step + 1) * step;
}

void dump_inuse_crossed(uint64_t live)
{
    uint64_t next = __atomic_load_n(&dump_inuse_next, __ATOMIC_RELAXED);
    /* Several threads may see one crossing: the one that moves the step
     * triggers. */
    if (live < next || !__atomic_compare_exchange_n(&dump_inuse_next, &next,
                                                    step_after(live, cfg->dump_inuse), false,
                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&inuse_seen, live, __ATOMIC_RELAXED);
    dump_trigger_sigsafe(DUMP_INUSE);
}

/* The resident set in bytes (/proc/self/statm's second field), 0 if
 * unknown. */
static uint64_t rss_now(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return 0;
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Writes every configured kind, announced as "dump N (why): ...". Guard
 * set. */
static void write_all(const char *why)
{
    char line[1024], pattern[4096], path[4096];
    uint64_t seq = profwriter_next_seq();
    int len = snprintf(line, sizeof(line), "dump %llu (%s):", (unsigned long long)seq, why);
    int written = 0;
    for (size_t i = 0; i < cfg->n_kinds; i++) {
        const profile_kind_t *k = &cfg->kinds[i];
        if (!cfg->path[i] || k->how == PROFILE_SESSION || !k->write)
            continue;
        int rc = config_series_pattern(cfg->path[i], pattern, sizeof(pattern));
        if (rc == 0)
            rc = profwriter_write_file_seq(pattern, seq, k->write, path, sizeof(path));
        if (rc < 0) {
            rt_warn("cannot write %s %s: %s", k->what, pattern, outfile_strerror(rc));
            continue;
        }
        if (len >= 0 && (size_t)len < sizeof(line))
            len += snprintf(line + len, sizeof(line) - (size_t)len, "%s %s %s", written ? "," : "",
                            k->name, path);
        written++;
    }
    if (written)
        rt_warn("%s", line);
}

static void *dump_main(void *arg)
{
    (void)arg;
    rt_guard_enter(); /* for its whole life: its allocations are cprof's */
    int64_t last = INT64_MIN / 2;
    for (;;) {
        /* The resident set and the cgroup are polled: nothing tells of
         * their growth. */
        uint32_t bits = __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
        if (!bits)
            rt_futex_wait(&pending, 0, cfg->dump_rss || cgroup_on ? 100000000 : -1);
        cgroupmem_state_t cg;
        if (cgroup_on && cgroupmem_read(&cgroup, &cg) == 0) {
            if (cgroupmem_crossed(&cgroup_last, &cg, cfg->dump_cgroup, cgroup_why,
                                  sizeof(cgroup_why)))
                __atomic_or_fetch(&pending, DUMP_CGROUP, __ATOMIC_RELAXED);
            cgroup_last = cg;
        }
        if (cfg->dump_rss) {
            uint64_t rss = rss_now();
            if (rss >= rss_next) {
                rss_seen = rss;
                rss_next = step_after(rss, cfg->dump_rss);
                __atomic_or_fetch(&pending, DUMP_RSS, __ATOMIC_RELAXED);
            }
        }
        if (!__atomic_load_n(&pending, __ATOMIC_ACQUIRE))
            continue;
        int64_t wait = last + DUMP_MIN_GAP_NS - rt_now_ns();
        if (wait > 0) { /* what comes meanwhile joins this dump */
            struct timespec ts = {wait / 1000000000, wait % 1000000000};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        }
        bits = __atomic_exchange_n(&pending, 0, __ATOMIC_ACQUIRE);
        char why[512];
        int n = 0;
        why[0] = '\0';
        if (bits & DUMP_SIGNAL)
            n += snprintf(why + n, sizeof(why) - (size_t)n, "signal %d, %s", cfg->dump_signal,
                          strsignal(cfg->dump_signal));
        if (bits & DUMP_INUSE)
            n += snprintf(why + n, sizeof(why) - (size_t)n, "%slive heap %llu bytes", n ? ", " : "",
                          (unsigned long long)__atomic_load_n(&inuse_seen, __ATOMIC_RELAXED));
        if (bits & DUMP_RSS)
            n += snprintf(why + n, sizeof(why) - (size_t)n, "%sresident %llu bytes", n ? ", " : "",
                          (unsigned long long)rss_seen);
        if (bits & DUMP_CGROUP)
            snprintf(why + n, sizeof(why) - (size_t)n, "%s%s", n ? ", " : "", cgroup_why);
        write_all(why);
        last = rt_now_ns();
    }
    return NULL;
}

void dump_oom(void)
{
    rt_thread_t *t = &rt_self;
    int expected = 1;
    /* Not inside cprof (its own allocations may fail), nor in a handler
     * that interrupted it holding a lock. */
    if (t->guard || t->locks ||
        !__atomic_compare_exchange_n(&dump_oom_armed, &expected, 0, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    int saved = errno;
    uint32_t g = rt_guard_enter();
    if (reserve)
        munmap(reserve, RESERVE_SIZE); /* room for the writer's own mappings */
    write_all("out of memory");
    /* Taken back, so that the program's next allocation fails as it
     * would have without cprof's dump. */
    if (reserve) {
        void *r = mmap(NULL, RESERVE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        reserve = r == MAP_FAILED ? NULL : r;
    }
    rt_guard_leave(g);
    errno = saved;
}

void *dump_null(void)
{
    dump_on_null();
    return NULL;
}

static bool running; /* this process started a dump thread */

/* Starts the dump thread, which takes none of the program's signals. 0 or
 * a negative errno. */
static int spawn(void)
{
    int rc = rt_spawn(NULL, dump_main, "cprof-dump");
    if (rc < 0)
        return rc;
    running = true;
    return 0;
}

void dump_fork_child(void)
{
    if (!running)
        return;
    __atomic_store_n(&pending, 0, __ATOMIC_RELAXED);
    running = false;
    int rc = spawn();
    if (rc < 0)
        rt_warn("cannot start the dump thread in the forked child (%s); no dumps", strerror(-rc));
}

static bool any_path(const rt_config_t *c)
{
    for (size_t i = 0; i < c->n_kinds; i++)
        if (c->path[i] && c->kinds[i].how != PROFILE_SESSION)
            return true;
    return false;
}

void dump_init(const rt_config_t *c)
{
    cfg = c;
    if (!c->dump_signal && !c->dump_inuse && !c->dump_rss && !c->dump_oom && !c->dump_cgroup)
        return;
    if (!any_path(c)) {
        rt_warn("CPROF_DUMP_* is set but no profile variable (CPROF_HEAP_PROFILE, "
                "CPROF_PEAK_PROFILE, ...) names a file; no dumps");
        return;
    }
    if (c->dump_oom) {
        /* The private heap reserved now, while there is room, and a
         * reserve of address space for the files, maps and zlib. */
        free(malloc(1));
        reserve = mmap(NULL, RESERVE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (reserve == MAP_FAILED)
            reserve = NULL;
        __atomic_store_n(&dump_oom_armed, 1, __ATOMIC_RELEASE);
    }
    if (c->dump_cgroup) {
        /* The first reading is the baseline: a cgroup already past the mark
         * at start is dumped when it crosses again, or on its events. */
        if (cgroupmem_open(&cgroup, NULL) == 0 && cgroupmem_read(&cgroup, &cgroup_last) == 0)
            cgroup_on = true;
        else
            rt_warn("CPROF_DUMP_CGROUP: the process has no cgroup v2 memory controller "
                    "(memory.current); no dumps on the cgroup's memory");
    }
    if (!c->dump_signal && !c->dump_inuse && !c->dump_rss && !cgroup_on)
        return;
    if (c->dump_rss)
        rss_next = c->dump_rss;
    if (c->dump_inuse)
        __atomic_store_n(&dump_inuse_next, c->dump_inuse, __ATOMIC_RELAXED);
    int rc = spawn();
    if (rc < 0) {
        rt_warn("cannot start the dump thread (%s); no dumps on signal or thresholds",
                strerror(-rc));
        __atomic_store_n(&dump_inuse_next, UINT64_MAX, __ATOMIC_RELAXED);
        return;
    }
    if (c->dump_signal && dumpsig_install(c->dump_signal) < 0)
        rt_warn("cannot take signal %d; no dumps on it", c->dump_signal);
}
