/* flightrec.c — the heap's flight recorder (see flightrec.h). */
#include "flightrec.h"

#include "arena.h"
#include "base/duration.h"
#include "buckets.h"
#include "heapprof.h"
#include "labels.h"
#include "profwriter.h"
#include "rt.h"
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef flightrec_event_t event_t;

int flightrec_on;
static event_t *ring;
static uint64_t cap_mask; /* capacity - 1, a power of two */
static uint64_t head;     /* slots reserved since the start */
static int64_t duration;  /* ns of history a dump answers for */

static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));

int flightrec_init(int64_t duration_ns)
{
    uint64_t n = FLIGHTREC_MAX_EVENTS;
    while (n > 1024 && n * sizeof(event_t) > arena_limit() / 8)
        n /= 2;
    ring = arena_map(n * sizeof(event_t));
    if (!ring)
        return -ENOMEM;
    cap_mask = n - 1;
    duration = duration_ns;
    __atomic_store_n(&flightrec_on, 1, __ATOMIC_RELEASE);
    return 0;
}

uint64_t flightrec_reserve(void)
{
    uint64_t slot = __atomic_fetch_add(&head, 1, __ATOMIC_RELAXED);
    event_t *e = &ring[slot & cap_mask];
    __atomic_store_n(&e->seq, 2 * slot + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&e->t_ns, rt_now_ns(), __ATOMIC_RELAXED);
    return slot;
}

void flightrec_put(uint64_t slot, int kind, uintptr_t addr, uint32_t bucket, uint64_t size)
{
    event_t *e = &ring[slot & cap_mask];
    if (!my_tid)
        my_tid = (uint32_t)syscall(SYS_gettid); /* async-signal-safe */
    __atomic_store_n(&e->addr, addr, __ATOMIC_RELAXED);
    __atomic_store_n(&e->size, size, __ATOMIC_RELAXED);
    __atomic_store_n(&e->bucket, bucket, __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, (uint16_t)kind, __ATOMIC_RELAXED);
    __atomic_store_n(&e->tid, (uint16_t)my_tid, __ATOMIC_RELAXED);
    /* A newer lap may own the slot already: then leave it to that one. */
    uint64_t want = 2 * slot + 1;
    __atomic_compare_exchange_n(&e->seq, &want, 2 * slot + 2, false, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
}

void flightrec_fork_child(void)
{
    my_tid = 0; /* the child's one thread has an id of its own */
}

uint64_t flightrec_bytes(void)
{
    return ring ? (cap_mask + 1) * sizeof(event_t) : 0;
}

uint64_t flightrec_events(void)
{
    return __atomic_load_n(&head, __ATOMIC_RELAXED);
}

/* --- reading ------------------------------------------------------------ */

event_t *flightrec_copy(size_t *n, uint64_t *lost)
{
    uint64_t h = __atomic_load_n(&head, __ATOMIC_ACQUIRE), cap = cap_mask + 1;
    uint64_t lo = h > cap ? h - cap : 0;
    event_t *out = malloc((size_t)(h - lo + 1) * sizeof(event_t));
    *n = 0;
    *lost = lo;
    if (!out)
        return NULL;
    for (uint64_t s = lo; s < h; s++) {
        event_t *e = &ring[s & cap_mask];
        uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (seq != 2 * s + 2) {
            if (seq > 2 * s + 2)
                (*lost)++; /* overwritten while read */
            continue;      /* else still being written: not yet an event */
        }
        event_t c = {
            .t_ns = __atomic_load_n(&e->t_ns, __ATOMIC_RELAXED),
            .addr = __atomic_load_n(&e->addr, __ATOMIC_RELAXED),
            .size = __atomic_load_n(&e->size, __ATOMIC_RELAXED),
            .bucket = __atomic_load_n(&e->bucket, __ATOMIC_RELAXED),
            .kind = __atomic_load_n(&e->kind, __ATOMIC_RELAXED),
            .tid = __atomic_load_n(&e->tid, __ATOMIC_RELAXED),
        };
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq) {
            (*lost)++;
            continue;
        }
        if (c.kind != FLIGHTREC_NONE)
            out[(*n)++] = c;
    }
    return out;
}

/* Per bucket: the window's numbers. cur: allocated in the window and live
 * now (as the replay goes); at_peak: cur as it was at the window's high,
 * valid when epoch is the current one (peak.h's lazy copy). */
typedef struct {
    int64_t alloc_o, alloc_b, cur_o, cur_b, freed_o, freed_b, peak_o, peak_b;
    uint64_t epoch;
} win_t;

/* Open addressing, address -> event, for the window's live allocations. */
typedef struct {
    uint64_t *keys;
    uint8_t *used; /* 0: empty, 1: deleted, 2: in use */
    const event_t **vals;
    size_t mask;
} addrmap_t;

static size_t slot_of(const addrmap_t *m, uint64_t k)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
}

/* Returns the entry e replaced: an allocation at the same address whose
 * free was not recorded (heap.h: a free in a signal handler). */
