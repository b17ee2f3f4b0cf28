/* cpuprof.c — CPU profiling sessions, per-thread timers, the drain thread,
 * the table of sampled stacks and the profile (see cpuprof.h).
 *
 * Session life: start maps what the signal side needs (cpuring_init),
 * starts the drain thread, enables recording, then gives every thread a
 * timer. Stop disables recording, deletes the timers, waits until no
 * handler is still writing, lets the drain thread empty the ring and end,
 * and builds the profile from its table. Start and stop are serialized by
 * session.h (which also owns the profile's file), and nothing here runs in
 * a hook. */
#include "cpuprof.h"

#include "arena.h"
#include "cpuring.h"
#include "cprof.h"
#include "labels.h"
#include "profile/profile.h"
#include "rt.h"
#include "procmaps.h"
#include "profwriter.h"
#include "session.h"
#include "sigmask.h"
#include "threadhook.h"
#include "trace.h"

#include "base/hash.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TIMERS_CAP (1u << 14)  /* threads with a timer at once */
#define BLIND_MAX 256          /* threads measured that block SIGPROF at start */
#define DRAIN_PERIOD_MS 100    /* as Go's profileWriter */

static int hz = 100;
static int depth = 64;

/* --- the per-thread timers ---------------------------------------------------- */

/* tid -> kernel timer id, open addressing with backward-shift deletion. */
typedef struct {
    int32_t tid; /* 0: empty */
    int32_t timer;
} tentry_t;

static tentry_t *timers; /* TIMERS_CAP entries, mapped on the first start */
static uint32_t ntimers;
static rt_lock_t timers_lock = RT_LOCK_INIT; /* timers */
static int timers_on; /* threads starting now make their own timer */
static uint64_t rng = 0x2545f4914f6cdd1dull; /* under timers_lock */
static uint64_t uncovered; /* threads that got no timer: not profiled */

/* The kernel's encoding of a thread's CPU clock, as glibc's
 * pthread_getcpuclockid makes it (CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED). */
static clockid_t thread_clock(int32_t tid)
{
    return (clockid_t)((~(uint32_t)tid << 3) | 6u);
}

static uint32_t tslot(int32_t tid)
{
    return ((uint32_t)tid * 2654435761u) & (TIMERS_CAP - 1);
}

static int sys_timer_delete(int32_t id)
{
    return (int)syscall(SYS_timer_delete, id);
}

/* A timer on tid's CPU clock, signalling tid; the first expiry at a random
 * point of the first period (as Go does), so threads do not tick together. */
static int timer_for_locked(int32_t tid, int32_t *out)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = cpuring_cookie();
#ifdef sigev_notify_thread_id /* musl, glibc 2.41 */
    sev.sigev_notify_thread_id = tid;
#else
    sev._sigev_un._tid = tid; /* sigev_notify_thread_id */
#endif
    int id;
    if (syscall(SYS_timer_create, thread_clock(tid), &sev, &id) < 0)
        return -errno;
    int64_t period = 1000000000LL / hz;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    int64_t first = 1 + (int64_t)(rng % (uint64_t)period);
    struct itimerspec its = {
        .it_interval = {(time_t)(period / 1000000000), (long)(period % 1000000000)},
        .it_value = {(time_t)(first / 1000000000), (long)(first % 1000000000)},
    };
    if (syscall(SYS_timer_settime, id, 0, &its, NULL) < 0) {
        int e = errno;
        sys_timer_delete(id);
        return -e;
    }
    *out = id;
    return 0;
}

static tentry_t *timer_find_locked(int32_t tid)
{
    for (uint32_t i = tslot(tid);; i = (i + 1) & (TIMERS_CAP - 1)) {
        if (timers[i].tid == tid)
            return &timers[i];
        if (timers[i].tid == 0)
            return NULL;
    }
}

static void timer_remove_locked(tentry_t *e)
{
    uint32_t i = (uint32_t)(e - timers);
    sys_timer_delete(e->timer);
    timers[i].tid = 0;
    ntimers--;
    /* Backward shift: move up every entry of the run that the hole cut
     * off from its home slot. */
    for (uint32_t j = (i + 1) & (TIMERS_CAP - 1); timers[j].tid; j = (j + 1) & (TIMERS_CAP - 1)) {
        uint32_t home = tslot(timers[j].tid);
        if (((j - home) & (TIMERS_CAP - 1)) >= ((j - i) & (TIMERS_CAP - 1))) {
            timers[i] = timers[j];
            timers[j].tid = 0;
            i = j;
        }
    }
}

