/* lockhooks.c — the pthread lock, condition-variable, semaphore and join
 * entry points cprof interposes for the mutex and block profiles
 * (lockprof.h). Each forwards
 * to the next definition in the chain (dlsym(RTLD_NEXT), resolved together
 * on first use), so another interposer behind cprof keeps working.
 *
 * Cost: with both profiles and the trace off (the default), a hook is one
 * relaxed load (lockprof_watch) and the forward. With a profile or the
 * trace on, a mutex that is free (its glibc lock word is 0: one relaxed
 * load) is locked with the real call at once. Any other lock call first tries the lock (the next *_trylock): taken there,
 * the hook returns. Only when the lock is held by another thread (EBUSY)
 * does cprof look at the clock, and only for a sampled event does it
 * unwind the stack. Any other result of the try (0, EOWNERDEAD of a robust
 * mutex, EAGAIN, EINVAL) is what the lock call itself would have
 * returned, and is returned as it is; EBUSY is followed by the real lock
 * call, so error-checking, recursive, robust and priority mutexes behave
 * exactly as without cprof. Unlock calls are not hooked.
 *
 * Reentrancy: cprof's own locks are rt_lock_t, never pthread mutexes, so
 * nothing cprof does lands here; but libraries it calls (libunwind,
 * libc's dl_iterate_phdr) may lock pthread mutexes, so every hook forwards
 * straight away when the thread's guard is set, and the recording (unwind,
 * table insert) runs guarded. The stack is unwound before waiting for the
 * lock, so that the program's mutex is not held any longer for it; only
 * the table insert happens after the lock is acquired. */
#include "lockprof.h"
#include "rt.h"
#include "trace.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>

static struct {
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*rdlock)(pthread_rwlock_t *);
    int (*tryrdlock)(pthread_rwlock_t *);
    int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
    int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*wrlock)(pthread_rwlock_t *);
    int (*trywrlock)(pthread_rwlock_t *);
    int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
    int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*sem_wait)(sem_t *);
    int (*sem_trywait)(sem_t *);
    int (*sem_timedwait)(sem_t *, const struct timespec *);
    int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
    int (*join)(pthread_t, void **);
} nx;

static int resolved; /* 1 once nx is filled (release) */

/* The condition variables have two versions in glibc (2.2.5, the old
 * ABI, and 2.3.2, the default programs link against); dlsym might hand
 * back the old one, so the default is asked for by name first. */
static void *next_cond(const char *name)
{
#ifdef __GLIBC__
    void *f = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
    return f ? f : dlsym(RTLD_NEXT, name);
#else /* musl: one version of each */
    return dlsym(RTLD_NEXT, name);
#endif
}

static __attribute__((noinline)) void resolve(void)
{
    uint32_t g = rt_guard_enter();
    __typeof__(nx) n;
    *(void **)&n.mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    *(void **)&n.mutex_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    *(void **)&n.mutex_timedlock = dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
    *(void **)&n.mutex_clocklock = dlsym(RTLD_NEXT, "pthread_mutex_clocklock");
    *(void **)&n.rdlock = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    *(void **)&n.tryrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
    *(void **)&n.timedrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
    *(void **)&n.clockrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_clockrdlock");
    *(void **)&n.wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    *(void **)&n.trywrlock = dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
    *(void **)&n.timedwrlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
    *(void **)&n.clockwrlock = dlsym(RTLD_NEXT, "pthread_rwlock_clockwrlock");
    *(void **)&n.cond_wait = next_cond("pthread_cond_wait");
    *(void **)&n.cond_timedwait = next_cond("pthread_cond_timedwait");
    *(void **)&n.cond_clockwait = dlsym(RTLD_NEXT, "pthread_cond_clockwait");
    *(void **)&n.sem_wait = dlsym(RTLD_NEXT, "sem_wait");
    *(void **)&n.sem_trywait = dlsym(RTLD_NEXT, "sem_trywait");
    *(void **)&n.sem_timedwait = dlsym(RTLD_NEXT, "sem_timedwait");
    *(void **)&n.sem_clockwait = dlsym(RTLD_NEXT, "sem_clockwait");
    *(void **)&n.join = dlsym(RTLD_NEXT, "pthread_join");
    if (!n.mutex_lock || !n.mutex_trylock || !n.mutex_timedlock || !n.rdlock || !n.tryrdlock ||
        !n.timedrdlock || !n.wrlock || !n.trywrlock || !n.timedwrlock || !n.cond_wait ||
        !n.cond_timedwait || !n.sem_wait || !n.sem_trywait || !n.sem_timedwait || !n.join) {
        rt_warn("cannot find the next pthread lock functions; aborting");
        abort();
    }
    /* Racing threads store the same values. */
    nx = n;
    __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    rt_guard_leave(g);
}

