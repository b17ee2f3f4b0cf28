// links: src/runtime/buckets.c src/runtime/arena.c src/runtime/rt.c -lpthread
/* test_buckets.c — the heap profile's bucket table: one bucket per distinct
 * (stack, size), so that each size is scaled by its own probability, and
 * one copy of each stack. */
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>

#include "base/hash.h"
#include "runtime/buckets.h"
#include "runtime/unwind.h"

static bucket_t *intern(const uintptr_t *pcs, int depth, uint64_t size)
{
    return buckets_intern(pcs, depth, hash_pcs(pcs, (size_t)depth), size, 512 * 1024, 0);
}

static void test_stack_and_size(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uint32_t before = buckets_count();
    uintptr_t a[3] = {0x1000, 0x2000, 0x3000}, b[3] = {0x1000, 0x2000, 0x3001};
    bucket_t *a16 = intern(a, 3, 16), *a64m = intern(a, 3, 64 << 20), *b16 = intern(b, 3, 16);
    assert_ptr_not_equal(a16, a64m);
    assert_ptr_not_equal(a16, b16);
    assert_ptr_equal(intern(a, 3, 16), a16);
    assert_ptr_equal(intern(a, 3, 64 << 20), a64m);
    assert_int_equal(a16->size, 16);
    assert_int_equal(a64m->size, 64 << 20);
    assert_int_equal(a64m->depth, 3);
    assert_memory_equal(a64m->pcs, a, sizeof(a));
    /* One copy of a stack for all its sizes. */
    assert_ptr_equal(a64m->pcs, a16->pcs);
    assert_ptr_not_equal(b16->pcs, a16->pcs);
    assert_memory_equal(b16->pcs, b, sizeof(b));
    assert_int_equal(buckets_count(), before + 3);
    assert_ptr_equal(buckets_get(a64m->index), a64m);
    /* A stack of many sizes: each its own bucket, each found again. */
    for (uint64_t s = 1; s <= 5000; s++)
        assert_int_equal(intern(b, 3, s)->size, s);
    for (uint64_t s = 1; s <= 5000; s++)
        assert_int_equal(intern(b, 3, s)->size, s);
    assert_int_equal(buckets_count(), before + 3 + 4999); /* b's 16 existed */
    /* Each bucket's counters are its own cell, found by its index alone
     * (a free's path), over several pages of cells, and start at zero. */
    for (uint64_t s = 1; s <= 5000; s++) {
        bucket_t *x = intern(b, 3, s);
        assert_ptr_equal(buckets_cell(x->index), x->cell);
        assert_int_equal(x->cell->counts.alloc_objects, 0);
        x->cell->counts.alloc_objects = s;
    }
    for (uint64_t s = 1; s <= 5000; s++)
        assert_int_equal(buckets_cell(intern(b, 3, s)->index)->counts.alloc_objects, s);
}

/* The stack interned is read where the unwinder left it (cfi.h: the
 * thread's kept walk, rewritten by its next walk): a bucket keeps its own
 * copy, and a later stack in the same memory is another bucket. */
static void test_stack_copied(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t walk[4] = {0x7000, 0x7100, 0x7200, 0x7300};
    bucket_t *first = buckets_intern(walk, 4, hash_pcs(walk, 4), 0, 1, 0);
    walk[1] = 0x7101; /* the next walk, another call site */
    bucket_t *next = buckets_intern(walk, 4, hash_pcs(walk, 4), 0, 1, 0);
    assert_ptr_not_equal(first, next);
    assert_ptr_not_equal(first->pcs, walk);
    assert_int_equal(first->pcs[1], 0x7100);
    assert_int_equal(next->pcs[1], 0x7101);
    walk[1] = 0x7100;
    assert_ptr_equal(buckets_intern(walk, 4, hash_pcs(walk, 4), 0, 1, 0), first);
    /* A stack read in place, compared in place: a prefix of the same
     * memory (a walk cut at the profile's depth) is its own bucket. */
    bucket_t *cut = buckets_intern(walk, 3, hash_pcs(walk, 3), 0, 1, 0);
    assert_ptr_not_equal(cut, first);
    assert_int_equal(cut->depth, 3);
}

