/* buckets.h — the heap profile's table of buckets, one per distinct
 * (stack, object size) as Go's (runtime/mprof.go stkbucket(memProfile, size,
 * stk)), each with its alloc/free counters (stacks come from unwind.h).
 *
 * Why the size is part of the key: a sampled object of size s stands for
 * 1/(1 - exp(-s/rate)) objects (sampler.h). With one bucket per stack, a
 * stack allocating several sizes could only be scaled by its average size,
 * which is biased: a million 16-byte objects and a few 64 MiB ones from one
 * stack were estimated at a few hundred objects. A bucket of one size is
 * scaled by its own probability (Go's scaleHeapSample), so every profile
 * built from the buckets (heap, temporaries, peak, leaks, debug=1 text) is
 * unbiased. At rate 1 the scale is 1 and a stack's sizes just sum: in one
 * bucket of size 0, so that a site allocating a million sizes (a string
 * builder) takes one bucket, not the table; the writers' "bytes" label is
 * then the bucket's average size, as for the overflow bucket. The
 * buckets of one stack share one copy of its return addresses: a further
 * size costs a bucket's counters, not the stack again.
 *
 * The sampling rate is part of the key too: each sample is scaled by the
 * rate it was taken at, also after the rate changed (sampler.h). So is the
 * allocating thread's label set (labels.h): the object keeps the labels
 * it was allocated under through its bucket, for inuse, peak and leaks.
 *
 * A bucket's counters live in its cell, in an array indexed by the
 * bucket's index (the live map's value), apart from the bucket: a free
 * reaches them in one line. Counters scale with threads (issue 24): a
 * cell's counters are written
 * by the first thread to change them (its owner, by counter block: a
 * thread's slot, counters.h); once another thread changes them, the cell
 * gets BUCKET_SHARDS sets of counters (two cache lines each), one per slot modulo the
 * count, and every change goes there. Readers (bucket_read) sum the
 * cell's own counters and its shards. Only buckets that several threads
 * change pay the 4 lines, from the arena; a thread without a counter block
 * (slot 0), or a bucket whose shards could not be had, changes the
 * cell's own counters, atomically as every shard's.
 *
 * Lookups are lock-free over append-only hash chains; inserts take one lock
 * and publish with release stores. A bucket is never freed. When the table
 * is full (CPROF_MEMORY_LIMIT or 2^20 stacks), samples count into one
 * overflow bucket, whose single frame is the function
 * cprof_stack_table_full, so reports say what happened. */
#ifndef CPROF_BUCKETS_H
#define CPROF_BUCKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Atomically updated; bytes are the sizes the program asked for. What
 * every change touches comes first: the counters and the peak's stamp. */
typedef struct {
    uint64_t alloc_objects, alloc_bytes, free_objects, free_bytes;
    /* the four alloc/free counters as they were at the heap's last high,
     * valid when peak_epoch is the current epoch; PEAK_BUSY set in it
     * while they are written (peak.h). Each set of a bucket saves its own,
     * so a thread saves on its own shard's lines. */
    uint64_t peak_epoch;
    /* freed by the allocating thread before it allocated again (heap.c) */
    uint64_t temp_objects, temp_bytes;
    uint64_t peak_alloc_objects, peak_alloc_bytes, peak_free_objects, peak_free_bytes;
} bucket_counts_t;

/* Measured and dropped: slots 1-3 a shard each, added to without the lock
 * prefix, slot 0 and slots 4 and up on shard 0 (locked). Rate 1, mtindex,
 * CPU medians of interleaved runs at load 2.5-3.6: 2 threads 1.70 ->
 * 1.63 s (faster in 6 of 9), 4 threads 1.91 -> 1.92 s (2 of 5), 6 threads
 * 1.82 -> 1.97 s (1 of 5) and 1.92 -> 1.96 s (2 of 7): the threads past
 * the third crowd shard 0. */
#define BUCKET_SHARDS 4u

typedef struct {
    bucket_counts_t c;
} __attribute__((aligned(64))) bucket_shard_t;

/* What a change reads (shards, owner) and writes (the counters) of a
 * bucket, kept apart from the bucket in a dense array by its index, so
 * that a free reaches it from the live map's index in one line, not
 * through the table of buckets and the bucket's own first line: a free
 * credited to a cold bucket missed on both (perf, sqlite3 at rate 1:
 * credit_free and buckets_get took 4.5-5.6% as many samples as
 * libsqlite3, 3.0-3.5% with cells; a sample prefetches its cell,
 * heap.c). The hot fields on one line: a 128-byte cell, 40 bytes more a
 * bucket than before. Before cells, buckets 64-byte aligned with the
 * stack pointer moved onto the counters' line (a sample then read lines
 * 0 and 2 on, not 1) measured no faster: sqlite3's D1 read misses 14.93
 * -> 14.20 M (callgrind, scale 0.2), python3's 11.36 -> 11.32 M; perf
 * samples over the program's own, medians of 9 interleaved runs,
 * sqlite3 2.202 -> 2.202, python3 2.046 -> 2.045; +0.4% peak RSS. */
