/* lifetimes.c — the lifetime profile from the flight recorder's events
 * (see lifetimes.h). */
#include "lifetimes.h"

#include "buckets.h"
#include "flightrec.h"
#include "heapprof.h"
#include "labels.h"
#include "profwriter.h"
#include "rt.h"
#include "sampler.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SAME, OTHER, LIVE, N_FREED };
static const char *const freed_names[N_FREED] = {"same-thread", "other-thread", "live"};

/* One (bucket, freed, bin): the raw sampled objects and their lifetimes. */
typedef struct {
    uint32_t bucket;
    uint16_t freed;
    uint16_t bin;
    int64_t objects, ns;
    bool used;
} cell_t;

typedef struct {
    cell_t *c;
    size_t mask, n;
} cells_t;

static uint16_t bin_of(int64_t ns)
{
    return ns < 1 ? 0 : (uint16_t)(log2((double)ns) * LIFETIMES_BINS_PER_OCTAVE);
}

static int64_t bin_floor(uint16_t bin)
{
    return (int64_t)ceil(exp2((double)bin / LIFETIMES_BINS_PER_OCTAVE));
}

static void add(cells_t *t, uint32_t bucket, int freed, int64_t ns)
{
    uint16_t bin = bin_of(ns);
    uint64_t h = ((uint64_t)bucket << 20 | (uint64_t)freed << 16 | bin) * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 24) & t->mask;
    while (t->c[i].used && !(t->c[i].bucket == bucket && t->c[i].freed == freed &&
                             t->c[i].bin == bin))
        i = (i + 1) & t->mask;
    cell_t *c = &t->c[i];
    if (!c->used) {
        *c = (cell_t){.bucket = bucket, .freed = (uint16_t)freed, .bin = bin, .used = true};
        t->n++;
    }
    c->objects++;
    c->ns += ns;
}

/* Open addressing over the allocations not yet freed: address -> event. */
typedef struct {
    const flightrec_event_t **v;
    size_t mask;
} live_t;

static size_t live_find(const live_t *m, uint64_t addr)
{
    size_t i = (size_t)((addr * 0x9E3779B97F4A7C15ull) >> 24) & m->mask;
    while (m->v[i] && m->v[i]->addr != addr)
        i = (i + 1) & m->mask;
    return i;
}

/* Deletes slot i, moving later entries of its run back (no tombstones). */
static void live_del(live_t *m, size_t i)
{
    m->v[i] = NULL;
    for (size_t j = (i + 1) & m->mask; m->v[j]; j = (j + 1) & m->mask) {
        const flightrec_event_t *e = m->v[j];
        m->v[j] = NULL;
        m->v[live_find(m, e->addr)] = e;
    }
}

/* Pairs each allocation with its free in ring order, into t. */
static int pair(const flightrec_event_t *evs, size_t n, int64_t now, cells_t *t)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    live_t m = {calloc(cap, sizeof(*m.v)), cap - 1};
    if (!m.v)
        return -ENOMEM;
    for (size_t k = 0; k < n; k++) {
        const flightrec_event_t *e = &evs[k];
        size_t i = live_find(&m, e->addr);
        const flightrec_event_t *a = m.v[i];
        if (a) { /* freed now, or its free went unrecorded (heap.h): ended */
            add(t, a->bucket, e->kind == FLIGHTREC_FREE && e->tid == a->tid ? SAME : OTHER,
                e->t_ns - a->t_ns);
            live_del(&m, i);
        }
        if (e->kind == FLIGHTREC_ALLOC)
            m.v[live_find(&m, e->addr)] = e;
    }
    for (size_t i = 0; i <= m.mask; i++)
        if (m.v[i])
            add(t, m.v[i]->bucket, LIVE, now - m.v[i]->t_ns);
    free(m.v);
    return 0;
}

/* The estimate of c: its objects and lifetimes scaled by its bucket's
 * sampling probability, as the heap profile scales (sampler_scale). */
static void scale(const cell_t *c, int64_t *objects, int64_t *ns)
{
    bucket_t *b = buckets_get(c->bucket);
    int64_t rate = sampler_record_rate(b->rate), bytes;
    sampler_scale(c->objects, c->objects * (int64_t)b->size, rate, objects, &bytes);
    if (b->size == 0 || rate <= 1)
        *objects = c->objects;
    *ns = c->objects ? (int64_t)((double)c->ns * (double)*objects / (double)c->objects) : 0;
}

