/* heapprof.h — turning the bucket table into heap profiles.
 *
 * A snapshot copies each bucket's counters (atomic reads, no lock held
 * against allocating threads); the profile is then built from the copy, so
 * the host's threads are never held up while a profile is encoded.
 * Snapshot records are indexed by bucket index, so two snapshots can be
 * subtracted (the delta profile of /debug/pprof/heap?seconds=N).
 * All of this runs with the guard set: it allocates. */
#ifndef CPROF_HEAPPROF_H
#define CPROF_HEAPPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uintptr_t *pcs; /* return addresses, leaf first (bucket memory) */
    uint32_t depth;
    int64_t rate;         /* bytes; the rate its samples were taken at (the
                           * overflow bucket's: sampler_record_rate), 0:
                           * the snapshot's */
    /* raw sampled numbers; bytes as the program asked */
    int64_t alloc_objects, alloc_bytes, inuse_objects, inuse_bytes;
    int64_t temp_objects, temp_bytes; /* temporaries (heap.c) */
    int64_t resident_bytes; /* of inuse_bytes, resident (pagemap.h) when
                             * the snapshot has resident set */
    uint32_t labels;      /* label set id (labels.h), 0: none */
} heap_record_t;

/* The snapshot crosses into libcprof-http.so (httpops.h): bump the version
 * when it or heap_record_t changes. */
#define HEAP_SNAPSHOT_VERSION 5

typedef struct {
    heap_record_t *recs; /* recs[i] is bucket i */
    size_t n;
    int64_t rate;        /* the sampling rate when taken (the period) */
    bool temp;           /* write the temp_* sample types too */
    bool resident;       /* and resident_space (recs' resident_bytes) */
    char comment[512];   /* a comment for the profile, or "" */
} heap_snapshot_t;

/* The heap profile's snapshot, with each live sampled object's resident
 * bytes read from pagemap now (as tcmalloc's profile builder does): the
 * live map is copied under its locks, then sorted and measured without
 * them. Without pagemap, resident stays false. */
int heap_snapshot(heap_snapshot_t *s);

/* Sets r's stack, rate and labels from bucket b (buckets.h): what every
 * snapshot (heap, peak, leaks) takes from a bucket besides its counts. */
struct bucket;
void heap_record_site(heap_record_t *r, const struct bucket *b);

/* The rate r's numbers are scaled by (sampler_scale). */
static inline int64_t heap_record_rate(const heap_snapshot_t *s, const heap_record_t *r)
{
    return r->rate > 0 ? r->rate : s->rate;
}

void heap_snapshot_free(heap_snapshot_t *s);

/* cur -= base, record by record (for delta profiles). */
void heap_snapshot_subtract(heap_snapshot_t *cur, const heap_snapshot_t *base);

/* Gzipped profile.proto with Go's four heap sample types, then
 * temp_objects/count and temp_space/bytes when s->temp, then
 * resident_space/bytes when s->resident (scaled as inuse_space).
 * default_type: NULL for "heap" (inuse_space), "alloc_space" for "allocs".
 * The default type is always written: pprof would otherwise take the last
 * type, which is not Go's inuse_space once temp_space follows it. */
int heap_write_proto(int fd, const heap_snapshot_t *s, const char *default_type);

/* The allocation wrappers every heap-layout profile (heap, allocs, peak,
 * leaks, memory) names as its drop_frames, so that pprof's tools (and
 * cprof's) show a wrapper's caller as the allocating function: re
 * (CPROF_ALLOC_WRAPPERS) or, NULL, HEAP_ALLOC_WRAPPERS; "" none. Set once,
 * at start. */
#define HEAP_ALLOC_WRAPPERS                                                              \
    "xmalloc|xcalloc|xrealloc|xstrdup|xstrndup|xmemdup|"                                  \
    "g_malloc|g_malloc0|g_realloc|g_try_malloc|g_try_malloc0|g_try_realloc|g_malloc_n|"   \
    "g_malloc0_n|g_realloc_n|g_strdup|g_strndup|g_memdup2|"                               \
    "zmalloc|zcalloc|zrealloc|zmalloc_usable|zcalloc_usable|zrealloc_usable|ztrymalloc|"  \
    "ztrymalloc_usable|ztrymalloc_usable_internal|ztrycalloc_usable_internal|"            \
    "ztryrealloc_usable_internal|CRYPTO_malloc|CRYPTO_zalloc|CRYPTO_realloc|CRYPTO_strdup"
void heap_set_alloc_wrappers(const char *re);
const char *heap_alloc_wrappers(void);

/* The legacy text form of Go's /debug/pprof/heap?debug=1. */
int heap_write_text(int fd, const heap_snapshot_t *s);

#endif
