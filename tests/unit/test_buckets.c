// links: src/runtime/buckets.c src/runtime/arena.c src/runtime/rt.c -lpthread
/* test_buckets.c — the heap profile's bucket table: one bucket per distinct
 * (stack, size), so that each size is scaled by its own probability, and
 * one copy of each stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>

#include "base/hash.h"
#include "runtime/buckets.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