static const event_t *map_put(addrmap_t *m, const event_t *e)
{
    uint64_t k = e->addr;
    size_t i = slot_of(m, k);
    while (m->used[i] == 2 && m->keys[i] != k)
        i = (i + 1) & m->mask;
    const event_t *old = m->used[i] == 2 ? m->vals[i] : NULL;
    m->used[i] = 2;
    m->keys[i] = k;
    m->vals[i] = e;
    return old;
}

static const event_t *map_take(addrmap_t *m, uint64_t addr)
{
    for (size_t i = slot_of(m, addr); m->used[i]; i = (i + 1) & m->mask)
        if (m->used[i] == 2 && m->keys[i] == addr) {
            m->used[i] = 1;
            return m->vals[i];
        }
    return NULL;
}

static void touch(win_t *w, uint64_t epoch)
{
    if (w->epoch != epoch) { /* unchanged since the high: its values then */
        w->peak_o = w->cur_o;
        w->peak_b = w->cur_b;
        w->epoch = epoch;
    }
}

/* Replays evs over [s, e] into w (one per bucket, nb of them). */
static int replay(const event_t *evs, size_t n, int64_t s, int64_t e, win_t *w, uint32_t nb)
{
    addrmap_t m = {0};
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    m.keys = calloc(cap, sizeof(*m.keys));
    m.vals = calloc(cap, sizeof(*m.vals));
    m.used = calloc(cap, 1);
    m.mask = cap - 1;
    if (!m.keys || !m.vals || !m.used) {
        free(m.used);
        free(m.keys);
        free(m.vals);
        return -ENOMEM;
    }
    /* epoch 0 is no bucket's: every bucket saves its values at the first
     * touch after a high; the window starts with a high of 0 at epoch 1. */
    uint64_t epoch = 1;
    int64_t live = 0, high = 0;
    for (size_t i = 0; i < n; i++) {
        const event_t *ev = &evs[i];
        if (ev->t_ns > e || ev->bucket >= nb)
            continue;
        if (ev->kind == FLIGHTREC_ALLOC) {
            if (ev->t_ns < s) {
                map_take(&m, ev->addr); /* a reuse: forget an older life */
                continue;
            }
            win_t *b = &w[ev->bucket];
            touch(b, epoch);
            b->alloc_o++;
            b->alloc_b += (int64_t)ev->size;
            b->cur_o++;
            b->cur_b += (int64_t)ev->size;
            const event_t *old = map_put(&m, ev);
            if (old) { /* its free went unrecorded: it ended here */
                win_t *ob = &w[old->bucket];
                touch(ob, epoch);
                ob->cur_o--;
                ob->cur_b -= (int64_t)old->size;
                live -= (int64_t)old->size;
            }
            live += (int64_t)ev->size;
            if (live > high) {
                high = live;
                epoch++;
            }
        } else {
            const event_t *a = map_take(&m, ev->addr);
            if (ev->t_ns < s)
                continue;
            win_t *f = &w[ev->bucket];
            f->freed_o++;
            f->freed_b += (int64_t)ev->size;
            if (a) {
                win_t *b = &w[a->bucket];
                touch(b, epoch);
                b->cur_o--;
                b->cur_b -= (int64_t)a->size;
                live -= (int64_t)a->size;
            }
        }
    }
    for (uint32_t i = 0; i < nb; i++)
        if (w[i].epoch != epoch) { /* not touched since the high: as now */
            w[i].peak_o = w[i].cur_o;
            w[i].peak_b = w[i].cur_b;
        }
    free(m.used);
    free(m.keys);
    free(m.vals);
    return 0;
}

static int write_profile(int fd, const win_t *w, uint32_t nb, const char *comment)
{
    profwriter_t *pw = profwriter_new();
    if (!pw)
        return -errno;
    profile_t *p = profwriter_profile(pw);
    int rc = 0;
    static const char *const types[8] = {"alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space",   "peak_objects", "peak_space",
                                         "freed_objects", "freed_space"};
    for (int i = 0; i < 8 && rc == 0; i++)
        if (profile_add_sample_type(p, types[i], i % 2 ? "bytes" : "count") < 0)
            rc = -ENOMEM;
    int64_t bytes_key = profile_intern(p, "bytes");
    if (bytes_key < 0 || profile_add_comment(p, comment) < 0)
        rc = -ENOMEM;
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = bytes_key;
    p->period = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    p->default_sample_type = profile_intern(p, "inuse_space");
    if (*heap_alloc_wrappers())
        p->drop_frames = profile_intern(p, heap_alloc_wrappers());
    for (uint32_t i = 0; i < nb && rc == 0; i++) {
        const win_t *x = &w[i];
        if (!x->alloc_o && !x->freed_o)
            continue;
        heap_record_t r = {0};
        heap_record_site(&r, buckets_get(i));
        int64_t rate = r.rate > 0 ? r.rate : p->period, v[8];
        sampler_scale(x->alloc_o, x->alloc_b, rate, &v[0], &v[1]);
        sampler_scale(x->cur_o, x->cur_b, rate, &v[2], &v[3]);
        sampler_scale(x->peak_o, x->peak_b, rate, &v[4], &v[5]);
        sampler_scale(x->freed_o, x->freed_b, rate, &v[6], &v[7]);
        profile_label_t l[1 + LABELS_MAX_PAIRS] = {{.key = bytes_key}};
        int64_t o = x->alloc_o ? x->alloc_o : x->freed_o;
        l[0].num = (x->alloc_o ? x->alloc_b : x->freed_b) / o;
        int nl = labels_to_profile(p, r.labels, l + 1, LABELS_MAX_PAIRS);
        if (nl < 0) {
            rc = nl;
            break;
        }
        int skip = l[0].num == 0;
        rc = profwriter_add(pw, r.pcs, r.depth, v, l + skip, (size_t)(nl + 1 - skip));
    }
    if (rc == 0)
        rc = profwriter_write(pw, fd);
    profwriter_free(pw);
    return rc;
}

