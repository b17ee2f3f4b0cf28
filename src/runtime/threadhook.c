/* threadhook.c — pthread_create interposed once for the whole runtime (see
 * threadhook.h).
 *
 * The hook forwards to the next pthread_create (dlsym(RTLD_NEXT), resolved
 * on first use with the guard set) with a wrapper as the start routine; the
 * wrapper runs the clients' on_start and then the program's routine. The
 * end of a thread is caught by a thread-specific-data key whose destructor
 * runs on_exit, which covers return, pthread_exit and cancellation alike.
 * With no client registered, the hook is a plain forward.
 *
 * The real pthread_create runs unguarded, as it would without cprof: its
 * allocations (thread-local storage) are the program's. */
#include "threadhook.h"

#include "rt.h"
#include "stackbounds.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn next_create;
static const threadhook_client_t *clients[THREADHOOK_MAX_CLIENTS];
static uint32_t nclients; /* published with release after clients[] */
static rt_lock_t reg_lock = RT_LOCK_INIT;
static pthread_key_t exit_key;
/* cprof's own threads (created with the guard set) now alive: lock-free
 * slots, 0 free (threadhook_internal_tid). */
#define INTERNAL_MAX 32
static int32_t internal_tids[INTERNAL_MAX];

static void internal_set(int32_t tid, int32_t old)
{
    for (int i = 0; i < INTERNAL_MAX; i++) {
        int32_t want = old;
        if (__atomic_compare_exchange_n(&internal_tids[i], &want, tid, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return;
    }
}

bool threadhook_internal_tid(int32_t tid)
{
    for (int i = 0; i < INTERNAL_MAX; i++)
        if (__atomic_load_n(&internal_tids[i], __ATOMIC_ACQUIRE) == tid)
            return true;
    return false;
}

/* The child has none of the parent's threads but the forking one. */
static void fork_child(void)
{
    for (int i = 0; i < INTERNAL_MAX; i++)
        internal_tids[i] = 0;
}
/* The start routine of the thread being created or starting, for the
 * callbacks (threadhook_routine). */
static __thread void *(*routine)(void *) __attribute__((tls_model("initial-exec")));

uintptr_t threadhook_routine(void)
{
    return (uintptr_t)routine;
}

/* What a new thread needs: the program's routine, and the cookie of each
 * client that was registered when it was created. Allocated by the
 * creator, freed by the thread's exit destructor. */
typedef struct {
    void *(*start)(void *);
    void *arg;
    uint32_t n;
    bool internal;
    void *cookies[THREADHOOK_MAX_CLIENTS];
} start_t;

static void thread_exit(void *arg)
{
    start_t *s = arg;
    uint32_t g = rt_guard_enter();
    for (uint32_t i = 0; i < s->n; i++)
        if (clients[i]->on_exit)
            clients[i]->on_exit(s->cookies[i], s->internal);
    if (s->internal)
        internal_set(0, (int32_t)gettid());
    free(s);
    rt_guard_leave(g);
}

int threadhook_register(const threadhook_client_t *c)
{
    int rc = 0;
    uint32_t g = rt_guard_enter();
    rt_lock(&reg_lock);
    if (nclients == 0 && pthread_key_create(&exit_key, thread_exit) != 0)
        rc = -EAGAIN;
    else if (nclients == 0)
        pthread_atfork(NULL, NULL, fork_child);
    else if (nclients == THREADHOOK_MAX_CLIENTS)
        rc = -ENOSPC;
    if (rc == 0) {
        clients[nclients] = c;
        __atomic_store_n(&nclients, nclients + 1, __ATOMIC_RELEASE);
    }
    rt_unlock(&reg_lock);
    rt_guard_leave(g);
    return rc;
}

/* The start routine of every thread created through the hook. It leaves
 * no frame in the thread's stacks: the program's routine is reached by a
 * tail call, so it returns straight to the C library's start_thread, as
 * without cprof (Go hides its runtime's frames; this one would sit at the
 * root of every stack of every thread, in every profile). */
void *cprof_thread_start(void *arg)
{
    start_t *s = arg;
    void *(*start)(void *) = s->start;
    void *start_arg = s->arg;
    uint32_t g = rt_guard_enter();
    /* Set before on_start, so that every started client also sees the
     * exit. pthread_setspecific may allocate (guarded); should it fail,
     * on_exit runs when the routine returns (not on pthread_exit). */
    bool keyed = pthread_setspecific(exit_key, s) == 0;
    stackbounds_learn_started();
    if (s->internal) /* before on_start: its clients may ask */
        internal_set((int32_t)gettid(), 0);
    routine = start;
    for (uint32_t i = 0; i < s->n; i++)
        if (clients[i]->on_start)
            clients[i]->on_start(s->cookies[i], s->internal);
    rt_guard_leave(g);
    if (RT_LIKELY(keyed))
        return start(start_arg); /* a tail call: see above */
    void *r = start(start_arg);
    thread_exit(s);
    return r;
}

static create_fn resolve(void)
{
    create_fn f = __atomic_load_n(&next_create, __ATOMIC_ACQUIRE);
    if (RT_LIKELY(f != NULL))
        return f;
    uint32_t g = rt_guard_enter();
    f = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    rt_guard_leave(g);
    if (!f) {
        rt_warn("cannot find the next pthread_create; aborting");
        abort();
    }
    __atomic_store_n(&next_create, f, __ATOMIC_RELEASE);
    return f;
}

RT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                             void *(*start)(void *), void *arg)
{
    create_fn next = resolve();
    uint32_t n = __atomic_load_n(&nclients, __ATOMIC_ACQUIRE);
    if (n == 0)
        return next(th, attr, start, arg);
    bool internal = rt_self.guard != 0;
    uint32_t g = rt_guard_enter();
    start_t *s = malloc(sizeof(*s));
    if (!s) {
        rt_guard_leave(g);
        return next(th, attr, start, arg); /* unseen by the clients */
    }
    s->start = start;
    s->arg = arg;
    s->n = n;
    s->internal = internal;
    routine = start;
    for (uint32_t i = 0; i < n; i++)
        s->cookies[i] = clients[i]->on_create ? clients[i]->on_create(internal) : NULL;
    rt_guard_leave(g);
    int rc = next(th, attr, cprof_thread_start, s);
    if (rc != 0) {
        g = rt_guard_enter();
        for (uint32_t i = 0; i < n; i++)
            if (clients[i]->on_failed)
                clients[i]->on_failed(s->cookies[i]);
        free(s);
        rt_guard_leave(g);
    }
    return rc;
}