/* A sample is scaled by the rate it was taken at: a re-attach at another
 * rate makes new buckets, sharing the stack's copy. */
static void test_rate(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t c[2] = {0x4000, 0x5000};
    uint64_t h = hash_pcs(c, 2);
    bucket_t *r1 = buckets_intern(c, 2, h, 32, 1, 0), *rd = buckets_intern(c, 2, h, 32, 512 * 1024, 0);
    assert_ptr_not_equal(r1, rd);
    assert_int_equal(r1->rate, 1);
    assert_int_equal(rd->rate, 512 * 1024);
    assert_ptr_equal(buckets_intern(c, 2, h, 32, 1, 0), r1);
    assert_ptr_equal(r1->pcs, rd->pcs);
}

/* At rate 1 the scale is 1: a stack's sizes share one bucket (size 0), so
 * that a stack of a million sizes takes one bucket, not the table. */
static void test_rate_1_one_bucket(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t d[2] = {0x6000, 0x7000};
    uint64_t h = hash_pcs(d, 2);
    uint32_t before = buckets_count();
    bucket_t *b = buckets_intern(d, 2, h, 16, 1, 0);
    for (uint64_t s = 1; s <= 100000; s++)
        assert_ptr_equal(buckets_intern(d, 2, h, s, 1, 0), b);
    assert_int_equal(b->size, 0);
    assert_int_equal(b->rate, 1);
    assert_int_equal(buckets_count(), before + 1);
    /* At another rate the sizes are apart again. */
    assert_ptr_not_equal(buckets_intern(d, 2, h, 16, 512 * 1024, 0), buckets_intern(d, 2, h, 17, 512 * 1024, 0));
    assert_int_equal(buckets_count(), before + 3);
}

/* The label set is part of the key: an object keeps its allocating
 * thread's labels; the stack's copy is still shared. */
static void test_labels(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t e[2] = {0x8000, 0x9000};
    uint64_t h = hash_pcs(e, 2);
    bucket_t *none = buckets_intern(e, 2, h, 64, 1, 0), *a = buckets_intern(e, 2, h, 64, 1, 1),
             *b = buckets_intern(e, 2, h, 64, 1, 2);
    assert_ptr_not_equal(none, a);
    assert_ptr_not_equal(a, b);
    assert_int_equal(a->labels, 1);
    assert_int_equal(b->labels, 2);
    assert_ptr_equal(buckets_intern(e, 2, h, 64, 1, 1), a);
    assert_ptr_equal(a->pcs, none->pcs);
}

/* A stack as the cfi walk hands it over (unwind.h): depth frames, the
 * first fresh walked anew (their tags 0, as the walk leaves them), the
 * rest carried over with the tags an earlier lookup set. Its bucket must
 * be the table's. */
static uint64_t memo_tags[16];
static char memo_room[CFI_MEMO_BYTES] __attribute__((aligned(64)));

static uint32_t lookup(const uintptr_t *pcs, int depth, int fresh, uint64_t size, int64_t rate,
                       uint32_t labels, bool *memo)
{
    unwind_stack_t st = {.pcs = pcs,
                         .depth = depth,
                         .hash = hash_pcs(pcs, (size_t)depth),
                         .tags = memo_tags,
                         .memo = memo_room,
                         .fresh = fresh};
    for (int i = 0; i < fresh; i++)
        memo_tags[i] = 0;
    uint32_t index = buckets_index(&st, size, rate, labels, memo);
    assert_int_equal(index, buckets_intern(pcs, depth, st.hash, size, rate, labels)->index);
    return index;
}

#define VARIANTS 1000

/* buckets_index from the thread's memo: a stack whose part carried over
 * is named as before and whose new frames are the same is found there,
 * and only then; the same for size (not at rate 1), rate and labels.
 * Each key that differs in one of them is tried VARIANTS times, after
 * the one it differs from, so that some share its memo entry. */