/* cprof's own threads get no timer (threadhook.h knows them). */
static bool is_internal_locked(int32_t tid)
{
    return threadhook_internal_tid(tid);
}

/* Gives tid a timer. replace: this is tid itself, starting: a timer found
 * for that tid belongs to an earlier thread that had the same tid. */
static void cover_locked(int32_t tid, bool replace)
{
    if (!timers_on || is_internal_locked(tid))
        return;
    tentry_t *e = timer_find_locked(tid);
    if (e && !replace)
        return;
    if (e)
        timer_remove_locked(e);
    int32_t id = 0;
    int rc = ntimers + 1 >= TIMERS_CAP ? -ENOSPC : timer_for_locked(tid, &id);
    if (rc < 0) {
        /* A thread that has exited since it was listed is no loss; a full
         * registry or no more timers (EAGAIN: RLIMIT_SIGPENDING) is. */
        if (rc != -EINVAL && rc != -ESRCH)
            uncovered++;
        return;
    }
    uint32_t i = tslot(tid);
    while (timers[i].tid)
        i = (i + 1) & (TIMERS_CAP - 1);
    timers[i] = (tentry_t){tid, id};
    ntimers++;
}

/* --- threads that block SIGPROF ------------------------------------------------ */

/* Threads whose mask blocked SIGPROF when the session started, which
 * sigmask.h could not reach: their timer's signal waits, standing for
 * every period since, until the program sets a mask (the signal then
 * arrives with its periods, without a stack) or the thread exits (it opens
 * itself then, on_exit_). Those still blocking it at the stop have their
 * CPU time since the start measured instead. Start and stop only. */
static struct {
    int32_t tid;
    int64_t cpu0; /* ns of its CPU clock at the start */
} blind[BLIND_MAX];
static uint32_t nblind;
static uint64_t blind_unmeasured; /* beyond BLIND_MAX */

static int64_t now_ns(clockid_t c);

static void blind_note(int32_t tid)
{
    int r = procmaps_task_signal(tid, SIGPROF);
    if (r < 0 || !(r & PROCMAPS_SIG_BLOCKED))
        return;
    if (nblind == BLIND_MAX) {
        blind_unmeasured++;
        return;
    }
    blind[nblind].tid = tid;
    blind[nblind].cpu0 = now_ns(thread_clock(tid));
    nblind++;
}

/* CPU ns of the threads that still block SIGPROF, since the start; *n: how
 * many. */
static int64_t blind_measure(uint32_t *n)
{
    int64_t ns = 0;
    *n = 0;
    for (uint32_t i = 0; i < nblind; i++) {
        int r = procmaps_task_signal(blind[i].tid, SIGPROF);
        if (r < 0 || !(r & PROCMAPS_SIG_BLOCKED))
            continue;
        int64_t d = now_ns(thread_clock(blind[i].tid)) - blind[i].cpu0;
        if (d > 0) {
            ns += d;
            ++*n;
        }
    }
    return ns;
}

/* Every thread listed in /proc/self/task. Threads created meanwhile either
 * appear in the list or see timers_on as they start. */
static void cover_all(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        rt_lock(&timers_lock);
        bool internal = is_internal_locked((int32_t)tid);
        rt_unlock(&timers_lock);
        if (!internal)
            blind_note((int32_t)tid);
        rt_lock(&timers_lock);
        cover_locked((int32_t)tid, false);
        rt_unlock(&timers_lock);
    }
    closedir(d);
}

static void uncover_all(void)
{
    rt_lock(&timers_lock);
    __atomic_store_n(&timers_on, 0, __ATOMIC_RELEASE);
    for (uint32_t i = 0; i < TIMERS_CAP && ntimers; i++) {
        if (timers[i].tid) {
            sys_timer_delete(timers[i].timer);
            timers[i].tid = 0;
            ntimers--;
        }
    }
    rt_unlock(&timers_lock);
}

/* --- thread callbacks (threadhook.h) ------------------------------------------ */