static int write_proto(int fd, const cells_t *t, const char *comment)
{
    profwriter_t *pw = profwriter_new();
    if (!pw)
        return -errno;
    profile_t *p = profwriter_profile(pw);
    int64_t freed_key = profile_intern(p, "freed"), life_key = profile_intern(p, "lifetime"),
            ns_key = profile_intern(p, "nanoseconds");
    int64_t names[N_FREED];
    for (int i = 0; i < N_FREED; i++)
        names[i] = profile_intern(p, freed_names[i]);
    int rc = 0;
    if (profile_add_sample_type(p, "objects", "count") < 0 ||
        profile_add_sample_type(p, "lifetime", "nanoseconds") < 0 || freed_key < 0 ||
        life_key < 0 || ns_key < 0 || profile_add_comment(p, comment) < 0)
        rc = -ENOMEM;
    p->default_sample_type = profile_intern(p, "objects");
    if (*heap_alloc_wrappers())
        p->drop_frames = profile_intern(p, heap_alloc_wrappers());
    for (size_t i = 0; i <= t->mask && rc == 0; i++) {
        const cell_t *c = &t->c[i];
        if (!c->used)
            continue;
        heap_record_t r = {0};
        heap_record_site(&r, buckets_get(c->bucket));
        int64_t v[2];
        scale(c, &v[0], &v[1]);
        profile_label_t l[2 + LABELS_MAX_PAIRS] = {
            {.key = freed_key, .str = names[c->freed]},
            {.key = life_key, .num = bin_floor(c->bin), .num_unit = ns_key},
        };
        int nl = labels_to_profile(p, r.labels, l + 2, LABELS_MAX_PAIRS);
        if (nl < 0) {
            rc = nl;
            break;
        }
        rc = profwriter_add(pw, r.pcs, r.depth, v, l, (size_t)nl + 2);
    }
    if (rc == 0)
        rc = profwriter_write(pw, fd);
    profwriter_free(pw);
    return rc;
}

/* One line per cell: "objects: lifetime_ns [freed bin_ns] @ pcs", then the
 * frames, as the heap text's records. */
static int write_text(int fd, const cells_t *t, const char *comment)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -ENOMEM;
    fprintf(f, "lifetime profile: %zu records\n# %s\n", t->n, comment);
    stacknames_t *names = stacknames_new();
    for (size_t i = 0; i <= t->mask; i++) {
        const cell_t *c = &t->c[i];
        if (!c->used)
            continue;
        heap_record_t r = {0};
        heap_record_site(&r, buckets_get(c->bucket));
        int64_t o, ns;
        scale(c, &o, &ns);
        fprintf(f, "%lld: %lld [freed=%s lifetime=%lld] @", (long long)o, (long long)ns,
                freed_names[c->freed], (long long)bin_floor(c->bin));
        for (uint32_t j = 0; j < r.depth; j++)
            fprintf(f, " %#lx", (unsigned long)r.pcs[j]);
        fputc('\n', f);
        profwriter_frame_lines(f, names, r.pcs, r.depth);
    }
    stacknames_free(names);
    int rc = fclose(f) == 0 && text ? 0 : -ENOMEM;
    if (rc == 0)
        rc = profile_write_all(fd, text, len);
    free(text);
    return rc;
}

int lifetimes_write(int fd, int debug)
{
    size_t n = 0;
    uint64_t lost = 0;
    flightrec_event_t *evs = flightrec_copy(&n, &lost);
    int64_t now = rt_now_ns();
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    cells_t t = {calloc(cap, sizeof(cell_t)), cap - 1, 0};
    int rc = evs && t.c ? pair(evs, n, now, &t) : -ENOMEM;
    if (rc == 0) {
        char comment[200];
        if (!__atomic_load_n(&flightrec_on, __ATOMIC_ACQUIRE))
            snprintf(comment, sizeof(comment), "cprof lifetimes: off (they need CPROF_RECORD)");
        else
            snprintf(comment, sizeof(comment),
                     "cprof lifetimes: from %zu events of the flight recorder, %llu older ones "
                     "dropped; live objects censored now",
                     n, (unsigned long long)lost);
        rc = debug ? write_text(fd, &t, comment) : write_proto(fd, &t, comment);
    }
    free(evs);
    free(t.c);
    return rc;
}