static inline void ready(void)
{
    if (RT_UNLIKELY(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)))
        resolve();
}

/* Whether this call is profiled (with both rates) or traced, else it
 * simply forwards: both profiles and the trace off, cprof's own code
 * (guard), or libunwind running on this thread (unwinding: a stack
 * capture, or a signal handler unwinding, that locks a mutex of
 * libunwind's). */
static inline bool profiling(int64_t *mr, int64_t *br)
{
    *mr = __atomic_load_n(&lockprof_mutex_rate, __ATOMIC_RELAXED);
    *br = __atomic_load_n(&lockprof_block_rate, __ATOMIC_RELAXED);
    return RT_UNLIKELY(__atomic_load_n(&lockprof_watch, __ATOMIC_RELAXED) != 0) &&
           !rt_self.guard && !rt_self.unwinding;
}

/* --- the contended path --------------------------------------------------- */

typedef struct {
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth; /* -1: not unwound */
    bool mutex_sampled;
    bool traced; /* a block event is in the trace: its unblock follows */
    int64_t t0;
} wait_t;

/* A running trace records the block (kind TRACE_BLOCK_*) with its stack. */
static __attribute__((noinline)) void wait_trace(wait_t *w, int kind)
{
    rt_self.guard++;
    if (w->depth < 0)
        w->depth = unwind_capture(w->pcs);
    w->traced = trace_block(kind, w->pcs, w->depth);
    rt_self.guard--;
}

/* Before waiting: choose whether this contention is sampled, unwind if so
 * (or if a trace runs), then start the clock (the unwinding is not counted
 * as waiting). */
static __attribute__((noinline)) bool wait_begin(wait_t *w, int64_t mr, int64_t br)
{
    w->depth = -1;
    w->traced = false;
    w->mutex_sampled = mr > 0 && lockprof_mutex_take(mr);
    if (w->mutex_sampled) {
        rt_self.guard++;
        w->depth = unwind_capture(w->pcs);
        rt_self.guard--;
    }
    if (trace_on())
        wait_trace(w, TRACE_BLOCK_SYNC);
    if (!w->mutex_sampled && br <= 0 && !w->traced)
        return false;
    w->t0 = rt_now_ns();
    return true;
}

/* After waiting: records the wait. acquired: the lock was taken (the
 * mutex profile counts only waits that ended with the lock). */
static __attribute__((noinline)) void wait_end(wait_t *w, bool acquired, int64_t br)
{
    int64_t delay = rt_now_ns() - w->t0;
    rt_self.guard++;
    if (w->traced)
        trace_unblock();
    if (w->mutex_sampled && acquired)
        lockprof_mutex_event(w->pcs, w->depth, delay);
    if (br > 0 && lockprof_block_take(delay, br)) {
        if (w->depth < 0)
            w->depth = unwind_capture(w->pcs);
        lockprof_block_event(w->pcs, w->depth, delay);
    }
    rt_self.guard--;
}

#define UNPAREN(...) __VA_ARGS__

/* Whether a mutex is free right now, looked at without taking it: glibc's
 * lock word is 0 exactly then, for every mutex type but priority-protect
 * ones (whose word also holds the ceiling: never 0, so they take the
 * trylock path). A mutex seen free is locked with the real call at once:
 * the try that would otherwise come first costs as much again as the
 * lock itself. The look races with other threads: a lock taken between it
 * and the call is a contention that goes unseen (its wait is not timed),
 * which sampling can afford. Unknown C libraries: always the try. */
static inline bool mutex_free_now(pthread_mutex_t *m)
{
#ifdef __GLIBC__
    return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0;
#else
    (void)m;
    return false;
#endif
}

static inline bool rwlock_free_now(pthread_rwlock_t *l)
{
    (void)l;
    return false;
}

/* One hook per lock call: try first, and on EBUSY wait in the real call.
 * The hook itself only tells the common cases (both profiles off, or the
 * mutex seen free), which jump straight to the next definition without a
 * frame of cprof's: a bare uncontended lock costs a few nanoseconds, and
 * saving registers for the rare paths showed in it. The rest is in
 * functions of their own: the try, then the timed wait. */
