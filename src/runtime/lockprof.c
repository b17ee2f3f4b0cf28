/* lockprof.c — mutex and block profile records and writers (see
 * lockprof.h). */
#include "lockprof.h"

#include "labels.h"
#include "profwriter.h"
#include "sitetab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t lockprof_mutex_rate;
int64_t lockprof_block_rate;
uint32_t lockprof_watch;

/* v[0] events, v[1] nanoseconds waited; raw sampled numbers. */
static sitetab_t mutex_tab = SITETAB_INIT(1u << 16);
static sitetab_t block_tab = SITETAB_INIT(1u << 16);

/* Per-thread xorshift64*, seeded on first use (its own: the heap sampler's
 * sequence, reproducible with CPROF_SEED, stays untouched). */
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

static uint64_t next_random(void)
{
    uint64_t x = rng;
    if (RT_UNLIKELY(x == 0)) {
        x = ((uint64_t)rt_now_ns() << 20) ^ (uintptr_t)&rng;
        x = x ? x : 0x9e3779b97f4a7c15ull;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

static void watch(uint32_t bit, bool on)
{
    if (on)
        __atomic_fetch_or(&lockprof_watch, bit, __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(&lockprof_watch, ~bit, __ATOMIC_RELAXED);
}

void lockprof_set_mutex_rate(int64_t rate)
{
    __atomic_store_n(&lockprof_mutex_rate, rate < 0 ? 0 : rate, __ATOMIC_RELAXED);
    watch(LOCKPROF_WATCH_MUTEX, rate > 0);
}

void lockprof_set_block_rate(int64_t rate)
{
    __atomic_store_n(&lockprof_block_rate, rate < 0 ? 0 : rate, __ATOMIC_RELAXED);
    watch(LOCKPROF_WATCH_BLOCK, rate > 0);
}

void lockprof_watch_trace(bool on)
{
    watch(LOCKPROF_WATCH_TRACE, on);
}

/* Go's mutexevent: int64(fastrand()) % rate == 0. */
bool lockprof_mutex_take(int64_t rate)
{
    return rate == 1 || (rate > 1 && next_random() % (uint64_t)rate == 0);
}

/* Go's blocksampled: an event at least rate long always; a shorter one
 * unless a random number below rate exceeds its duration. */
bool lockprof_block_take(int64_t delay_ns, int64_t rate)
{
    if (rate <= 0)
        return false;
    if (delay_ns >= rate)
        return true;
    return (int64_t)(next_random() % (uint64_t)rate) <= delay_ns;
}

static void add(sitetab_t *t, const uintptr_t *pcs, int depth, int64_t delay_ns)
{
    /* The waiting thread's labels: the hooks run on it. */
    site_t *e = sitetab_intern_labeled(t, pcs, depth < 0 ? 0 : depth, labels_now());
    if (!e)
        return;
    __atomic_add_fetch(&e->v[0], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&e->v[1], delay_ns > 0 ? delay_ns : 0, __ATOMIC_RELAXED);
}

void lockprof_mutex_event(const uintptr_t *pcs, int depth, int64_t delay_ns)
{
    add(&mutex_tab, pcs, depth, delay_ns);
}

void lockprof_block_event(const uintptr_t *pcs, int depth, int64_t delay_ns)
{
    add(&block_tab, pcs, depth, delay_ns);
}

/* --- writing ------------------------------------------------------------- */

typedef struct {
    const uintptr_t *pcs;
    uint32_t depth;
    uint32_t labels;
    int64_t count, delay;
} rec_t;

/* Go sorts by cycles, largest first (sort.Slice: not stable; cprof breaks
 * ties by count, then stack, so output is reproducible). */
static int by_delay(const void *a, const void *b)
{
    const rec_t *x = a, *y = b;
    if (x->delay != y->delay)
        return x->delay > y->delay ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    uint32_t d = x->depth < y->depth ? x->depth : y->depth;
    int c = memcmp(x->pcs, y->pcs, d * sizeof(uintptr_t));
    if (c || x->depth != y->depth)
        return c ? c : (x->depth > y->depth) - (x->depth < y->depth);
    return (x->labels > y->labels) - (x->labels < y->labels);
}

static int snapshot(sitetab_t *t, rec_t **out, size_t *n_out)
{
    size_t n = 0, cap = 64;
    rec_t *r = malloc(cap * sizeof(*r));
    for (site_t *e = sitetab_first(t); r && e; e = sitetab_next(e)) {
        int64_t count = __atomic_load_n(&e->v[0], __ATOMIC_RELAXED);
        if (count <= 0)
            continue;
        if (n == cap) {
            rec_t *nr = realloc(r, cap * 2 * sizeof(*r));
            if (!nr) {
                free(r);
                return -ENOMEM;
            }
            r = nr;
            cap *= 2;
        }
        r[n++] = (rec_t){e->pcs, e->depth, e->labels, count,
                         __atomic_load_n(&e->v[1], __ATOMIC_RELAXED)};
    }
    if (!r)
        return -ENOMEM;
    qsort(r, n, sizeof(*r), by_delay);
    *out = r;
    *n_out = n;
    return 0;
}

/* name: "mutex" or "contention" (Go's names for the text header); scale:
 * the mutex rate, or 0 for no scaling (block). */
static int write_profile(sitetab_t *t, int fd, int debug, const char *name, int64_t scale)
{
    if (debug < 0)
        return -EINVAL;
    rec_t *r;
    size_t n;
    int rc = snapshot(t, &r, &n);
    if (rc < 0)
        return rc;
    if (debug == 0) {
        profwriter_t *b = profwriter_new();
        if (!b) {
            free(r);
            return -errno;
        }
        profile_t *p = profwriter_profile(b);
        if (profile_add_sample_type(p, "contentions", "count") < 0 ||
            profile_add_sample_type(p, "delay", "nanoseconds") < 0)
            rc = -ENOMEM;
        p->period_type.type = profile_intern(p, "contentions");
        p->period_type.unit = profile_intern(p, "count");
        p->period = 1;
        int64_t m = scale > 0 ? scale : 1;
        for (size_t i = 0; i < n && rc == 0; i++) {
            int64_t v[2] = {r[i].count * m, r[i].delay * m};
            profile_label_t l[LABELS_MAX_PAIRS];
            int nl = labels_to_profile(p, r[i].labels, l, LABELS_MAX_PAIRS);
            rc = nl < 0 ? nl : profwriter_add(b, r[i].pcs, r[i].depth, v, l, (size_t)nl);
        }
        if (rc == 0)
            rc = profwriter_write(b, fd);
        profwriter_free(b);
        free(r);
        return rc;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(r);
        return -ENOMEM;
    }
    /* Delays are measured in nanoseconds: one "cycle" per nanosecond. */
    fprintf(f, "--- %s:\ncycles/second=1000000000\n", name);
    if (scale >= 0)
        fprintf(f, "sampling period=%lld\n", (long long)scale);
    stacknames_t *names = stacknames_new();
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%lld %lld @", (long long)r[i].delay, (long long)r[i].count);
        for (uint32_t j = 0; j < r[i].depth; j++)
            fprintf(f, " %#lx", (unsigned long)r[i].pcs[j]);
        fputc('\n', f);
        profwriter_frame_lines(f, names, r[i].pcs, r[i].depth);
    }
    stacknames_free(names);
    profwriter_memory_map(f);
    rc = fclose(f) == 0 && text ? profile_write_all(fd, text, len) : -ENOMEM;
    free(text);
    free(r);
    return rc;
}

int lockprof_write_mutex(int fd, int debug)
{
    return write_profile(&mutex_tab, fd, debug, "mutex",
                         __atomic_load_n(&lockprof_mutex_rate, __ATOMIC_RELAXED));
}

int lockprof_write_block(int fd, int debug)
{
    return write_profile(&block_tab, fd, debug, "contention", -1);
}

static size_t count(sitetab_t *t)
{
    size_t n = 0;
    for (site_t *e = sitetab_first(t); e; e = sitetab_next(e))
        n += __atomic_load_n(&e->v[0], __ATOMIC_RELAXED) > 0;
    return n;
}

size_t lockprof_count_mutex(void)
{
    return count(&mutex_tab);
}

size_t lockprof_count_block(void)
{
    return count(&block_tab);
}

void lockprof_fork_prepare(void)
{
    sitetab_fork_prepare(&mutex_tab);
    sitetab_fork_prepare(&block_tab);
}

void lockprof_fork_release(void)
{
    sitetab_fork_release(&block_tab);
    sitetab_fork_release(&mutex_tab);
}
