/* buckets.c — the heap profile's table of (stack, size, rate, labels)
 * buckets (see buckets.h). */
#include "buckets.h"

#include "arena.h"
#include "base/hash.h"
#include "rt.h"
#include "unwind.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define NHEADS (1u << 16)
#define MAX_BUCKETS (1u << 20)
/* index -> bucket in pages of 64 Ki entries, mapped as the table grows, so
 * a small program pays 512 KiB, not the 8 MiB of the largest table. */
#define PAGE_BITS 16
#define NPAGES (MAX_BUCKETS >> PAGE_BITS)

static bucket_t **heads;
static bucket_t **stack_heads; /* first bucket of each stack, by its hash;
                                * used under the insert lock only */
static bucket_t **table[NPAGES]; /* pages published with release */
#define NCELL_PAGES (MAX_BUCKETS >> BUCKET_CELL_BITS)
bucket_cell_t *buckets_cells[NCELL_PAGES]; /* pages published with release */
static uint32_t count;
static rt_lock_t insert_lock = RT_LOCK_INIT;
static bucket_t *overflow;

/* The one frame of the overflow bucket: its name tells the reader. */
__attribute__((noinline, used, visibility("default"))) void cprof_stack_table_full(void)
{
    __asm__ volatile("");
}

int buckets_init(void)
{
    if (heads)
        return 0;
    heads = arena_map(NHEADS * sizeof(*heads));
    stack_heads = arena_map(NHEADS * sizeof(*stack_heads));
    table[0] = arena_map(sizeof(bucket_t *) << PAGE_BITS);
    buckets_cells[0] = arena_map(sizeof(bucket_cell_t) << BUCKET_CELL_BITS);
    overflow = arena_alloc(sizeof(*overflow) + sizeof(uintptr_t));
    if (!heads || !stack_heads || !table[0] || !buckets_cells[0] || !overflow)
        return -ENOMEM;
    overflow->cell = &buckets_cells[0][0];
    /* +1: the writer names pc-1, which must stay inside the function. */
    overflow->own_pcs[0] = (uintptr_t)cprof_stack_table_full + 1;
    overflow->pcs = overflow->own_pcs;
    overflow->depth = 1;
    overflow->index = 0;
    table[0][0] = overflow;
    count = 1;
    return 0;
}

/* Most of its time, and memcmp's, is lines of the bucket missing (perf,
 * sqlite3 at rate 1: 62% of find's samples on the hash's load). Issuing
 * the prefetches of the stack's lines (right after the bucket, at rate 1)
 * with the first load measured no faster: find, buckets_intern and
 * memcmp took 0.118-0.137 as many samples as libsqlite3, 0.123-0.144
 * with them (4 interleaved runs each). At rate 1 the thread's memo
 * answers most lookups before this one (buckets_index). */
