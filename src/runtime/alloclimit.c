/* alloclimit.c — the runtime side of cprof.h's CPROF_ALLOC_LIMIT block for
 * unit tests: this thread's exact allocation counts (its counters block,
 * counters.h) and the failure path. The counting itself is inline in the
 * header, so a program built without libcprof still links (weak symbols).
 * Called by the program's own threads, outside any hook: no locks. */
#define CPROF__RUNTIME /* cprof.h: these definitions are not weak */
#include "cprof.h"

#include "counters.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static cprof_alloc_limit_handler_t handler; /* atomic */

/* A thread's block keeps its sums when the thread exits and another takes
 * it (counters.h), but a live thread holds its own: the difference of two
 * reads on one thread is exactly what that thread allocated between them. */
RT_EXPORT int cprof_thread_allocs(uint64_t *objects, uint64_t *bytes)
{
    if (!objects || !bytes)
        return -EINVAL;
    if (counters_paused()) /* detached: malloc is not seen */
        return -ENOTCONN;
    counters_t *s = counters_block(&rt_self);
    if (!s)
        return -ENOMEM;
    *objects = __atomic_load_n(&s->mallocs, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED);
    return 0;
}

RT_EXPORT cprof_alloc_limit_handler_t cprof_set_alloc_limit_handler(cprof_alloc_limit_handler_t h)
{
    return __atomic_exchange_n(&handler, h, __ATOMIC_ACQ_REL);
}

RT_EXPORT void cprof_alloc_limit_failed(const cprof_alloc_limit_t *l)
{
    /* snprintf into the stack and rt_warn's write(2): the message must not
     * allocate on the thread whose allocations are being judged. */
    char msg[512];
    snprintf(msg, sizeof(msg),
             "%s:%d: allocation limit exceeded: %llu objects, %llu bytes (limit %llu objects, %llu bytes)",
             l->file ? l->file : "?", l->line, (unsigned long long)l->objects,
             (unsigned long long)l->bytes, (unsigned long long)l->max_objects,
             (unsigned long long)l->max_bytes);
    rt_warn("%s", msg);
    cprof_alloc_limit_handler_t h = __atomic_load_n(&handler, __ATOMIC_ACQUIRE);
    if (h)
        h(msg);
    else
        abort();
}
