/* heapprof.c — heap profiles from the bucket table (see heapprof.h):
 * profile.proto as Go's runtime/pprof writes it (protomem.go), and the
 * legacy text of /debug/pprof/heap?debug=1. */
#include "heapprof.h"

#include "cprof.h"
#include "procmaps.h"
#include "sampler.h"
#include "profile/profile.h"
#include "stacks.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int heap_snapshot(heap_snapshot_t *s)
{
    s->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    s->n = stacks_count();
    s->recs = calloc(s->n ? s->n : 1, sizeof(*s->recs));
    if (!s->recs)
        return -ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        bucket_t *b = stacks_get((uint32_t)i);
        heap_record_t *r = &s->recs[i];
        /* Frees first: every free counted was preceded by its allocation's
         * count (heap.c), so in-use never goes negative. */
        int64_t fo = (int64_t)__atomic_load_n(&b->free_objects, __ATOMIC_ACQUIRE);
        int64_t fb = (int64_t)__atomic_load_n(&b->free_bytes, __ATOMIC_ACQUIRE);
        r->alloc_objects = (int64_t)__atomic_load_n(&b->alloc_objects, __ATOMIC_ACQUIRE);
        r->alloc_bytes = (int64_t)__atomic_load_n(&b->alloc_bytes, __ATOMIC_ACQUIRE);
        r->inuse_objects = r->alloc_objects - fo;
        r->inuse_bytes = r->alloc_bytes - fb;
        r->pcs = b->pcs;
        r->depth = b->depth;
    }
    return 0;
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
    }
}

/* --- profile.proto ------------------------------------------------------ */

/* pc -> location id, open addressing, grown by doubling. */
typedef struct {
    uint64_t *keys, *ids;
    size_t mask, n;
} pcmap_t;

static int pcmap_grow(pcmap_t *m)
{
    size_t nslots = m->keys ? (m->mask + 1) * 2 : 4096;
    uint64_t *k = calloc(nslots, sizeof(*k)), *v = calloc(nslots, sizeof(*v));
    if (!k || !v) {
        free(k);
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; m->keys && i <= m->mask; i++) {
        if (!m->keys[i])
            continue;
        size_t h = (m->keys[i] * 0x9e3779b97f4a7c15ull >> 20) & (nslots - 1);
        while (k[h])
            h = (h + 1) & (nslots - 1);
        k[h] = m->keys[i];
        v[h] = m->ids[i];
    }
    free(m->keys);
    free(m->ids);
    m->keys = k;
    m->ids = v;
    m->mask = nslots - 1;
    return 0;
}

/* The location id of pc, adding a Location to p when new; 0 on OOM. */
static uint64_t location_for(profile_t *p, pcmap_t *m, uint64_t pc, const procmap_t *maps,
                             size_t nmaps)
{
    if ((m->n + 1) * 2 > m->mask + 1 && pcmap_grow(m) < 0)
        return 0;
    size_t h = (pc * 0x9e3779b97f4a7c15ull >> 20) & m->mask;
    for (; m->keys[h]; h = (h + 1) & m->mask)
        if (m->keys[h] == pc)
            return m->ids[h];
    profile_location_t *l = profile_add_location(p, NULL, 0);
    if (!l)
        return 0;
    l->id = p->n_locations;
    /* Return address - 1: inside the call instruction, so symbolizers name
     * the calling line, not the next one. */
    l->address = pc - 1;
    const procmap_t *pm = procmaps_find(maps, nmaps, pc - 1);
    l->mapping_id = pm ? (uint64_t)(pm - maps) + 1 : 0;
    m->keys[h] = pc;
    m->ids[h] = l->id;
    m->n++;
    return l->id;
}