static bucket_t *find(bucket_t *b, uint64_t h, const uintptr_t *pcs, int depth, uint64_t size,
                      int64_t rate, uint32_t labels)
{
    for (; b; b = __atomic_load_n(&b->chain, __ATOMIC_ACQUIRE))
        if (b->hash == h && b->size == size && b->rate == rate && b->labels == labels &&
            b->depth == (uint32_t)depth &&
            memcmp(b->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0)
            return b;
    return NULL;
}

/* The first bucket of this stack, whose copy of it a new size shares, or
 * NULL (insert lock held). */
static bucket_t *find_stack_locked(uint64_t stack_hash, const uintptr_t *pcs, int depth)
{
    for (bucket_t *b = stack_heads[stack_hash & (NHEADS - 1)]; b; b = b->stack_chain)
        if (b->depth == (uint32_t)depth &&
            memcmp(b->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0)
            return b;
    return NULL;
}

bucket_t *buckets_intern(const uintptr_t *pcs, int depth, uint64_t stack_hash, uint64_t size,
                         int64_t rate, uint32_t labels)
{
    /* At rate 1 (every allocation sampled) the scale is 1 whatever the
     * size: the sizes of a stack just sum, in one bucket, so that a site
     * of a million sizes does not fill the table. */
    if (rate <= 1)
        size = 0;
    /* The sizes of one stack spread over the chains, so that a stack
     * allocating many sizes does not make one long chain. */
    uint64_t h = hash_pcs_step(stack_hash ^ hash_mix64(size + 1), (uintptr_t)rate);
    if (labels)
        h = hash_pcs_step(h, labels);
    bucket_t **head = &heads[h & (NHEADS - 1)];
    bucket_t *b = find(__atomic_load_n(head, __ATOMIC_ACQUIRE), h, pcs, depth, size, rate, labels);
    if (b)
        return b;
    rt_lock(&insert_lock);
    bucket_t *first = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    b = find(first, h, pcs, depth, size, rate, labels);
    bucket_t ***page = &table[count >> PAGE_BITS];
    if (!b && count < MAX_BUCKETS && !*page)
        __atomic_store_n(page, arena_map(sizeof(bucket_t *) << PAGE_BITS), __ATOMIC_RELEASE);
    bucket_cell_t **cells = &buckets_cells[count >> BUCKET_CELL_BITS];
    if (!b && count < MAX_BUCKETS && !*cells)
        __atomic_store_n(cells, arena_map(sizeof(bucket_cell_t) << BUCKET_CELL_BITS),
                         __ATOMIC_RELEASE);
    bucket_t *same_stack = b ? NULL : find_stack_locked(stack_hash, pcs, depth);
    size_t own = same_stack ? 0 : (size_t)depth * sizeof(uintptr_t);
    if (!b && count < MAX_BUCKETS && *page && *cells && (b = arena_alloc(sizeof(*b) + own))) {
        b->cell = &(*cells)[count & ((1u << BUCKET_CELL_BITS) - 1)];
        b->hash = h;
        b->size = size;
        b->rate = rate;
        b->labels = labels;
        b->depth = (uint32_t)depth;
        if (same_stack) {
            b->pcs = same_stack->pcs;
        } else {
            memcpy(b->own_pcs, pcs, own);
            b->pcs = b->own_pcs;
            bucket_t **sh = &stack_heads[stack_hash & (NHEADS - 1)];
            b->stack_chain = *sh;
            *sh = b;
        }
        b->index = count;
        b->chain = first;
        (*page)[count & ((1u << PAGE_BITS) - 1)] = b;
        __atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
        __atomic_store_n(head, b, __ATOMIC_RELEASE);
    }
    rt_unlock(&insert_lock);
    return b ? b : overflow;
}

/* The memo (buckets_index). At rate 1 a thread's stack is its last
 * walk's in only 11% of sqlite3's samples (jq 56%, python3 and xmllint
 * 7%), and its bucket one of the thread's last 16 in 23%: its sites
 * share the leaf frames and differ above them. Named by the part carried
 * over and the frames walked anew (5.25 of them on average), 95-99.8% of
 * its buckets are found here (jq 95-99.8%, python3 81-88%, xmllint all;
 * entries by address, so the conflicts move with ASLR). An entry's first
 * line still misses as the bucket's did (32% of the lookup's samples),
 * but one line, not the chain's head, the bucket's and its stack's:
 * sqlite3 at scale 0.2 (callgrind) D1 read misses 8.50 -> 6.92 M, for
 * 1.6% more instructions (1869 -> 1899 M); perf samples of the whole
 * run over libsqlite3's, medians of 7 interleaved runs, 2.361 -> 2.235
 * (cprof's and memcmp's 1.031 -> 0.917); libjq's (5) 1.528 -> 1.517;
 * libpython's (5) 2.148 -> 2.206 and libxml2's (5) 5.038 -> 4.870, both
 * within their runs' spread (2.09-2.34, 4.30-5.43).
 *
 * Two ways a set (128 sets, the least recently found entry replaced)
 * did not pay: python3 pywork.py 20000 at rate 1 (callgrind, 1 run
 * each) missed 109.0 K -> 68.8 K times, buckets_intern 20.7 -> 15.3 M
 * instructions, but the second way's test and the age bit cost more:
 * buckets_index with intern 72.9 -> 74.2 M (not timed: a loaded
 * machine). Most misses left are walks cut at their max (no tags): 60 K
 * of python3's 433 K samples; the conflicts move with ASLR (9 K to 38 K
 * in two runs, direct-mapped).
 *
 * An entry: the stack whose part carried over from the last walk is
 * named tag and whose frames before it are pcs[0] to pcs[fresh - 1], with
 * this size, rate and labels, is the bucket at index. Two lines.
 *
 * A stack cut at the depth has no names (a name is of the stack to its
 * end, unwind.h): its entry (tag MEMO_CUT) is its bucket's, found by a
 * few of its frames and checked against the bucket's whole stack, which
 * costs a compare, not the hash of the stack and the table's lookup.
 * python3's start (its imports) has such stacks: 60 K of the 83 K samples
 * of an empty script, the same in every run (433 K at pywork.py 20000,
 * 1.82 M at 100000). There (callgrind, 1 run each) the memo found 15.3 K
 * buckets before, 59.1-59.5 K now (2 runs); record_sampled 209.3 ->
 * 191.2 M instructions, the run 554.8 -> 536.9 M. Dropped, the other
 * way: naming a cut stack's frames to its cut (a mark in the tag; cfi
 * keeping the tags of frames taken to a cut last walk's end; a name at
 * position k after fresh new frames telling the bucket only if k <=
 * fresh): 29.3 K found, record_sampled 207.6 M; 30.3 K and 219.9 M when
 * a miss named every frame to the cut. The tags are lost wherever a walk
 * is cut inside the frames it takes, and a shallower leaf cannot use
 * them. */
#define MEMO_FRESH 11
#define MEMO_CUT 1 /* no frame's tag: that would be the overflow's */
typedef struct {
    uint64_t tag; /* 0: empty */
    uint64_t size;
    int64_t rate;
    uint32_t labels, index;
    uint32_t fresh; /* a cut stack's entry: the depth */
    union {
        uintptr_t pcs[MEMO_FRESH];
        const uintptr_t *stack; /* a cut stack's entry: its bucket's */
    };
} memo_t;
_Static_assert(sizeof(memo_t) == 128, "a memo entry is two lines");
#define MEMO_N (CFI_MEMO_BYTES / sizeof(memo_t))

/* buckets_index for a stack cut at the depth (no tags, a memo). Its
 * entry is keyed by its leaf frames, where the stacks of one deep caller
 * differ, and its last. Buckets found from the memo in python3's start
 * (83 K samples, 2 runs each), keyed by the last and the first 2 frames:
 * 44.4-44.6 K, 4: 55.6-57.3 K, 6: 59.1-59.5 K, 8: 59.2-59.3 K; by
 * frames spread over the stack, 3: 41.0-41.1 K, 9: 41.9 K, 17: 46.7-47.9
 * K (conflicts of stacks that differ near the leaf). */
#define CUT_KEY_LEAF 6
static uint32_t cut_index(const unwind_stack_t *st, uint64_t size, int64_t rate,
                          uint32_t labels, bool *memo)
{
    const uintptr_t *pcs = st->pcs;
    uint32_t depth = (uint32_t)st->depth;
    uint64_t key = hash_pcs_step(labels, pcs[depth - 1]);
    for (uint32_t k = 0; k < CUT_KEY_LEAF && k < depth; k++)
        key = hash_pcs_step(key, pcs[k]);
    memo_t *m = &((memo_t *)st->memo)[hash_mix64(key) & (MEMO_N - 1)];
    if (m->tag == MEMO_CUT && m->size == size && m->rate == rate && m->labels == labels &&
        m->fresh == depth && memcmp(m->stack, pcs, depth * sizeof(*pcs)) == 0) {
        *memo = true;
        return m->index;
    }
    *memo = false;
    uint64_t hash = st->hash ? st->hash : hash_pcs(pcs, depth);
    bucket_t *b = buckets_intern(pcs, (int)depth, hash, size, rate, labels);
    if (b->index) { /* not the overflow's: its stack is not this one */
        m->tag = MEMO_CUT;
        m->size = size;
        m->rate = rate;
        m->labels = labels;
        m->index = b->index;
        m->fresh = depth;
        m->stack = b->pcs;
    }
    return b->index;
}

uint32_t buckets_index(const unwind_stack_t *st, uint64_t size, int64_t rate, uint32_t labels,
                       bool *memo)
{
    if (rate <= 1) /* as buckets_intern does */
        size = 0;
    int fresh = st->fresh, i = 0;
    uint64_t tag = 0, *tags = st->tags;
    memo_t *m = NULL;
    uint32_t index;
    if (!tags && st->memo)
        return cut_index(st, size, rate, labels, memo);
    if (tags && fresh < st->depth && fresh <= MEMO_FRESH && (tag = tags[fresh]) != 0) {
        /* By the key, not the stack alone: a stack met after different
         * stacks has several names, and they would evict each other. */
        m = &((memo_t *)st->memo)[hash_mix64(tag ^ st->hash ^ labels) & (MEMO_N - 1)];
        uint64_t differ = (m->tag ^ tag) | (m->size ^ size) | (uint64_t)(m->rate ^ rate) |
                          (m->labels ^ labels) | (m->fresh ^ (uint32_t)fresh);
        for (int k = 0; k < fresh; k++)
            differ |= m->pcs[k] ^ st->pcs[k];
        if (!differ) {
            index = m->index;
            *memo = true;
            goto tag;
        }
    }
    *memo = false;
    index = buckets_intern(st->pcs, st->depth, st->hash, size, rate, labels)->index;
    if (!index) /* the overflow's stack is not this one: no name */
        return 0;
    if (m) {
        m->tag = tag;
        m->size = size;
        m->rate = rate;
        m->labels = labels;
        m->index = index;
        m->fresh = (uint32_t)fresh;
        memcpy(m->pcs, st->pcs, (size_t)fresh * sizeof(*st->pcs));
    }
    if (!tags)
        return index;
    /* Frames carried over without a tag (their walk's holder set none)
     * are named too; the memo's key had one. */
    while (fresh < st->depth && !tags[fresh])
        fresh++;
tag:
    /* The frames walked anew name this bucket's stack from there out. */
    for (; i < fresh; i++)
        tags[i] = (uint64_t)index << 32 | (uint32_t)i;
    return index;
}

uint32_t buckets_count(void)
{
    return heads ? __atomic_load_n(&count, __ATOMIC_ACQUIRE) : 0;
}

bucket_t *buckets_get(uint32_t index)
{
    bucket_t **page = __atomic_load_n(&table[index >> PAGE_BITS], __ATOMIC_ACQUIRE);
    return page[index & ((1u << PAGE_BITS) - 1)];
}

bucket_counts_t *buckets_counts_slow(bucket_cell_t *b, uint32_t slot)
{
    if (!slot) /* no counter block: the shared counters */
        return &b->counts;
    uint32_t none = 0;
    if (__atomic_compare_exchange_n(&b->owner, &none, slot, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        return &b->counts;
    /* A second thread: shards. Lock-free, so the loser of a race leaves
     * its lines in the arena: at most one set per thread and bucket. */
    bucket_shard_t *sh = arena_alloc_aligned(BUCKET_SHARDS * sizeof(*sh), _Alignof(bucket_shard_t));
    if (!sh) /* the memory limit: the shared counters */
        return &b->counts;
    bucket_shard_t *cur = NULL;
    if (!__atomic_compare_exchange_n(&b->shards, &cur, sh, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        sh = cur;
    return &sh[slot % BUCKET_SHARDS].c;
}

static uint64_t load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void bucket_read(const bucket_t *b, bucket_counts_t *out)
{
    const bucket_shard_t *sh = __atomic_load_n(&b->cell->shards, __ATOMIC_ACQUIRE);
    const bucket_counts_t *c = &b->cell->counts;
    unsigned n = sh ? BUCKET_SHARDS : 0;
    out->free_objects = load(&c->free_objects);
    out->free_bytes = load(&c->free_bytes);
    for (unsigned i = 0; i < n; i++) {
        out->free_objects += load(&sh[i].c.free_objects);
        out->free_bytes += load(&sh[i].c.free_bytes);
    }
    out->alloc_objects = load(&c->alloc_objects);
    out->alloc_bytes = load(&c->alloc_bytes);
    out->temp_objects = load(&c->temp_objects);
    out->temp_bytes = load(&c->temp_bytes);
    for (unsigned i = 0; i < n; i++) {
        out->alloc_objects += load(&sh[i].c.alloc_objects);
        out->alloc_bytes += load(&sh[i].c.alloc_bytes);
        out->temp_objects += load(&sh[i].c.temp_objects);
        out->temp_bytes += load(&sh[i].c.temp_bytes);
    }
}

uint64_t buckets_bytes(void)
{
    uint64_t n = buckets_count(), bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        const bucket_t *b = buckets_get(i);
        bytes += sizeof(*b) + sizeof(bucket_cell_t) +
                 (b->pcs == b->own_pcs ? b->depth * sizeof(uintptr_t) : 0);
        if (__atomic_load_n(&b->cell->shards, __ATOMIC_RELAXED))
            bytes += BUCKET_SHARDS * sizeof(bucket_shard_t);
    }
    return bytes;
}

void buckets_fork_prepare(void)
{
    rt_lock(&insert_lock);
}

void buckets_fork_release(void)
{
    rt_unlock(&insert_lock);
}
