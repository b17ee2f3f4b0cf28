/* tracebuf.c — the execution trace's buffers, per-thread records, string
 * and stack tables, and event encoding (see tracebuf.h). */
#include "tracebuf.h"

#include "arena.h"
#include "base/hash.h"
#include "rt.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STRINGS_CAP 4096          /* distinct strings (names, log keys) */
#define STACKS_MAX (1u << 16)     /* distinct stacks */
#define QUIESCE_NS 2000000000LL   /* a thread stuck in a write is given up */

/* --- buffers ---------------------------------------------------------------- */

static tbuf_t *pool;           /* npool buffers, mapped at first start */
static uint32_t npool;
static tbuf_t *free_list;      /* under pool_lock */
static tbuf_t *full_head, *full_tail;
static uint32_t nfree;
static rt_lock_t pool_lock = RT_LOCK_INIT;
static int writer_wake;        /* futex word: the writer's wake-ups */

/* --- per-thread records ------------------------------------------------------ */

static __thread trec_t *me __attribute__((tls_model("initial-exec")));
static trec_t *all_recs;       /* published with release */
static trec_t *free_recs;      /* under pool_lock */
static uint32_t nrecs;

int trace_active;
static uint32_t gen;           /* the running trace's number */
static uint64_t next_stack;
static uint64_t dropped;       /* events not recorded: no free buffer */
static sitetab_t stacks = SITETAB_INIT(STACKS_MAX);

/* --- strings: interned for the whole process, ids for every trace --------------- */

typedef struct {
    const char *s; /* copy in the arena; NULL: empty slot */
    uint64_t hash;
    uint32_t len, id;
} tstr_t;

static tstr_t *strs;       /* STRINGS_CAP slots, mapped at first start */
static uint32_t nstrs;     /* ids given: 1..nstrs */
static rt_lock_t str_lock = RT_LOCK_INIT;

/* Lock-free when known; a new string is inserted under the lock, after
 * looking again there. */
uint64_t tracebuf_string(const char *s, size_t n)
{
    if (n == 0 || !strs)
        return 0;
    if (n > STR_MAX)
        n = STR_MAX;
    uint64_t h = hash_fnv1a(s, n);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = h & (STRINGS_CAP - 1), k = 0; k < STRINGS_CAP;
             i = (i + 1) & (STRINGS_CAP - 1), k++) {
            const char *e = __atomic_load_n(&strs[i].s, __ATOMIC_ACQUIRE);
            if (!e)
                break;
            if (strs[i].hash == h && strs[i].len == n && memcmp(e, s, n) == 0)
                return strs[i].id;
        }
        if (pass)
            return 0;
        /* Not found: insert under the lock, after looking again there. */
        rt_lock(&str_lock);
        uint32_t i = h & (STRINGS_CAP - 1), k = 0;
        for (; k < STRINGS_CAP && strs[i].s; i = (i + 1) & (STRINGS_CAP - 1), k++)
            if (strs[i].hash == h && strs[i].len == n && memcmp(strs[i].s, s, n) == 0)
                break;
        uint64_t id = 0;
        if (k < STRINGS_CAP && strs[i].s) {
            id = strs[i].id;
        } else if (k < STRINGS_CAP && nstrs + 1 < STRINGS_CAP * 3 / 4) {
            char *copy = arena_alloc(n + 1);
            if (copy) {
                memcpy(copy, s, n);
                strs[i].hash = h;
                strs[i].len = (uint32_t)n;
                strs[i].id = ++nstrs;
                id = strs[i].id;
                __atomic_store_n(&strs[i].s, copy, __ATOMIC_RELEASE);
            }
        }
        rt_unlock(&str_lock);
        return id;
    }
    return 0;
}

void tracebuf_each_string(void (*fn)(void *arg, uint64_t id, const char *s, size_t n),
                          void *arg)
{
    uint32_t ids = __atomic_load_n(&nstrs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < STRINGS_CAP; i++) {
        const char *s = __atomic_load_n(&strs[i].s, __ATOMIC_ACQUIRE);
        if (s && strs[i].id <= ids)
            fn(arg, strs[i].id, s, strs[i].len);
    }
}

/* --- stacks --------------------------------------------------------------------- */

/* The entry's v[0] holds (trace << 32 | id) once the stack was used in
 * that trace. */