static int build_profile(profile_t *p, const heap_snapshot_t *s, const char *default_type,
                         const procmap_t *maps, size_t nmaps)
{
    int64_t bytes_key = profile_intern(p, "bytes");
    if (profile_add_sample_type(p, "alloc_objects", "count") < 0 ||
        profile_add_sample_type(p, "alloc_space", "bytes") < 0 ||
        profile_add_sample_type(p, "inuse_objects", "count") < 0 ||
        profile_add_sample_type(p, "inuse_space", "bytes") < 0 || bytes_key < 0)
        return -ENOMEM;
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = bytes_key;
    p->period = s->rate;
    if (default_type)
        p->default_sample_type = profile_intern(p, default_type);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    p->time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;

    for (size_t i = 0; i < nmaps; i++) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m)
            return -ENOMEM;
        m->id = i + 1;
        m->memory_start = maps[i].start;
        m->memory_limit = maps[i].limit;
        m->file_offset = maps[i].offset;
        m->filename = profile_intern(p, maps[i].path);
        m->build_id = profile_intern(p, maps[i].build_id);
    }

    pcmap_t pcs = {0};
    uint64_t locs[STACKS_MAX_DEPTH];
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const heap_record_t *r = &s->recs[i];
        if (r->alloc_objects == 0 && r->inuse_objects == 0)
            continue;
        uint32_t depth = 0;
        for (; depth < r->depth; depth++)
            if (!(locs[depth] = location_for(p, &pcs, r->pcs[depth], maps, nmaps)))
                break;
        int64_t v[4];
        sampler_scale(r->alloc_objects, r->alloc_bytes, s->rate, &v[0], &v[1]);
        sampler_scale(r->inuse_objects, r->inuse_bytes, s->rate, &v[2], &v[3]);
        profile_sample_t *smp = depth == r->depth ? profile_add_sample(p, locs, depth, v) : NULL;
        if (!smp) {
            rc = -ENOMEM;
            break;
        }
        if (r->alloc_objects > 0 && r->alloc_bytes / r->alloc_objects != 0) {
            profile_label_t l = {.key = bytes_key, .num = r->alloc_bytes / r->alloc_objects};
            rc = profile_sample_add_label(p, smp, &l);
        }
    }
    free(pcs.keys);
    free(pcs.ids);
    return rc;
}

int heap_write_proto(int fd, const heap_snapshot_t *s, const char *default_type)
{
    procmap_t *maps = NULL;
    size_t nmaps = 0;
    int rc = procmaps_read(&maps, &nmaps);
    if (rc < 0)
        return rc;
    profile_t *p = profile_new();
    rc = p ? build_profile(p, s, default_type, maps, nmaps) : -ENOMEM;
    if (rc == 0)
        rc = profile_write_fd(p, fd);
    profile_free(p);
    procmaps_free(maps, nmaps);
    return rc;
}

/* --- legacy text --------------------------------------------------------- */

/* Go writes this form through text/tabwriter (minwidth 1, tabwidth 8,
 * padding 1, padchar '\t'); only the "#" frame lines hold tabs. A column's
 * cells are aligned over each run of consecutive lines that have that
 * column: width = widest cell + 1, rounded up to 8, filled with tabs. */