typedef struct {
    bucket_shard_t *shards;     /* BUCKET_SHARDS, or NULL; published once */
    uint32_t owner;             /* slot of the first thread to change counts,
                                 * 0 while none has (set once) */
    bucket_counts_t counts;     /* the owner's, and all until shards exist */
} __attribute__((aligned(64))) bucket_cell_t;

typedef struct bucket {
    bucket_cell_t *cell;        /* its counters: buckets_cell(index) */
    uint32_t index;             /* position in the table, for the live map */
    uint32_t labels;            /* label set id (labels.h), 0: none */
    struct bucket *chain;       /* next in the (stack, size, rate) hash chain */
    struct bucket *stack_chain; /* next stack's first bucket (insert lock) */
    const uintptr_t *pcs;       /* return addresses, leaf first: own_pcs of
                                 * the stack's first bucket */
    uint64_t hash;              /* of the stack, the size and the rate */
    uint64_t size;              /* bytes asked for by each object here; 0
                                 * at rate <= 1 (any sizes) */
    int64_t rate;               /* bytes; the sampling rate of its samples, 0
                                 * for the overflow bucket (any rate) */
    uint32_t depth;
    uintptr_t own_pcs[];        /* the stack's first bucket only */
} bucket_t;

/* Maps the table. 0 or -ENOMEM. */
int buckets_init(void);

/* The bucket of this stack, object size, sampling rate (the size
 * ignored at rate <= 1) and label set, created if new;
 * hash is the stack's hash_pcs (base/hash.h). The overflow bucket (size 0,
 * rate 0: any sizes and rates mixed) when the table is full. Never NULL
 * after a successful buckets_init. */
bucket_t *buckets_intern(const uintptr_t *pcs, int depth, uint64_t hash, uint64_t size,
                         int64_t rate, uint32_t labels);

struct unwind_stack;

/* The index of buckets_intern(st's stack, ...)'s bucket, the overflow's
 * 0. With st's tags (a cfi walk's, unwind.h), from the thread's memo
 * where it can: the stack's part carried over from the last walk is
 * named by its first frame's tag, a bucket and a position in its stack
 * that this sets on the frames of every stack it finds a bucket for (not
 * the overflow's). A stack whose name and frames walked anew (a few) are
 * a memo entry's is that entry's stack: its bucket is found with no
 * lookup in the table and no compare of the whole stack (*memo set).
 * Without tags but with a memo (a stack cut at the depth), its entry in
 * the memo is found by the stack itself, compared whole; st's hash may
 * then be 0, made here only for a lookup in the table. */
uint32_t buckets_index(const struct unwind_stack *st, uint64_t size, int64_t rate,
                       uint32_t labels, bool *memo);

/* Slow path of bucket_counts: claims the cell for slot, or gives it
 * shards. */
bucket_counts_t *buckets_counts_slow(bucket_cell_t *cell, uint32_t slot);

/* The cells in pages of 2^BUCKET_CELL_BITS, mapped as the table grows;
 * a page is published (release) before any bucket of it. */
#define BUCKET_CELL_BITS 10
extern bucket_cell_t *buckets_cells[] __attribute__((visibility("hidden")));

/* The cell of the bucket at index (buckets_get(index)->cell). */
static inline bucket_cell_t *buckets_cell(uint32_t index)
{
    bucket_cell_t *page =
        __atomic_load_n(&buckets_cells[index >> BUCKET_CELL_BITS], __ATOMIC_ACQUIRE);
    return &page[index & ((1u << BUCKET_CELL_BITS) - 1)];
}

/* The counters a thread of slot (counters_slot) adds to in a cell. */
static inline bucket_counts_t *bucket_cell_counts(bucket_cell_t *cell, uint32_t slot)
{
    bucket_shard_t *sh = __atomic_load_n(&cell->shards, __ATOMIC_ACQUIRE);
    if (__builtin_expect(sh != NULL, 0))
        return &sh[slot % BUCKET_SHARDS].c;
    if (__builtin_expect(__atomic_load_n(&cell->owner, __ATOMIC_RELAXED) == slot && slot, 1))
        return &cell->counts;
    return buckets_counts_slow(cell, slot);
}

/* The counters a thread of slot adds to in b. */
static inline bucket_counts_t *bucket_counts(bucket_t *b, uint32_t slot)
{
    return bucket_cell_counts(b->cell, slot);
}

/* b's counters summed over its shards: the frees read before the
 * allocations, so that in-use never goes below zero (a free is counted
 * after its allocation, heap.c). */
void bucket_read(const bucket_t *b, bucket_counts_t *out);

uint32_t buckets_count(void);
bucket_t *buckets_get(uint32_t index);

/* Bytes the buckets and their stacks take (memstats' BuckHashSys). */
uint64_t buckets_bytes(void);

/* fork: hold / release the insert lock around fork(). */
void buckets_fork_prepare(void);
void buckets_fork_release(void);

#endif