static void test_memo(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t x[5] = {0xa000, 0xa100, 0xa200, 0xa300, 0xa400};
    bool memo;
    /* A first walk: nothing named; every frame is named after it. */
    uint32_t bx = lookup(x, 5, 5, 0, 1, 0, &memo);
    assert_false(memo);
    for (int i = 0; i < 5; i++)
        assert_true(memo_tags[i] != 0);
    /* Joined at frame 2: learned, then found; any size at rate 1; the
     * same stack joined at frame 0. */
    assert_int_equal(lookup(x, 5, 2, 0, 1, 0, &memo), bx);
    assert_false(memo);
    assert_int_equal(lookup(x, 5, 2, 4096, 1, 0, &memo), bx);
    assert_true(memo);
    lookup(x, 5, 0, 0, 1, 0, &memo);
    assert_int_equal(lookup(x, 5, 0, 0, 1, 0, &memo), bx);
    assert_true(memo);
    /* The leaf differs. */
    for (uintptr_t k = 1; k <= VARIANTS; k++) {
        uintptr_t leaf[5] = {0xa000 + 0x10000 * k, 0xa100, 0xa200, 0xa300, 0xa400};
        assert_int_equal(lookup(x, 5, 2, 0, 1, 0, &memo), bx);
        assert_int_not_equal(lookup(leaf, 5, 2, 0, 1, 0, &memo), bx);
    }
    /* The deepest frame differs: the part carried over is another
     * bucket's, named so by the walk before; the new frames are x's. */
    uint32_t last = bx;
    for (uintptr_t k = 1; k <= VARIANTS; k++) {
        uintptr_t deep[5] = {0xa000, 0xa100, 0xa200, 0xa300, 0xa400 + 0x10000 * k};
        memset(memo_tags, 0, sizeof(memo_tags));
        uint32_t b = lookup(deep, 5, 5, 0, 1, 0, &memo);
        assert_int_not_equal(b, last);
        assert_int_equal(lookup(deep, 5, 2, 0, 1, 0, &memo), b);
        assert_int_equal(lookup(deep, 5, 2, 0, 1, 0, &memo), b);
        assert_true(memo);
        last = b;
    }
    /* Labels changing between two identical stacks; at the default rate
     * each size its own bucket, and each rate. */
    int64_t rate = 512 * 1024;
    lookup(x, 5, 5, 0, 1, 0, &memo);
    for (uint32_t k = 1; k <= VARIANTS; k++) {
        assert_int_equal(lookup(x, 5, 2, 0, 1, 0, &memo), bx);
        assert_int_not_equal(lookup(x, 5, 2, 0, 1, k, &memo), bx);
        uint32_t s16 = lookup(x, 5, 2, 16, rate, 0, &memo);
        assert_int_not_equal(lookup(x, 5, 2, 16 + k, rate, 0, &memo), s16);
        assert_int_equal(lookup(x, 5, 2, 16, rate, 0, &memo), s16);
        assert_int_not_equal(lookup(x, 5, 2, 16, rate + k, 0, &memo), s16);
    }
    /* One part carried over, after 2 new frames and after those and one
     * more (a recursion a frame deeper). */
    for (uintptr_t k = 1; k <= VARIANTS; k++) {
        uintptr_t part[3] = {0xd000, 0xd100, 0xd200 + 0x10000 * k};
        uintptr_t y[5] = {0xe000, 0xe100, part[0], part[1], part[2]};
        uintptr_t z[6] = {0xe000, 0xe100, 0xe100, part[0], part[1], part[2]};
        memset(memo_tags, 0, sizeof(memo_tags));
        lookup(part, 3, 3, 0, 1, 0, &memo);
        uint64_t named[3] = {memo_tags[0], memo_tags[1], memo_tags[2]};
        memcpy(memo_tags + 3, named, sizeof(named));
        uint32_t bz = lookup(z, 6, 3, 0, 1, 0, &memo);
        memcpy(memo_tags + 2, named, sizeof(named));
        assert_int_not_equal(lookup(y, 5, 2, 0, 1, 0, &memo), bz);
        memcpy(memo_tags + 3, named, sizeof(named));
        assert_int_equal(lookup(z, 6, 3, 0, 1, 0, &memo), bz);
    }
    /* More new frames than an entry holds: found in the table. */
    uintptr_t many[14];
    for (int i = 0; i < 14; i++)
        many[i] = 0xb000 + 0x100 * (uintptr_t)i;
    memset(memo_tags, 0, sizeof(memo_tags));
    uint32_t bm = lookup(many, 14, 14, 0, 1, 0, &memo);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lookup(many, 14, 13, 0, 1, 0, &memo), bm);
        assert_false(memo);
    }
    /* Without tags (not a whole cfi walk): the table. */
    unwind_stack_t st = {.pcs = x, .depth = 5, .hash = hash_pcs(x, 5)};
    assert_int_equal(buckets_index(&st, 0, 1, 0, &memo), bx);
    assert_false(memo);
}

