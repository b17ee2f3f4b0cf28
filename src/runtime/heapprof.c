/* heapprof.c — heap profiles from the bucket table (see heapprof.h):
 * profile.proto as Go's runtime/pprof writes it (protomem.go), and the
 * legacy text of /debug/pprof/heap?debug=1. */
#include "heapprof.h"

#include "heap.h"
#include "memstats.h"
#include "sampler.h"
#include "profwriter.h"
#include "buckets.h"
#include "labels.h"
#include "livemap.h"
#include "pagemap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Sets each record's resident_bytes from the live map, measured in
 * address order (one pagemap read per 2 MiB of heap). The map is copied
 * after the counts were read: an object sampled meanwhile may add its
 * bytes, so a record's resident bytes are capped at its in-use bytes. */
static void measure_resident(heap_snapshot_t *s)
{
    pagemap_t *pm = malloc(sizeof(*pm));
    size_t cap = livemap_count() * 9 / 8 + 1024;
    livemap_entry_t *live = malloc(cap * sizeof(*live));
    if (pm && live && pagemap_open(pm) == 0) {
        livemap_lock_all();
        size_t n = livemap_copy_locked(live, cap);
        livemap_unlock_all();
        livemap_sort_copy(live, n);
        for (size_t i = 0; i < n; i++)
            if (live[i].bucket < s->n)
                s->recs[live[i].bucket].resident_bytes +=
                    (int64_t)pagemap_resident_bytes(pm, live[i].addr, live[i].addr + live[i].size);
        for (size_t i = 0; i < s->n; i++)
            if (s->recs[i].resident_bytes > s->recs[i].inuse_bytes)
                s->recs[i].resident_bytes = s->recs[i].inuse_bytes;
        s->resident = true;
    }
    if (pm)
        pagemap_close(pm);
    free(pm);
    free(live);
}

int heap_snapshot(heap_snapshot_t *s)
{
    s->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    s->temp = true;
    s->resident = false;
    s->comment[0] = '\0';
    s->n = buckets_count();
    s->recs = calloc(s->n ? s->n : 1, sizeof(*s->recs));
    if (!s->recs)
        return -ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        bucket_t *b = buckets_get((uint32_t)i);
        heap_record_t *r = &s->recs[i];
        bucket_counts_t c; /* frees read first: in-use never negative */
        bucket_read(b, &c);
        r->alloc_objects = (int64_t)c.alloc_objects;
        r->alloc_bytes = (int64_t)c.alloc_bytes;
        r->inuse_objects = r->alloc_objects - (int64_t)c.free_objects;
        r->inuse_bytes = r->alloc_bytes - (int64_t)c.free_bytes;
        r->temp_objects = (int64_t)c.temp_objects;
        r->temp_bytes = (int64_t)c.temp_bytes;
        heap_record_site(r, b);
    }
    measure_resident(s);
    return 0;
}

void heap_record_site(heap_record_t *r, const bucket_t *b)
{
    r->pcs = b->pcs;
    r->depth = b->depth;
    r->rate = sampler_record_rate(b->rate);
    r->labels = b->labels;
}

void heap_snapshot_free(heap_snapshot_t *s)
{
    free(s->recs);
    s->recs = NULL;
    s->n = 0;
}

void heap_snapshot_subtract(heap_snapshot_t *cur, const heap_snapshot_t *base)
{
    for (size_t i = 0; i < cur->n && i < base->n; i++) {
        cur->recs[i].alloc_objects -= base->recs[i].alloc_objects;
        cur->recs[i].alloc_bytes -= base->recs[i].alloc_bytes;
        cur->recs[i].inuse_objects -= base->recs[i].inuse_objects;
        cur->recs[i].inuse_bytes -= base->recs[i].inuse_bytes;
        cur->recs[i].temp_objects -= base->recs[i].temp_objects;
        cur->recs[i].temp_bytes -= base->recs[i].temp_bytes;
        cur->recs[i].resident_bytes -= base->recs[i].resident_bytes;
    }
    cur->resident = cur->resident && base->resident;
}

/* --- profile.proto ------------------------------------------------------ */