static void on_start(void *cookie, bool internal)
{
    (void)cookie;
    int32_t tid = (int32_t)gettid();
    if (internal) {
        cpuring_ignore_this_thread();
        return;
    }
    /* Before its timer can fire: its samples then unwind even in malloc. */
    cpuring_thread_ready();
    if (!__atomic_load_n(&timers_on, __ATOMIC_ACQUIRE))
        return;
    rt_lock(&timers_lock);
    cover_locked(tid, true);
    rt_unlock(&timers_lock);
}

static void on_exit_(void *cookie, bool internal)
{
    (void)cookie;
    int32_t tid = (int32_t)gettid();
    if (internal)
        return;
    if (!__atomic_load_n(&timers_on, __ATOMIC_ACQUIRE))
        return;
    /* A timer signal held back by a blocked SIGPROF stands for periods of
     * this thread: received now, or lost with its timer. */
    sigmask_open_self();
    rt_lock(&timers_lock);
    tentry_t *e = timers ? timer_find_locked(tid) : NULL;
    if (e)
        timer_remove_locked(e);
    rt_unlock(&timers_lock);
}

static const threadhook_client_t client = {
    .on_start = on_start,
    .on_exit = on_exit_,
};

/* --- the table of stacks (drain thread; then the stopping thread) ------------- */

typedef struct {
    uint64_t hash;
    int64_t count;  /* timer periods */
    uint32_t depth;
    uint32_t off;   /* pcs at pool[off] */
    uint32_t labels; /* label set id (labels.h): part of the key */
} centry_t;

typedef struct {
    centry_t *slots;
    size_t cap, n;     /* cap: a power of two, 0 before the first sample */
    uintptr_t *pool;
    size_t pool_len, pool_cap;
    int64_t lost;      /* periods dropped with the ring full */
    int64_t full;      /* periods not kept: the table could not grow */
    int64_t blocked;   /* periods spent with SIGPROF blocked: no stacks */
} ctable_t;

static ctable_t tab;

static void table_free(ctable_t *t)
{
    if (t->slots)
        arena_unmap(t->slots, t->cap * sizeof(*t->slots));
    if (t->pool)
        arena_unmap(t->pool, t->pool_cap * sizeof(*t->pool));
    memset(t, 0, sizeof(*t));
}

static bool table_grow_slots(ctable_t *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    centry_t *s = arena_map(cap * sizeof(*s));
    if (!s)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].count)
            continue;
        size_t j = t->slots[i].hash & (cap - 1);
        while (s[j].count)
            j = (j + 1) & (cap - 1);
        s[j] = t->slots[i];
    }
    if (t->slots)
        arena_unmap(t->slots, t->cap * sizeof(*t->slots));
    t->slots = s;
    t->cap = cap;
    return true;
}

static bool table_grow_pool(ctable_t *t, size_t need)
{
    size_t cap = t->pool_cap ? t->pool_cap : 16384;
    while (cap < t->pool_len + need)
        cap *= 2;
    if (cap > UINT32_MAX)
        return false;
    uintptr_t *p = arena_map(cap * sizeof(*p));
    if (!p)
        return false;
    if (t->pool) {
        memcpy(p, t->pool, t->pool_len * sizeof(*p));
        arena_unmap(t->pool, t->pool_cap * sizeof(*t->pool));
    }
    t->pool = p;
    t->pool_cap = cap;
    return true;
}

static void table_add(ctable_t *t, const uintptr_t *pcs, uint32_t n, uint32_t labels,
                      uint32_t count)
{
    if ((t->n + 1) * 2 > t->cap && !table_grow_slots(t)) {
        t->full += count;
        return;
    }
    uint64_t h = hash_pcs_step(hash_pcs(pcs, n), labels);
    size_t i = h & (t->cap - 1);
    for (; t->slots[i].count; i = (i + 1) & (t->cap - 1)) {
        centry_t *e = &t->slots[i];
        if (e->hash == h && e->depth == n && e->labels == labels &&
            memcmp(t->pool + e->off, pcs, n * sizeof(*pcs)) == 0) {
            e->count += count;
            return;
        }
    }
    if (t->pool_len + n > t->pool_cap && !table_grow_pool(t, n)) {
        t->full += count;
        return;
    }
    memcpy(t->pool + t->pool_len, pcs, n * sizeof(*pcs));
    t->slots[i] = (centry_t){h, count, n, (uint32_t)t->pool_len, labels};
    t->pool_len += n;
    t->n++;
}