#define LOCK_HOOK(name, field, tryfield, free_now, lockarg, args, ...)                          \
    static __attribute__((noinline)) int name##_contended(int64_t mr, int64_t br, __VA_ARGS__)  \
    {                                                                                           \
        wait_t w;                                                                               \
        if (!wait_begin(&w, mr, br))                                                            \
            return nx.field args;                                                               \
        int rc = nx.field args;                                                                 \
        wait_end(&w, rc == 0 || rc == EOWNERDEAD, br);                                          \
        return rc;                                                                              \
    }                                                                                           \
    static __attribute__((noinline)) int name##_try(__VA_ARGS__)                                \
    {                                                                                           \
        ready();                                                                                \
        int64_t mr, br;                                                                         \
        if (RT_LIKELY(!profiling(&mr, &br)) || RT_LIKELY(free_now(lockarg)))                    \
            return nx.field args;                                                               \
        int rc = nx.tryfield(lockarg);                                                          \
        if (RT_LIKELY(rc != EBUSY))                                                             \
            return rc;                                                                          \
        return name##_contended(mr, br, UNPAREN args);                                          \
    }                                                                                           \
    RT_EXPORT int name(__VA_ARGS__)                                                             \
    {                                                                                           \
        if (RT_LIKELY(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) &&                          \
            RT_LIKELY(__atomic_load_n(&lockprof_watch, __ATOMIC_RELAXED) == 0 ||                \
                      free_now(lockarg)))                                                       \
            return nx.field args;                                                               \
        return name##_try(UNPAREN args);                                                        \
    }

LOCK_HOOK(pthread_mutex_lock, mutex_lock, mutex_trylock, mutex_free_now, m, (m),
          pthread_mutex_t *m)
LOCK_HOOK(pthread_mutex_timedlock, mutex_timedlock, mutex_trylock, mutex_free_now, m, (m, ts),
          pthread_mutex_t *m, const struct timespec *ts)
LOCK_HOOK(pthread_rwlock_rdlock, rdlock, tryrdlock, rwlock_free_now, l, (l), pthread_rwlock_t *l)
LOCK_HOOK(pthread_rwlock_timedrdlock, timedrdlock, tryrdlock, rwlock_free_now, l, (l, ts),
          pthread_rwlock_t *l, const struct timespec *ts)
LOCK_HOOK(pthread_rwlock_wrlock, wrlock, trywrlock, rwlock_free_now, l, (l), pthread_rwlock_t *l)
LOCK_HOOK(pthread_rwlock_timedwrlock, timedwrlock, trywrlock, rwlock_free_now, l, (l, ts),
          pthread_rwlock_t *l, const struct timespec *ts)

/* The clock variants exist from glibc 2.30; if the next library lacks
 * them, the hook answers ENOSYS. */
#define CLOCK_HOOK(name, field, tryfield, free_now, type)                                       \
    static int name##_next(type *l, clockid_t clk, const struct timespec *ts)                   \
    {                                                                                           \
        return nx.field ? nx.field(l, clk, ts) : ENOSYS;                                        \
    }                                                                                           \
    static __attribute__((noinline)) int name##_contended(int64_t mr, int64_t br, type *l,     \
                                                          clockid_t clk,                        \
                                                          const struct timespec *ts)            \
    {                                                                                           \
        wait_t w;                                                                               \
        if (!wait_begin(&w, mr, br))                                                            \
            return name##_next(l, clk, ts);                                                     \
        int rc = name##_next(l, clk, ts);                                                       \
        wait_end(&w, rc == 0 || rc == EOWNERDEAD, br);                                          \
        return rc;                                                                              \
    }                                                                                           \
    RT_EXPORT int name(type *l, clockid_t clk, const struct timespec *ts)                       \
    {                                                                                           \
        ready();                                                                                \
        int64_t mr, br;                                                                         \
        if (RT_LIKELY(!profiling(&mr, &br)) || !nx.field || free_now(l))                       \
            return name##_next(l, clk, ts);                                                     \
        int rc = nx.tryfield(l);                                                                \
        if (RT_LIKELY(rc != EBUSY))                                                             \
            return rc;                                                                          \
        return name##_contended(mr, br, l, clk, ts);                                            \
    }

CLOCK_HOOK(pthread_mutex_clocklock, mutex_clocklock, mutex_trylock, mutex_free_now,
           pthread_mutex_t)
CLOCK_HOOK(pthread_rwlock_clockrdlock, clockrdlock, tryrdlock, rwlock_free_now, pthread_rwlock_t)
CLOCK_HOOK(pthread_rwlock_clockwrlock, clockwrlock, trywrlock, rwlock_free_now, pthread_rwlock_t)

/* --- condition variables and joins: the block profile only ------------------- */