uint64_t tracebuf_stack(const uintptr_t *pcs, int depth)
{
    if (depth <= 0)
        return 0;
    site_t *e = sitetab_intern(&stacks, pcs, depth);
    if (!e)
        return 0;
    int64_t cur = __atomic_load_n(&e->v[0], __ATOMIC_ACQUIRE);
    if ((uint64_t)cur >> 32 == gen)
        return (uint32_t)cur;
    int64_t want = (int64_t)((uint64_t)gen << 32 |
                             (__atomic_add_fetch(&next_stack, 1, __ATOMIC_RELAXED) & 0xffffffff));
    if (__atomic_compare_exchange_n(&e->v[0], &cur, want, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return (uint32_t)want;
    return (uint32_t)cur;
}

void tracebuf_each_stack(void (*fn)(void *arg, uint64_t id, const site_t *e), void *arg)
{
    for (site_t *e = sitetab_first(&stacks); e; e = sitetab_next(e)) {
        int64_t v = __atomic_load_n(&e->v[0], __ATOMIC_ACQUIRE);
        if ((uint64_t)v >> 32 == gen)
            fn(arg, (uint32_t)v, e);
    }
}

/* --- encoding ---------------------------------------------------------------------- */

uint8_t *tracebuf_put_uv(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(0x80 | v);
    *p++ = (uint8_t)v;
    return p;
}

void tracebuf_put_event(tbuf_t *b, uint8_t type, int64_t ts, const uint64_t *args, int n)
{
    if (ts <= b->last)
        ts = b->last + 1; /* as Go: no two events of a batch at one tick */
    uint64_t diff = (uint64_t)(ts - b->last);
    b->last = ts;
    uint8_t *p = b->data + b->len;
    *p++ = (uint8_t)(type | (n < 3 ? n : 3) << 6);
    uint8_t *lenp = NULL;
    if (n >= 3)
        lenp = p++; /* the length of what follows, < 128 */
    uint8_t *start = p;
    p = tracebuf_put_uv(p, diff);
    for (int i = 0; i < n; i++)
        p = tracebuf_put_uv(p, args[i]);
    if (lenp)
        *lenp = (uint8_t)(p - start);
    b->len = (uint32_t)(p - b->data);
}

void tracebuf_batch(tbuf_t *b, uint32_t p, int64_t ts)
{
    uint8_t *q = b->data;
    *q++ = EV_BATCH | 1 << 6;
    q = tracebuf_put_uv(q, p);
    q = tracebuf_put_uv(q, (uint64_t)ts);
    b->len = (uint32_t)(q - b->data);
    b->last = ts;
}

/* --- buffers of the calling thread --------------------------------------------------- */

static void queue_full_locked(tbuf_t *b)
{
    b->next = NULL;
    if (full_tail)
        full_tail->next = b;
    else
        full_head = b;
    full_tail = b;
}

bool tracebuf_room(trec_t *r, uint32_t need, int64_t ts)
{
    tbuf_t *b = r->buf;
    if (b && b->len + need <= sizeof(b->data))
        return true;
    rt_lock(&pool_lock);
    if (b) {
        r->p_last = b->last;
        queue_full_locked(b);
    }
    b = free_list;
    if (b) {
        free_list = b->next;
        nfree--;
    }
    bool wake = nfree < npool / 2;
    rt_unlock(&pool_lock);
    if (wake)
        tracebuf_kick();
    r->buf = b;
    if (!b) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        return false;
    }
    /* A record serves thread after thread, and a proxy's events are
     * dated before they are written: P p's time never runs back. */
    tracebuf_batch(b, r->p, ts > r->p_last ? ts : r->p_last);
    return true;
}

void tracebuf_flush(trec_t *r)
{
    if (!r->buf)
        return;
    rt_lock(&pool_lock);
    r->p_last = r->buf->last;
    queue_full_locked(r->buf);
    rt_unlock(&pool_lock);
    r->buf = NULL;
}

static int64_t drained = INT64_MAX; /* tracebuf_drained */

void tracebuf_drained(int64_t t)
{
    __atomic_store_n(&drained, t, __ATOMIC_RELEASE);
}

/* A record from the free list whose P has no event from `before` on and
 * whose thread's samples are drained, or from the arena; in the list of
 * all. */
static trec_t *rec_new(int64_t before)
{
    int64_t d = __atomic_load_n(&drained, __ATOMIC_ACQUIRE);
    rt_lock(&pool_lock);
    trec_t **pp = &free_recs;
    while (*pp && ((*pp)->p_last >= before || (*pp)->released >= d))
        pp = &(*pp)->next_free;
    trec_t *r = *pp;
    if (r)
        *pp = r->next_free;
    rt_unlock(&pool_lock);
    if (!r) {
        r = arena_alloc(sizeof(*r));
        if (!r)
            return NULL;
        r->p = __atomic_fetch_add(&nrecs, 1, __ATOMIC_RELAXED);
        rt_lock(&pool_lock);
        r->next_all = all_recs;
        __atomic_store_n(&all_recs, r, __ATOMIC_RELEASE);
        rt_unlock(&pool_lock);
    }
    r->gen = 0;
    r->state = G_NONE;
    r->released = INT64_MIN;
    __atomic_store_n(&r->proxy, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->claim, 0, __ATOMIC_RELAXED);
    return r;
}

trec_t *tracebuf_self(void)
{
    trec_t *r = me;
    if (RT_LIKELY(r != NULL))
        return r;
    r = rec_new(INT64_MAX);
    me = r;
    return r;
}

trec_t *tracebuf_proxy_new(int64_t ts)
{
    trec_t *r = rec_new(ts);
    if (!r)
        return NULL;
    r->goid = 0;
    r->buf = NULL;
    r->rdepth = 0;
    r->rmask = 0;
    __atomic_store_n(&r->gen, __atomic_load_n(&gen, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    return r;
}

uint32_t tracebuf_gen(void)
{
    return __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
}

trec_t *tracebuf_claimed(int32_t tid)
{
    uint64_t c = (uint64_t)tracebuf_gen() << 32 | (uint32_t)tid;
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all)
        if (__atomic_load_n(&r->claim, __ATOMIC_SEQ_CST) == c)
            return r;
    return NULL;
}

/* The offer (after its events) and the claims are read in opposite
 * orders here and in tracebuf_enter: of a thread's first event and an
 * offer made meanwhile, one sees the other. */
trec_t *tracebuf_proxy_publish(trec_t *r, int32_t tid)
{
    __atomic_store_n(&r->proxy, tid, __ATOMIC_SEQ_CST);
    trec_t *own = tracebuf_claimed(tid);
    if (!own || own == r ||
        !__atomic_compare_exchange_n(&r->proxy, &tid, 0, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return r; /* offered, or adopted already */
    if (r->buf)
        tracebuf_give_back(r->buf); /* never queued: its events are not written */
    r->buf = NULL;
    tracebuf_proxy_drop(r);
    return own;
}

trec_t *tracebuf_proxy_find(int32_t tid)
{
    uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all)
        if (__atomic_load_n(&r->proxy, __ATOMIC_ACQUIRE) == tid && r->gen == g)
            return r;
    return NULL;
}

static void free_rec_locked(trec_t *r)
{
    __atomic_store_n(&r->proxy, 0, __ATOMIC_RELAXED);
    r->gen = 0;
    r->next_free = free_recs;
    free_recs = r;
}

void tracebuf_proxy_drop(trec_t *r)
{
    rt_lock(&pool_lock);
    free_rec_locked(r);
    rt_unlock(&pool_lock);
}

void tracebuf_proxies_free(void)
{
    rt_lock(&pool_lock);
    for (trec_t *r = all_recs; r; r = r->next_all)
        if (__atomic_load_n(&r->proxy, __ATOMIC_ACQUIRE))
            free_rec_locked(r);
    rt_unlock(&pool_lock);
}

/* The calling thread's first event in trace g: the record made for it by
 * the CPU profile's drain, if any, becomes its own (the one it had goes
 * back to the free list). Called busy on r; returns the record to use,
 * busy, or NULL when the trace stopped meanwhile. */
static trec_t *adopt(trec_t *r, uint32_t g, int32_t tid)
{
    trec_t *p = tracebuf_proxy_find(tid);
    if (!p || !__atomic_compare_exchange_n(&p->proxy, &tid, 0, false, __ATOMIC_ACQ_REL,
                                           __ATOMIC_RELAXED))
        return r;
    /* The claim moves with the thread, before r is given away. */
    __atomic_store_n(&p->claim, __atomic_load_n(&r->claim, __ATOMIC_RELAXED), __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->claim, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
    me = p;
    rt_lock(&pool_lock);
    r->next_free = free_recs;
    free_recs = r;
    rt_unlock(&pool_lock);
    __atomic_exchange_n(&p->busy, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&trace_active, __ATOMIC_SEQ_CST) || p->gen != g) {
        __atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
        return NULL;
    }
    return p;
}

trec_t *tracebuf_mine(void)
{
    return me;
}

void tracebuf_release_self(bool keep)
{
    trec_t *r = me;
    me = NULL;
    if (!r || keep)
        return;
    r->released = rt_now_ns();
    rt_lock(&pool_lock);
    r->next_free = free_recs;
    free_recs = r;
    rt_unlock(&pool_lock);
}

/* The busy flag is raised before trace_active is read again, and a stop
 * clears trace_active before it reads the flags (tracebuf_quiesce): one of
 * the two sees the other. */
trec_t *tracebuf_enter(void)
{
    trec_t *r = tracebuf_self();
    if (!r)
        return NULL;
    __atomic_exchange_n(&r->busy, 1, __ATOMIC_SEQ_CST); /* a full barrier, cheaper than a fence */
    if (!__atomic_load_n(&trace_active, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
        return NULL;
    }
    uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    if (r->gen != g) {
        int32_t tid = (int32_t)gettid();
        __atomic_store_n(&r->claim, (uint64_t)g << 32 | (uint32_t)tid, __ATOMIC_SEQ_CST);
        if (!(r = adopt(r, g, tid)))
            return NULL;
    }
    if (r->gen != g) { /* first event of this thread in this trace */
        r->gen = g;
        r->goid = 0;
        r->state = G_NONE;
        r->buf = NULL; /* the pool was refilled at the start */
        r->rdepth = 0;
        r->rmask = 0;
    }
    return r;
}

void tracebuf_leave(trec_t *r)
{
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

trec_t *tracebuf_running_sigsafe(void)
{
    trec_t *r = me;
    if (!r || !__atomic_load_n(&trace_active, __ATOMIC_RELAXED) || r->gen != gen ||
        r->state == G_NONE)
        return NULL;
    return r;
}

/* --- the writer's side ------------------------------------------------------------------ */

tbuf_t *tracebuf_take_full(void)
{
    rt_lock(&pool_lock);
    tbuf_t *b = full_head;
    full_head = full_tail = NULL;
    rt_unlock(&pool_lock);
    return b;
}

void tracebuf_give_back(tbuf_t *b)
{
    rt_lock(&pool_lock);
    b->next = free_list;
    free_list = b;
    nfree++;
    rt_unlock(&pool_lock);
}

void tracebuf_wait(int64_t timeout_ns)
{
    int w = __atomic_load_n(&writer_wake, __ATOMIC_ACQUIRE);
    rt_futex_wait(&writer_wake, (uint32_t)w, timeout_ns);
}

void tracebuf_kick(void)
{
    __atomic_add_fetch(&writer_wake, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&writer_wake, INT32_MAX);
}

/* --- a trace's start and end --------------------------------------------------------------- */

/* True while a thread given up by the last stop is still inside a write. */
static bool stuck_writer(void)
{
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all) {
        if (r->stuck && __atomic_load_n(&r->busy, __ATOMIC_SEQ_CST))
            return true;
        r->stuck = false;
    }
    return false;
}

int tracebuf_open(uint64_t pool_bytes)
{
    if (stuck_writer())
        return -EBUSY;
    if (!pool) {
        npool = (uint32_t)(pool_bytes / sizeof(tbuf_t));
        if (!(pool = arena_map((size_t)npool * sizeof(tbuf_t))))
            return -ENOMEM;
    }
    if (!strs && !(strs = arena_map(STRINGS_CAP * sizeof(*strs))))
        return -ENOMEM;
    rt_lock(&pool_lock);
    free_list = full_head = full_tail = NULL;
    for (uint32_t i = 0; i < npool; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    nfree = npool;
    rt_unlock(&pool_lock);
    return 0;
}

bool tracebuf_mapped(void)
{
    return pool != NULL;
}

void tracebuf_begin(void)
{
    __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_stack, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE);
}

void tracebuf_quiesce(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (trec_t *r = __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE); r; r = r->next_all) {
        int64_t t0 = rt_now_ns();
        while (__atomic_load_n(&r->busy, __ATOMIC_SEQ_CST) && rt_now_ns() - t0 < QUIESCE_NS) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        r->stuck = __atomic_load_n(&r->busy, __ATOMIC_SEQ_CST);
    }
}

trec_t *tracebuf_next_rec(trec_t *prev)
{
    trec_t *r = prev ? prev->next_all : __atomic_load_n(&all_recs, __ATOMIC_ACQUIRE);
    while (r && r->gen != gen)
        r = r->next_all;
    return r;
}

uint64_t tracebuf_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

uint64_t tracebuf_pool_size(void)
{
    return npool * sizeof(tbuf_t);
}

/* --- fork ------------------------------------------------------------------------------------ */

void tracebuf_fork_prepare(void)
{
    rt_lock(&str_lock);
    sitetab_fork_prepare(&stacks);
    rt_lock(&pool_lock);
}

void tracebuf_fork_parent(void)
{
    rt_unlock(&pool_lock);
    sitetab_fork_release(&stacks);
    rt_unlock(&str_lock);
}

void tracebuf_fork_child(void)
{
    for (trec_t *r = all_recs; r; r = r->next_all) {
        r->busy = 0;
        r->gen = 0;
    }
    rt_unlock(&pool_lock);
    sitetab_fork_release(&stacks);
    rt_unlock(&str_lock);
}