/* --- the drain thread ------------------------------------------------------------ */

/* Deltas for the push client (push.h): every sample drained goes to the
 * session's table and, once cpu_delta_enable ran, to this one too, which
 * cpu_delta_write hands over and empties; so the deltas of a run add up to
 * its sessions' profiles exactly. The lock is held by the drain thread
 * while it adds one sample, and by cpu_delta_write while it swaps the
 * table out: both cprof threads, no call out but the arena's mmap. */
static ctable_t delta;
static int delta_on;
static rt_lock_t delta_lock;
static int64_t delta_start_real_ns, delta_start_mono_ns;

static void drain(ctable_t *t)
{
    cpuring_sample_t s;
    bool d = __atomic_load_n(&delta_on, __ATOMIC_ACQUIRE);
    while (cpuring_peek(&s)) {
        if (s.depth > 0)
            table_add(t, s.pcs, s.depth, s.labels, s.count);
        else
            t->blocked += s.count;
        if (d) {
            rt_lock(&delta_lock);
            if (s.depth > 0)
                table_add(&delta, s.pcs, s.depth, s.labels, s.count);
            else
                delta.blocked += s.count;
            rt_unlock(&delta_lock);
        }
        if (s.ts && s.depth > 0)
            trace_cpu_sample(s.ts, s.thread, s.pcs, (int)s.depth);
        cpuring_release();
    }
    int64_t lost = (int64_t)cpuring_take_lost();
    t->lost += lost;
    if (d && lost) {
        rt_lock(&delta_lock);
        delta.lost += lost;
        rt_unlock(&delta_lock);
    }
}

static int drain_stop;
static int drain_started; /* it has run threadhook's on_start: it is internal */

static void *drain_main(void *arg)
{
    (void)arg;
    rt_self.guard = 1; /* for its whole life: nothing it does is the program's */
    __atomic_store_n(&drain_started, 1, __ATOMIC_RELEASE);
    for (;;) {
        /* Read before draining: once set, every sample is published. */
        bool last = __atomic_load_n(&drain_stop, __ATOMIC_ACQUIRE);
        int64_t t = rt_now_ns();
        drain(&tab);
        /* Every sample taken before t was published before t (a thread's
         * handler ends before the thread goes on), and handed over now,
         * unless a handler still fills a slot ahead of them. */
        if (cpuring_empty())
            trace_cpu_drained(t);
        if (last)
            break;
        cpuring_wait(DRAIN_PERIOD_MS);
    }
    return NULL;
}

/* --- the profile ------------------------------------------------------------------- */

/* A sample on a single made-up frame: what Go does for lost samples
 * (runtime/pprof.lostProfileEvent). The location has no mapping and names
 * its function itself, so no symbolizer touches it. */
static int add_marker(profile_t *p, const char *name, int64_t periods, int64_t period)
{
    if (periods <= 0)
        return 0;
    profile_function_t *f = profile_add_function(p);
    if (!f)
        return -ENOMEM;
    f->id = p->n_functions;
    f->name = f->system_name = profile_intern(p, name);
    profile_line_t line = {.function_id = f->id};
    profile_location_t *l = profile_add_location(p, &line, 1);
    if (!l)
        return -ENOMEM;
    l->id = p->n_locations;
    uint64_t loc = l->id;
    int64_t v[2] = {periods, periods * period};
    return profile_add_sample(p, &loc, 1, v) ? 0 : -ENOMEM;
}

/* The profile of table t, Go's CPU profile layout (see cpuprof.h), built
 * on profwriter (mappings, one location per address at pc - 1: the leaf was
 * stored as the interrupted PC + 1, so it stands at that instruction). */