static void emit_aligned(FILE *f, char **lines, size_t n)
{
    enum { MAXCOLS = 3 };
    typedef struct {
        int ncells; /* tab-terminated cells */
        size_t len[MAXCOLS], width[MAXCOLS];
    } cells_t;
    cells_t *c = calloc(n ? n : 1, sizeof(*c));
    if (!c)
        return;
    for (size_t i = 0; i < n; i++) {
        const char *s = lines[i];
        for (const char *tab; c[i].ncells < MAXCOLS && (tab = strchr(s, '\t')); s = tab + 1)
            c[i].len[c[i].ncells++] = (size_t)(tab - s);
    }
    for (int col = 0; col < MAXCOLS; col++) {
        for (size_t i = 0, j; i < n; i = j) {
            size_t w = 0;
            for (j = i; j < n && c[j].ncells > col; j++)
                w = c[j].len[col] + 1 > w ? c[j].len[col] + 1 : w;
            for (size_t k = i; k < j; k++)
                c[k].width[col] = (w + 7) / 8 * 8;
            if (j == i)
                j++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = lines[i];
        for (int col = 0; col < c[i].ncells; col++) {
            fwrite(s, 1, c[i].len[col], f);
            for (size_t t = (c[i].width[col] - c[i].len[col] + 7) / 8; t > 0; t--)
                fputc('\t', f);
            s += c[i].len[col] + 1;
        }
        fprintf(f, "%s\n", s);
    }
    free(c);
}

static void frame_lines(FILE *f, const heap_record_t *r)
{
    char *lines[STACKS_MAX_DEPTH];
    size_t n = 0;
    for (uint32_t i = 0; i < r->depth; i++) {
        uintptr_t pc = r->pcs[i] - 1;
        Dl_info info;
        int rc;
        /* Go prints file:line last; the runtime does not read DWARF, so the
         * object file stands there. */
        if (dladdr((void *)pc, &info) && info.dli_sname)
            rc = asprintf(&lines[n], "#\t%#lx\t%s+%#lx\t%s", (unsigned long)pc, info.dli_sname,
                          (unsigned long)(pc - (uintptr_t)info.dli_saddr),
                          info.dli_fname ? info.dli_fname : "?");
        else
            rc = asprintf(&lines[n], "#\t%#lx", (unsigned long)pc);
        if (rc >= 0)
            n++;
    }
    emit_aligned(f, lines, n);
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    fputc('\n', f);
}

static int by_inuse_desc(const void *a, const void *b)
{
    const heap_record_t *x = *(const heap_record_t *const *)a, *y = *(const heap_record_t *const *)b;
    return x->inuse_bytes > y->inuse_bytes ? -1 : x->inuse_bytes < y->inuse_bytes;
}

static void stats_block(FILE *f)
{
    cprof_stats_t st;
    cprof_stats(&st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
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
    fprintf(f, "# MaxRSS = %llu\n", (unsigned long long)ru.ru_maxrss * 1024);
}

/* Executable lines of /proc/self/maps, so pprof finds the binaries of the
 * text form by itself (it stops at this sentinel and parses the rest). */
static void memory_map(FILE *f)
{
    char *maps = procmaps_slurp("/proc/self/maps", NULL);
    if (!maps)
        return;
    fprintf(f, "\n--- Memory map: ---\n");
    for (char *line = maps, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const char *perm = strchr(line, ' ');
        if (perm && strlen(perm) > 3 && perm[3] == 'x')
            fprintf(f, "%s\n", line);
    }
    free(maps);
}

int heap_write_text(int fd, const heap_snapshot_t *s)
{
    const heap_record_t **order = malloc((s->n ? s->n : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    size_t n = 0;
    int64_t io = 0, ib = 0, ao = 0, ab = 0;
    for (size_t i = 0; i < s->n; i++) {
        const heap_record_t *r = &s->recs[i];
        if (r->alloc_objects == 0 && r->inuse_objects == 0)
            continue;
        order[n++] = r;
        io += r->inuse_objects;
        ib += r->inuse_bytes;
        ao += r->alloc_objects;
        ab += r->alloc_bytes;
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
            (long long)(2 * s->rate));
    for (size_t i = 0; i < n; i++) {
        const heap_record_t *r = order[i];
        fprintf(f, "%lld: %lld [%lld: %lld] @", (long long)r->inuse_objects,
                (long long)r->inuse_bytes, (long long)r->alloc_objects, (long long)r->alloc_bytes);
        for (uint32_t j = 0; j < r->depth; j++)
            fprintf(f, " %#lx", (unsigned long)r->pcs[j]);
        fputc('\n', f);
        frame_lines(f, r);
    }
    stats_block(f);
    memory_map(f);
    free(order);
    int rc = fclose(f) == 0 && text ? 0 : -ENOMEM;
    for (size_t off = 0; rc == 0 && off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            rc = -errno;
        else
            off += (size_t)w;
    }
    free(text);
    return rc;
}