/* A stack cut at the depth, as unwind.h hands it over: no tags, the
 * walk's memo, no hash yet (0). Its bucket must be the table's. */
static uint32_t lookup_cut(const uintptr_t *pcs, int depth, uint64_t size, int64_t rate,
                           uint32_t labels, bool *memo)
{
    unwind_stack_t st = {.pcs = pcs, .depth = depth, .memo = memo_room};
    uint32_t index = buckets_index(&st, size, rate, labels, memo);
    assert_int_equal(index,
                     buckets_intern(pcs, depth, hash_pcs(pcs, (size_t)depth), size, rate, labels)
                         ->index);
    return index;
}

/* A cut stack is found in the memo the second time, by its whole
 * content: one that differs in any single frame (its entry is keyed by
 * a few frames only), in its depth, size (not at rate 1), rate or labels
 * is the table's bucket, each met right after the stack it differs from. */
static void test_memo_cut(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    enum { D = 40 };
    uintptr_t s[D];
    for (int i = 0; i < D; i++)
        s[i] = 0xc000 + 0x100 * (uintptr_t)i;
    bool memo;
    uint32_t b = lookup_cut(s, D, 0, 1, 0, &memo);
    assert_false(memo);
    assert_int_equal(lookup_cut(s, D, 4096, 1, 0, &memo), b);
    assert_true(memo);
    for (int i = 0; i < D; i++) {
        uintptr_t t[D];
        memcpy(t, s, sizeof(t));
        t[i] += 0x10000;
        lookup_cut(s, D, 0, 1, 0, &memo);
        assert_int_not_equal(lookup_cut(t, D, 0, 1, 0, &memo), b);
        assert_int_equal(lookup_cut(t, D, 0, 1, 0, &memo), lookup_cut(t, D, 0, 1, 0, &memo));
        assert_true(memo);
    }
    lookup_cut(s, D, 0, 1, 0, &memo);
    assert_int_not_equal(lookup_cut(s, D - 1, 0, 1, 0, &memo), b);
    int64_t rate = 512 * 1024;
    for (uint32_t k = 1; k <= VARIANTS; k++) {
        assert_int_equal(lookup_cut(s, D, 0, 1, 0, &memo), b);
        assert_int_not_equal(lookup_cut(s, D, 0, 1, k, &memo), b);
        uint32_t s16 = lookup_cut(s, D, 16, rate, 0, &memo);
        assert_int_not_equal(lookup_cut(s, D, 16 + k, rate, 0, &memo), s16);
        assert_int_equal(lookup_cut(s, D, 16, rate, 0, &memo), s16);
        assert_int_not_equal(lookup_cut(s, D, 16, rate + k, 0, &memo), s16);
    }
}

/* The first thread to change a bucket owns its counters; a second one
 * gives it shards, one per slot modulo BUCKET_SHARDS; a thread without a
 * block (slot 0) shares; reads sum them all. */