static int build(profwriter_t *b, const ctable_t *t, int64_t time_ns, int64_t duration_ns)
{
    profile_t *p = profwriter_profile(b);
    int64_t period = 1000000000LL / hz;
    if (profile_add_sample_type(p, "samples", "count") < 0 ||
        profile_add_sample_type(p, "cpu", "nanoseconds") < 0)
        return -ENOMEM;
    p->period_type.type = profile_intern(p, "cpu");
    p->period_type.unit = profile_intern(p, "nanoseconds");
    p->period = period;
    p->time_nanos = time_ns;
    p->duration_nanos = duration_ns;
    int rc = 0;
    for (size_t i = 0; i < t->cap && rc == 0; i++) {
        const centry_t *e = &t->slots[i];
        int64_t v[2] = {e->count, e->count * period};
        profile_label_t l[LABELS_MAX_PAIRS];
        int nl = e->count ? labels_to_profile(p, e->labels, l, LABELS_MAX_PAIRS) : 0;
        if (nl < 0)
            rc = nl;
        else if (e->count)
            rc = profwriter_add(b, t->pool + e->off, e->depth, v, l, (size_t)nl);
    }
    if (rc == 0)
        rc = add_marker(p, "cprof_lost_samples", t->lost, period);
    if (rc == 0)
        rc = add_marker(p, "cprof_stack_table_full", t->full, period);
    if (rc == 0)
        rc = add_marker(p, "cprof_sigprof_blocked", t->blocked, period);
    if (rc == 0 && t->blocked > 0 &&
        profile_add_comment(p, "cprof_sigprof_blocked: CPU time of threads that blocked SIGPROF "
                               "since before the profile started; their stacks are not known") < 0)
        rc = -ENOMEM;
    return rc;
}

static int write_profile(int fd, const ctable_t *t, int64_t time_ns, int64_t duration_ns)
{
    profwriter_t *b = profwriter_new();
    if (!b)
        return -errno;
    int rc = build(b, t, time_ns, duration_ns);
    if (rc == 0)
        rc = profwriter_write(b, fd);
    profwriter_free(b);
    return rc;
}

/* --- sessions ---------------------------------------------------------------------- */

static struct {
    int64_t start_real_ns, start_mono_ns;
    pthread_t drain;
} run;

static int64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int start_drain(void)
{
    /* The drain thread takes none of the program's signals (nor SIGPROF);
     * it is created guarded, so threadhook calls it internal. */
    int rc = rt_spawn(&run.drain, drain_main, "cprof-cpu");
    if (rc < 0)
        return rc;
    /* Until it is known internal, cover_all would take it for one of the
     * program's threads (one that blocks SIGPROF). */
    while (!__atomic_load_n(&drain_started, __ATOMIC_ACQUIRE))
        sched_yield();
    return 0;
}

/* Starts the timers and the drain thread (session.h's start). */
static int start_locked(session_t *s)
{
    (void)s;
    int rc = cpuring_init(depth);
    if (rc < 0)
        return rc;
    sigmask_enable(); /* cprof's handler is in place */
    nblind = 0;
    blind_unmeasured = 0;
    static bool told;
    if (cpuring_chained() && !told) {
        told = true;
        rt_warn("the program has its own SIGPROF handler: it keeps getting its own SIGPROFs, "
                "not those of cprof's CPU profile timers");
    }
    if (!timers && !(timers = arena_map(TIMERS_CAP * sizeof(*timers))))
        return -ENOMEM;
    cpuring_reset();
    trace_cpu_drained(rt_now_ns()); /* a thread ending from now on waits for a drain */
    memset(&tab, 0, sizeof(tab));
    __atomic_store_n(&drain_stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&drain_started, 0, __ATOMIC_RELAXED);
    if ((rc = start_drain()) < 0)
        return rc;
    run.start_real_ns = now_ns(CLOCK_REALTIME);
    run.start_mono_ns = now_ns(CLOCK_MONOTONIC);
    cpuring_enable(true);
    rt_lock(&timers_lock);
    __atomic_store_n(&timers_on, 1, __ATOMIC_RELEASE);
    uncovered = 0;
    bool internal = is_internal_locked((int32_t)gettid());
    rt_unlock(&timers_lock);
    /* The thread starting the profile (the main thread, under
     * CPROF_CPU_PROFILE) lets SIGPROF through from now on, whatever mask
     * it inherited. */
    if (!internal)
        sigmask_open_self();
    cover_all();
    return 0;
}