/* The timed wait of a block-profile hook: the real call, timed, then
 * recorded (and traced as a block of kind TRACE_BLOCK_*). errno is kept:
 * semaphores report their errors in it. */
#define TIMED_WAIT(name, field, kind, args, ...)                                                \
    static __attribute__((noinline)) int name##_timed(int64_t br, __VA_ARGS__)                  \
    {                                                                                           \
        wait_t w;                                                                               \
        w.depth = -1;                                                                           \
        w.mutex_sampled = false;                                                                \
        w.traced = false;                                                                       \
        if (trace_on())                                                                         \
            wait_trace(&w, kind);                                                               \
        w.t0 = rt_now_ns();                                                                        \
        int rc = nx.field args;                                                                 \
        int saved = errno;                                                                      \
        wait_end(&w, false, br);                                                                \
        errno = saved;                                                                          \
        return rc;                                                                              \
    }

/* A condition wait always blocks: while the block profile is on, every
 * wait is timed and sampled by its duration (and traced while a trace
 * runs). */
#define COND_HOOK(name, field, kind, args, ...)                                                 \
    TIMED_WAIT(name, field, kind, args, __VA_ARGS__)                                            \
    RT_EXPORT int name(__VA_ARGS__)                                                             \
    {                                                                                           \
        ready();                                                                                \
        if (RT_UNLIKELY(!nx.field))                                                             \
            return ENOSYS;                                                                      \
        if (RT_LIKELY((__atomic_load_n(&lockprof_watch, __ATOMIC_RELAXED) &                     \
                       (LOCKPROF_WATCH_BLOCK | LOCKPROF_WATCH_TRACE)) == 0) ||                  \
            rt_self.guard || rt_self.unwinding)                                                 \
            return nx.field args;                                                               \
        int64_t br = __atomic_load_n(&lockprof_block_rate, __ATOMIC_RELAXED);                   \
        return name##_timed(br, UNPAREN args);                                                  \
    }

COND_HOOK(pthread_cond_wait, cond_wait, TRACE_BLOCK_COND, (c, m), pthread_cond_t *c,
          pthread_mutex_t *m)
COND_HOOK(pthread_cond_timedwait, cond_timedwait, TRACE_BLOCK_COND, (c, m, ts),
          pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
COND_HOOK(pthread_cond_clockwait, cond_clockwait, TRACE_BLOCK_COND, (c, m, clk, ts),
          pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
/* Waiting for a thread to end is blocking too (a C program's WaitGroup). */
COND_HOOK(pthread_join, join, TRACE_BLOCK_SYNC, (th, ret), pthread_t th, void **ret)

/* --- semaphores: the block profile only ----------------------------------------- */

/* A semaphore wait blocks only when the count is 0: the hook tries first
 * (sem_trywait) and times only a wait that would block. These calls
 * report errors in errno: the try leaves it as it was. The clock variant
 * exists from glibc 2.30: ENOSYS without it. */
#define SEM_HOOK(name, field, args, ...)                                                        \
    TIMED_WAIT(name, field, TRACE_BLOCK_SYNC, args, __VA_ARGS__)                                \
    RT_EXPORT int name(__VA_ARGS__)                                                             \
    {                                                                                           \
        ready();                                                                                \
        if (RT_UNLIKELY(!nx.field)) {                                                           \
            errno = ENOSYS;                                                                     \
            return -1;                                                                          \
        }                                                                                       \
        if (RT_LIKELY((__atomic_load_n(&lockprof_watch, __ATOMIC_RELAXED) &                     \
                       (LOCKPROF_WATCH_BLOCK | LOCKPROF_WATCH_TRACE)) == 0) ||                  \
            rt_self.guard || rt_self.unwinding)                                                 \
            return nx.field args;                                                               \
        int64_t br = __atomic_load_n(&lockprof_block_rate, __ATOMIC_RELAXED);                   \
        int saved = errno;                                                                      \
        if (nx.sem_trywait(s) == 0)                                                             \
            return 0;                                                                           \
        if (errno != EAGAIN) {                                                                  \
            errno = saved;                                                                      \
            return nx.field args;                                                               \
        }                                                                                       \
        errno = saved;                                                                          \
        return name##_timed(br, UNPAREN args);                                                  \
    }

SEM_HOOK(sem_wait, sem_wait, (s), sem_t *s)
SEM_HOOK(sem_timedwait, sem_timedwait, (s, ts), sem_t *s, const struct timespec *ts)
SEM_HOOK(sem_clockwait, sem_clockwait, (s, clk, ts), sem_t *s, clockid_t clk,
         const struct timespec *ts)