/* The legacy text (debug=1): Go's heap text of the window, its "alloc" the
 * allocations in it, its "inuse" those live at its end (heapprof.h). */
static int write_text(int fd, const win_t *w, uint32_t nb, const char *comment)
{
    heap_snapshot_t hs = {.n = nb, .rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED)};
    hs.recs = calloc(nb ? nb : 1, sizeof(*hs.recs));
    if (!hs.recs)
        return -ENOMEM;
    snprintf(hs.comment, sizeof(hs.comment), "%s", comment);
    for (uint32_t i = 0; i < nb; i++) {
        heap_record_t *r = &hs.recs[i];
        heap_record_site(r, buckets_get(i));
        r->alloc_objects = w[i].alloc_o;
        r->alloc_bytes = w[i].alloc_b;
        r->inuse_objects = w[i].cur_o;
        r->inuse_bytes = w[i].cur_b;
    }
    int rc = heap_write_text(fd, &hs);
    heap_snapshot_free(&hs);
    return rc;
}

static int write_window(int fd, int64_t start_ns, int64_t end_ns, int debug)
{
    size_t n;
    uint64_t lost;
    event_t *evs = flightrec_copy(&n, &lost);
    uint32_t nb = buckets_count();
    win_t *w = calloc(nb ? nb : 1, sizeof(*w));
    int rc = evs && w ? replay(evs, n, start_ns, end_ns, w, nb) : -ENOMEM;
    if (rc == 0) {
        int64_t now = rt_now_ns();
        char comment[256];
        if (!__atomic_load_n(&flightrec_on, __ATOMIC_ACQUIRE))
            snprintf(comment, sizeof(comment), "cprof flight recorder: off (CPROF_RECORD)");
        else
            snprintf(comment, sizeof(comment),
                     "cprof flight recorder: window %.3fs..%.3fs before now; %llu events kept in "
                     "a ring of %llu bytes, %llu older ones dropped%s",
                     (double)(now - start_ns) / 1e9, (double)(now - end_ns) / 1e9,
                     (unsigned long long)n, (unsigned long long)flightrec_bytes(),
                     (unsigned long long)lost,
                     lost && n && evs[0].t_ns > start_ns ? " (the window starts before the "
                                                           "oldest event kept: it is incomplete)"
                                                         : "");
        rc = debug ? write_text(fd, w, nb, comment) : write_profile(fd, w, nb, comment);
    }
    free(evs);
    free(w);
    return rc;
}

int flightrec_write_window(int fd, int64_t start_ns, int64_t end_ns)
{
    if (!__atomic_load_n(&flightrec_on, __ATOMIC_ACQUIRE))
        return -ENODATA;
    return write_window(fd, start_ns, end_ns, 0);
}

int flightrec_write_fd(int fd, int debug)
{
    int64_t now = rt_now_ns();
    return write_window(fd, now - duration, now, debug);
}

/* One time of a window spec as CLOCK_MONOTONIC ns: a Go duration before
 * now, or unix seconds (digits, an optional fraction). */
static bool spec_time(const char *s, int64_t now, int64_t real_minus_mono, int64_t *out)
{
    int64_t ago;
    if (duration_parse(s, &ago)) {
        *out = now - ago;
        return true;
    }
    char *end;
    if (!(*s >= '0' && *s <= '9'))
        return false;
    double sec = strtod(s, &end);
    if (*end || !(sec >= 0) || sec > 1e11)
        return false;
    *out = (int64_t)(sec * 1e9) - real_minus_mono;
    return true;
}

int flightrec_write_spec(int fd, const char *spec)
{
    if (!__atomic_load_n(&flightrec_on, __ATOMIC_ACQUIRE))
        return -ENODATA;
    char a[64], b[64] = "0";
    const char *comma = strchr(spec, ',');
    size_t la = comma ? (size_t)(comma - spec) : strlen(spec);
    if (la >= sizeof(a) || (comma && strlen(comma + 1) >= sizeof(b)))
        return -EINVAL;
    memcpy(a, spec, la);
    a[la] = '\0';
    if (comma)
        strcpy(b, comma + 1);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    int64_t now = rt_now_ns();
    int64_t off = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - now;
    int64_t s, e;
    if (!spec_time(a, now, off, &s) || !spec_time(b, now, off, &e) || s > e)
        return -EINVAL;
    return flightrec_write_window(fd, s, e);
}