/* Ends the running session and writes its profile (session.h's stop). */
static int stop_locked(session_t *s, bool discard)
{
    uint32_t nstill;
    int64_t still_ns = blind_measure(&nstill); /* before their timers go */
    cpuring_enable(false);
    uncover_all();
    cpuring_quiesce();
    __atomic_store_n(&drain_stop, 1, __ATOMIC_RELEASE);
    cpuring_wake();
    pthread_join(run.drain, NULL);
    trace_cpu_drained(INT64_MAX);
    int64_t duration = now_ns(CLOCK_MONOTONIC) - run.start_mono_ns;
    int64_t period = 1000000000LL / hz;
    int64_t still = (still_ns + period / 2) / period;
    tab.blocked += still;
    if (still && __atomic_load_n(&delta_on, __ATOMIC_ACQUIRE)) {
        rt_lock(&delta_lock);
        delta.blocked += still;
        rt_unlock(&delta_lock);
    }
    if (tab.blocked > 0)
        rt_warn("%lld ms of CPU time were spent by threads that blocked SIGPROF since before the "
                "CPU profile started (%u still did at its end): in the profile as "
                "cprof_sigprof_blocked, without their stacks",
                (long long)(tab.blocked * period / 1000000), nstill);
    if (blind_unmeasured)
        rt_warn("%llu more threads blocked SIGPROF when the CPU profile started: their CPU time "
                "may be missing from it", (unsigned long long)blind_unmeasured);
    if (uncovered)
        rt_warn("%llu threads could not have a CPU timer (RLIMIT_SIGPENDING?) and are "
                "missing from the CPU profile", (unsigned long long)uncovered);
    if (!cpuring_handler_intact())
        rt_warn("the program replaced cprof's SIGPROF handler while the CPU profile ran; "
                "the profile misses the samples since");
    int rc = 0;
    if (!discard) {
        int fd = session_fd(s); /* the program may have closed it */
        rc = fd < 0 ? fd : write_profile(fd, &tab, run.start_real_ns, duration);
    }
    table_free(&tab);
    return rc;
}

/* --- fork --------------------------------------------------------------------------- */

static void fork_prepare(void)
{
    rt_lock(&timers_lock);
}

static void fork_parent(void)
{
    rt_unlock(&timers_lock);
}

static void fork_child(void)
{
    /* Timers are not inherited and the drain thread is not here: the
     * child does not profile, and leaves the parent's file alone. */
    timers_on = 0;
    cpuring_fork_child();
    trace_cpu_drained(INT64_MAX); /* no sample of its will come */
    if (timers)
        memset(timers, 0, TIMERS_CAP * sizeof(*timers));
    ntimers = 0;
    nblind = 0;
    if (session_fork_child(&session_cpu))
        table_free(&tab);
    /* The child pushes nothing (push.h); the drain thread may have held
     * the delta lock or been growing the table: forgotten, not freed. */
    __atomic_store_n(&delta_on, 0, __ATOMIC_RELAXED);
    memset(&delta, 0, sizeof(delta));
    memset(&delta_lock, 0, sizeof(delta_lock));
    rt_unlock(&timers_lock);
}

/* --- entry points ------------------------------------------------------------------- */

int cpu_init(int rate_hz, int max_depth)
{
    if (rate_hz <= 0)
        return -ENOTSUP;
    hz = rate_hz;
    depth = max_depth;
    rng ^= (uint64_t)now_ns(CLOCK_MONOTONIC) * 0x9e3779b97f4a7c15ull;
    if (!rng)
        rng = 1;
    cpuring_prepare();
    /* Before cpuprof's client: a new thread lets SIGPROF through before
     * its timer exists. */
    int rc = sigmask_init();
    if (rc < 0)
        return rc;
    rc = threadhook_register(&client);
    if (rc < 0)
        return rc;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    session_bind(&session_cpu, start_locked, stop_locked, NULL);
    return 0;
}

void cpu_delta_enable(void)
{
    delta_start_real_ns = now_ns(CLOCK_REALTIME);
    delta_start_mono_ns = now_ns(CLOCK_MONOTONIC);
    __atomic_store_n(&delta_on, 1, __ATOMIC_RELEASE);
}

int cpu_delta_write(int fd, int64_t *start_real_ns)
{
    if (!session_cpu.start) /* cpu_init did not bind it */
        return -ENOTSUP;
    ctable_t d;
    rt_lock(&delta_lock);
    d = delta;
    memset(&delta, 0, sizeof(delta));
    int64_t real = delta_start_real_ns, mono = delta_start_mono_ns;
    delta_start_real_ns = now_ns(CLOCK_REALTIME);
    delta_start_mono_ns = now_ns(CLOCK_MONOTONIC);
    rt_unlock(&delta_lock);
    *start_real_ns = real;
    int rc = write_profile(fd, &d, real, delta_start_mono_ns - mono);
    table_free(&d);
    return rc;
}