static void test_counts_shards(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    uintptr_t pcs[2] = {0x5000, 0x6000};
    bucket_t *b = intern(pcs, 2, 32);
    assert_ptr_equal(bucket_counts(b, 0), &b->cell->counts); /* no owner taken */
    assert_int_equal(b->cell->owner, 0);
    assert_ptr_equal(bucket_counts(b, 3), &b->cell->counts);
    assert_int_equal(b->cell->owner, 3);
    assert_null(b->cell->shards);
    bucket_counts(b, 3)->alloc_objects += 2;
    bucket_counts(b, 3)->alloc_bytes += 64;
    bucket_counts_t *c5 = bucket_counts(b, 5);
    assert_non_null(b->cell->shards);
    assert_ptr_equal(c5, &b->cell->shards[5 % BUCKET_SHARDS].c);
    assert_ptr_equal(bucket_counts(b, 3), &b->cell->shards[3 % BUCKET_SHARDS].c);
    assert_ptr_equal(bucket_counts(b, 0), &b->cell->shards[0].c);
    c5->alloc_objects += 1;
    c5->alloc_bytes += 32;
    c5->free_objects += 1;
    c5->free_bytes += 32;
    bucket_counts(b, 3)->temp_objects += 1;
    bucket_counts(b, 3)->temp_bytes += 32;
    bucket_counts_t r;
    bucket_read(b, &r);
    assert_int_equal(r.alloc_objects, 3);
    assert_int_equal(r.alloc_bytes, 96);
    assert_int_equal(r.free_objects, 1);
    assert_int_equal(r.free_bytes, 32);
    assert_int_equal(r.temp_objects, 1);
    assert_int_equal(r.temp_bytes, 32);
}

/* Threads of distinct slots race to add to fresh buckets: in each round
 * they meet on a new bucket, so the owner's claim and the publication of
 * its shards happen under the race, round after round; the totals are
 * exact and every bucket got its shards. Waits count arrivals. */
enum { RACERS = 3, ROUNDS = 3000, ADDS = 64 };
static bucket_t *raced[ROUNDS];
static unsigned arrived[ROUNDS];

static void *racer(void *arg)
{
    uint32_t slot = (uint32_t)(uintptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        __atomic_add_fetch(&arrived[r], 1, __ATOMIC_ACQ_REL);
        for (unsigned spins = 0; __atomic_load_n(&arrived[r], __ATOMIC_ACQUIRE) < RACERS; spins++)
            if (spins > 1000)
                sched_yield();
        for (int i = 0; i < ADDS; i++) {
            bucket_counts_t *c = bucket_counts(raced[r], slot);
            __atomic_add_fetch(&c->alloc_objects, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&c->alloc_bytes, slot, __ATOMIC_RELAXED);
            if (i % 2)
                __atomic_add_fetch(&bucket_counts(raced[r], slot)->free_objects, 1,
                                   __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

static void test_counts_race(void **state)
{
    (void)state;
    assert_int_equal(buckets_init(), 0);
    for (uintptr_t r = 0; r < ROUNDS; r++) {
        uintptr_t pcs[2] = {0x7000 + r, 0x8000};
        raced[r] = intern(pcs, 2, 48);
    }
    pthread_t th[RACERS];
    uint64_t bytes = 0;
    for (uintptr_t i = 0; i < RACERS; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, racer, (void *)(i + 1)), 0);
        bytes += (i + 1) * ADDS;
    }
    for (int i = 0; i < RACERS; i++)
        pthread_join(th[i], NULL);
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        bucket_counts_t c;
        bucket_read(raced[r], &c);
        if (c.alloc_objects != (uint64_t)RACERS * ADDS || c.alloc_bytes != bytes ||
            c.free_objects != (uint64_t)RACERS * ADDS / 2 || !raced[r]->cell->shards)
            bad++;
    }
    if (bad)
        print_error("%d of %d buckets with wrong totals\n", bad, ROUNDS);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_and_size),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_stack_copied),
        cmocka_unit_test(test_rate_1_one_bucket),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_counts_shards),
        cmocka_unit_test(test_counts_race),
        cmocka_unit_test(test_memo),
        cmocka_unit_test(test_memo_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