static const char *alloc_wrappers = HEAP_ALLOC_WRAPPERS;

void heap_set_alloc_wrappers(const char *re)
{
    alloc_wrappers = re ? re : HEAP_ALLOC_WRAPPERS;
}

const char *heap_alloc_wrappers(void)
{
    return alloc_wrappers;
}

int heap_write_proto(int fd, const heap_snapshot_t *s, const char *default_type)
{
    profwriter_t *b = profwriter_new();
    if (!b)
        return -errno;
    profile_t *p = profwriter_profile(b);
    int rc = 0;
    int64_t bytes_key = profile_intern(p, "bytes");
    if (profile_add_sample_type(p, "alloc_objects", "count") < 0 ||
        profile_add_sample_type(p, "alloc_space", "bytes") < 0 ||
        profile_add_sample_type(p, "inuse_objects", "count") < 0 ||
        profile_add_sample_type(p, "inuse_space", "bytes") < 0 || bytes_key < 0 ||
        (s->temp && (profile_add_sample_type(p, "temp_objects", "count") < 0 ||
                     profile_add_sample_type(p, "temp_space", "bytes") < 0)) ||
        (s->resident && profile_add_sample_type(p, "resident_space", "bytes") < 0) ||
        (s->comment[0] && profile_add_comment(p, s->comment) < 0) ||
        profile_reserve_samples(p, s->n) < 0)
        rc = -ENOMEM;
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = bytes_key;
    p->period = s->rate;
    p->default_sample_type = profile_intern(p, default_type ? default_type : "inuse_space");
    if (*alloc_wrappers)
        p->drop_frames = profile_intern(p, alloc_wrappers);
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const heap_record_t *r = &s->recs[i];
        if (r->alloc_objects == 0 && r->inuse_objects == 0)
            continue;
        int64_t v[7], rate = heap_record_rate(s, r);
        sampler_scale(r->alloc_objects, r->alloc_bytes, rate, &v[0], &v[1]);
        sampler_scale(r->inuse_objects, r->inuse_bytes, rate, &v[2], &v[3]);
        sampler_scale(r->temp_objects, r->temp_bytes, rate, &v[4], &v[5]);
        /* The resident share of the in-use estimate, as the memory profile
         * scales its heap samples: without temp_*, it takes their place. */
        v[s->temp ? 6 : 4] = r->inuse_bytes > 0 ? (int64_t)((double)v[3] * (double)r->resident_bytes /
                                                             (double)r->inuse_bytes)
                                                : 0;
        /* As Go: the object size (a bucket holds one, but for the overflow
         * bucket's average) as the numeric label "bytes"; then the
         * allocating thread's labels. */
        profile_label_t l[1 + LABELS_MAX_PAIRS] = {{.key = bytes_key}};
        if (r->alloc_objects > 0)
            l[0].num = r->alloc_bytes / r->alloc_objects;
        int nl = labels_to_profile(p, r->labels, l + 1, LABELS_MAX_PAIRS);
        if (nl < 0) {
            rc = nl;
            break;
        }
        int skip = l[0].num == 0; /* no "bytes" label */
        rc = profwriter_add(b, r->pcs, r->depth, v, l + skip, (size_t)(nl + 1 - skip));
    }
    if (rc == 0)
        rc = profwriter_write(b, fd);
    profwriter_free(b);
    return rc;
}

/* --- legacy text --------------------------------------------------------- */

/* A record as the text writes it: its four counts. */
typedef struct {
    int64_t io, ib, ao, ab;
    const heap_record_t *r;
} text_rec_t;

static int by_inuse_desc(const void *a, const void *b)
{
    const text_rec_t *x = a, *y = b;
    return x->ib > y->ib ? -1 : x->ib < y->ib;
}

static void stats_block(FILE *f)
{
    cprof_stats_t st;
    heap_stats(&st);
    memstats_t m;
    memstats_read(&m);
    memstats_write(f, &m);
    fprintf(f, "\n# cprof_stats_t\n");
    fprintf(f, "# mallocs = %llu\n", (unsigned long long)st.mallocs);
    fprintf(f, "# frees = %llu\n", (unsigned long long)st.frees);
    fprintf(f, "# total_alloc_bytes = %llu\n", (unsigned long long)st.total_alloc_bytes);
    fprintf(f, "# live_bytes = %llu\n", (unsigned long long)st.live_bytes);
    fprintf(f, "# live_objects = %llu\n", (unsigned long long)st.live_objects);
    fprintf(f, "# rate = %lld\n", (long long)st.rate);
    fprintf(f, "# sampled_allocs = %llu\n", (unsigned long long)st.sampled_allocs);
    fprintf(f, "# sampled_frees = %llu\n", (unsigned long long)st.sampled_frees);
    fprintf(f, "# dropped_samples = %llu\n", (unsigned long long)st.dropped_samples);
    fprintf(f, "# stack_buckets = %llu\n", (unsigned long long)st.stack_buckets);
    fprintf(f, "# profiler_bytes = %llu\n", (unsigned long long)st.profiler_bytes);
    fprintf(f, "# profiler_limit = %llu\n", (unsigned long long)st.profiler_limit);
}

int heap_write_text(int fd, const heap_snapshot_t *s)
{
    text_rec_t *order = malloc((s->n ? s->n : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    /* The text has one rate, its header's, by which the reader (pprof's
     * legacy_profile.go, scaleHeapSample) unbiases every record. Records
     * sampled at another rate (cprof_set_rate since, the overflow bucket)
     * would be unbiased wrongly: then every record is written as its own
     * estimate, under a header of rate 1, which no reader scales. */
    bool estimates = false;
    for (size_t i = 0; i < s->n; i++) {
        const heap_record_t *r = &s->recs[i];
        if ((r->alloc_objects || r->inuse_objects) && heap_record_rate(s, r) != s->rate)
            estimates = true;
    }
    size_t n = 0;
    int64_t io = 0, ib = 0, ao = 0, ab = 0;
    for (size_t i = 0; i < s->n; i++) {
        const heap_record_t *r = &s->recs[i];
        if (r->alloc_objects == 0 && r->inuse_objects == 0)
            continue;
        text_rec_t *t = &order[n++];
        int64_t rate = estimates ? heap_record_rate(s, r) : 1;
        sampler_scale(r->inuse_objects, r->inuse_bytes, rate, &t->io, &t->ib);
        sampler_scale(r->alloc_objects, r->alloc_bytes, rate, &t->ao, &t->ab);
        t->r = r;
        io += t->io;
        ib += t->ib;
        ao += t->ao;
        ab += t->ab;
    }
    qsort(order, n, sizeof(*order), by_inuse_desc);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(order);
        return -ENOMEM;
    }
    /* As Go: pprof reads alloc == inuse totals as a two-column profile, so
     * the alloc bytes are nudged; the header rate is twice the real one. */
    fprintf(f, "heap profile: %lld: %lld [%lld: %lld] @ heap/%lld\n", (long long)io,
            (long long)ib, (long long)ao, (long long)(ab == ib ? ab + 1 : ab),
            (long long)(2 * (estimates ? 1 : s->rate)));
    if (estimates)
        fprintf(f, "# cprof: records sampled at several rates, each written as its estimate "
                   "(sampling rate now %lld)\n",
                (long long)s->rate);
    stacknames_t *names = stacknames_new();
    for (size_t i = 0; i < n; i++) {
        const text_rec_t *t = &order[i];
        const heap_record_t *r = t->r;
        fprintf(f, "%lld: %lld [%lld: %lld] @", (long long)t->io, (long long)t->ib,
                (long long)t->ao, (long long)t->ab);
        for (uint32_t j = 0; j < r->depth; j++)
            fprintf(f, " %#lx", (unsigned long)r->pcs[j]);
        fputc('\n', f);
        profwriter_frame_lines(f, names, r->pcs, r->depth);
    }
    stacknames_free(names);
    stats_block(f);
    profwriter_memory_map(f);
    free(order);
    int rc = fclose(f) == 0 && text ? 0 : -ENOMEM;
    if (rc == 0)
        rc = profile_write_all(fd, text, len);
    free(text);
    return rc;
}
