// links: src/runtime/livemap.c src/runtime/arena.c src/runtime/rt.c src/base/pages.c
/* test_livemap.c — the live sampled-object map against a reference, through
 * growth and backward-shift deletion, keys adjacent and far apart, the
 * leak scan's copy, the filter's saturation, and its behaviour when full;
 * exact sizes of every width and keys too wide for a slot, the memory a
 * live object costs, threads racing on the same stripes and on one filter
 * counter, and the window
 * unit each stripe picks from its heap's density. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/arena.h"
#include "runtime/livemap.h"

enum { N = 200000 };

/* Run first, on empty tables: the slots of a million live objects take
 * between 12 bytes (a slot each) and 12 / (7/16) bytes a live object
 * (7/8 full, doubled, when a growth has just happened). 16-byte slots
 * took up to 37 (here 33.5). */
static void test_memory_per_object(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    enum { M = 1000000 };
    uint64_t b0 = arena_bytes();
    uint32_t ob, bucket;
    uint64_t os, size;
    for (uintptr_t i = 0; i < M; i++)
        assert_int_equal(livemap_insert((void *)(0x560000000000ull + i * 32), 1, 24, &ob, &os), 1);
    double per = (double)(arena_bytes() - b0) / M;
    print_message("%.2f bytes per live object\n", per);
    assert_true(per >= 12);
    assert_true(per <= 12.0 * 16 / 7);
    for (uintptr_t i = 0; i < M; i++)
        assert_true(livemap_remove((void *)(0x560000000000ull + i * 32), &bucket, &size));
    assert_int_equal(livemap_count(), 0);
}

/* Sizes of every width come back exact, by remove and by the copy: a slot
 * holds 27 bits, a wider size lives in the stripe's wide list, and past the
 * old 40-bit field nothing is cut (the live map is the only place a rate-1
 * object's size is kept). So do keys above 2^48 and the largest bucket
 * indexes. A key that moves between a slot and the wide list by a
 * replacement is found once, with its old value handed back. */
static const uint64_t widths[] = {
    0, 1, 4095, 4096, (1ull << 27) - 1, 1ull << 27, (1ull << 32) + 5, (1ull << 40) - 1,
    1ull << 40, (1ull << 40) + 12345, (1ull << 63) + 7, UINT64_MAX,
};
enum { NW = sizeof(widths) / sizeof(widths[0]) };

static uintptr_t width_key(int i, int kind)
{
    static const uintptr_t base[] = {0x7f5500000010ull, 0x0100000000001020ull,
                                     0x7f5500000010ull | LIVEMAP_CUSTOM,
                                     0x0100000000001020ull | LIVEMAP_CUSTOM};
    return base[kind] + (uintptr_t)i * 4096 + (uintptr_t)i * 16;
}

static void test_exact_sizes(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    uint32_t ob, bucket;
    uint64_t os, size;
    uint64_t c0 = livemap_count();
    for (int kind = 0; kind < 4; kind++)
        for (int i = 0; i < NW; i++)
            assert_int_equal(livemap_insert((void *)width_key(i, kind), (1u << 20) - 1 - (uint32_t)i,
                                            widths[i], &ob, &os), 1);
    assert_int_equal(livemap_count(), c0 + 4 * NW);
    static livemap_entry_t out[1 << 16];
    livemap_lock_all();
    size_t n = livemap_copy_locked(out, 1 << 16);
    livemap_unlock_all();
    int seen = 0;
    for (size_t j = 0; j < n; j++)
        for (int kind = 0; kind < 4; kind++)
            for (int i = 0; i < NW; i++)
                if (out[j].addr == (width_key(i, kind) & ~LIVEMAP_CUSTOM) &&
                    out[j].custom == (kind >= 2)) {
                    assert_int_equal(out[j].size, widths[i]);
                    assert_int_equal(out[j].bucket, (1u << 20) - 1 - (uint32_t)i);
                    seen++;
                }
    assert_int_equal(seen, 4 * NW);
    /* Replace each with the size of another width: narrow to wide and
     * back; then a bucket index past 20 bits. */
    for (int kind = 0; kind < 4; kind++)
        for (int i = 0; i < NW; i++) {
            assert_int_equal(livemap_insert((void *)width_key(i, kind), 7, widths[NW - 1 - i], &ob, &os), 0);
            assert_int_equal(os, widths[i]);
            assert_int_equal(ob, (1u << 20) - 1 - (uint32_t)i);
            assert_int_equal(livemap_insert((void *)width_key(i, kind), 1u << 23, widths[i], &ob, &os), 0);
            assert_int_equal(os, widths[NW - 1 - i]);
            assert_int_equal(ob, 7);
        }
    assert_int_equal(livemap_count(), c0 + 4 * NW);
    for (int kind = 0; kind < 4; kind++)
        for (int i = 0; i < NW; i++) {
            assert_true(livemap_remove((void *)width_key(i, kind), &bucket, &size));
            assert_int_equal(size, widths[i]);
            assert_int_equal(bucket, 1u << 23);
            assert_false(livemap_remove((void *)width_key(i, kind), &bucket, &size));
        }
    assert_int_equal(livemap_count(), c0);
}

/* Removing a key never recorded finds nothing and changes nothing: in an
 * empty stripe, beside live neighbours in its page, with the wide list in
 * use, and for the custom twin of a live block. */
static void test_remove_absent(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    uint32_t ob, bucket = 99;
    uint64_t os, size = 99;
    uint64_t c0 = livemap_count();
    uintptr_t page = 0x7f6600003000ull;
    assert_false(livemap_remove((void *)page, &bucket, &size));
    for (uintptr_t i = 0; i < 64; i += 2)
        assert_int_equal(livemap_insert((void *)(page + i * 16), 2, i, &ob, &os), 1);
    assert_int_equal(livemap_insert((void *)(page + 2048), 3, 1ull << 45, &ob, &os), 1); /* wide */
    for (uintptr_t i = 1; i < 64; i += 2)
        assert_false(livemap_remove((void *)(page + i * 16), &bucket, &size));
    assert_false(livemap_remove((void *)(page | LIVEMAP_CUSTOM), &bucket, &size));
    assert_false(livemap_remove((void *)(page + 2048 + 16), &bucket, &size));
    assert_false(livemap_remove((void *)0x0200000000000000ull, &bucket, &size));
    assert_int_equal(bucket, 99);
    assert_int_equal(size, 99);
    assert_int_equal(livemap_count(), c0 + 33);
    for (uintptr_t i = 0; i < 64; i += 2) {
        assert_true(livemap_remove((void *)(page + i * 16), &bucket, &size));
        assert_int_equal(size, i);
    }
    assert_true(livemap_remove((void *)(page + 2048), &bucket, &size));
    assert_int_equal(size, 1ull << 45);
    assert_int_equal(livemap_count(), c0);
}

/* Threads insert and remove keys in the same pages (so the same stripes
 * and windows) while their tables grow: each finds exactly its own
 * objects, and the count returns to where it was. */
enum { RACERS = 4, RACE_KEYS = 60000 };

static void *racer(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    uint32_t ob, bucket;
    uint64_t os, size;
    long bad = 0;
    for (int round = 0; round < 3; round++) {
        for (uintptr_t i = 0; i < RACE_KEYS; i++) {
            uintptr_t key = 0x7e0000000000ull + (i * RACERS + t) * 16;
            uint64_t sz = i % 5 == 0 ? (1ull << 33) + i : i;
            if (livemap_insert((void *)key, (uint32_t)t, sz, &ob, &os) != 1)
                bad++;
        }
        for (uintptr_t i = 0; i < RACE_KEYS; i++) {
            uintptr_t key = 0x7e0000000000ull + (i * RACERS + t) * 16;
            uint64_t sz = i % 5 == 0 ? (1ull << 33) + i : i;
            if (!livemap_remove((void *)key, &bucket, &size) || bucket != t || size != sz)
                bad++;
        }
    }
    return (void *)bad;
}

static void test_threads_race(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    uint64_t c0 = livemap_count();
    pthread_t th[RACERS];
    for (uintptr_t t = 0; t < RACERS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, racer, (void *)t), 0);
    for (int t = 0; t < RACERS; t++) {
        void *bad;
        assert_int_equal(pthread_join(th[t], &bad), 0);
        assert_int_equal((long)bad, 0);
    }
    assert_int_equal(livemap_count(), c0);
}

/* Threads inserting and removing in pages 1 GiB apart, which share a
 * filter counter: the counter changes by a plain load and store under the
 * stripe lock (livemap.h), so those pages must share a stripe. Were they
 * in different stripes, concurrent updates would be lost: a live object
 * whose page reads "none" (a missed free), or a counter that never
 * returns to 0 (measured: 255, a decrement below a lost increment). */
enum { SHARERS = 4, SHARE_ROUNDS = 200000 };

static uintptr_t share_base = 0x7a0000000040;

static void *sharer(void *arg)
{
    uintptr_t key = share_base + ((uintptr_t)arg << 30);
    uint32_t ob, bucket;
    uint64_t os, size;
    long bad = 0;
    for (int i = 0; i < SHARE_ROUNDS; i++) {
        bad += livemap_insert((void *)key, 1, 8, &ob, &os) != 1;
        bad += !livemap_maybe((void *)key);
        bad += !livemap_remove((void *)key, &bucket, &size);
    }
    return (void *)bad;
}

static void test_filter_shared_race(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    while (livemap_maybe((void *)share_base)) /* a counter left by the tests above */
        share_base += 0x1000;
    const void *first = (const void *)share_base;
    pthread_t th[SHARERS];
    for (uintptr_t t = 0; t < SHARERS; t++) {
        assert_ptr_equal(livemap_filter_slot((void *)((uintptr_t)first + (t << 30))),
                         livemap_filter_slot(first));
        assert_int_equal(pthread_create(&th[t], NULL, sharer, (void *)t), 0);
    }
    long bad = 0;
    for (int t = 0; t < SHARERS; t++) {
        void *b;
        assert_int_equal(pthread_join(th[t], &b), 0);
        bad += (long)b;
    }
    assert_int_equal(bad, 0);
    assert_int_equal(*livemap_filter_slot(first), 0);
}

/* Pages whose windows all start in the last 1/256 of their stripe's table
 * (found with livemap.c's Fibonacci hash of the page number) make one run
 * at the table's end whatever its size: the margin past the end grows for
 * it, not the table (which would double until 256 times the objects), and
 * every object stays found. */
static void test_crowded_end(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    enum { PAGES = 40 };
    static uintptr_t pages[PAGES];
    int np = 0;
    for (uintptr_t pg = 1ull << 32; np < PAGES; pg++) {
        uint64_t h = (uint64_t)pg * 0x9e3779b97f4a7c15ull;
        if (h >> 58 == 0 && (h << 6) >> 56 == 0xff)
            pages[np++] = pg << 12;
    }
    uint32_t ob, bucket;
    uint64_t os, size, b0 = arena_bytes(), c0 = livemap_count();
    for (int k = 0; k < PAGES; k++)
        for (uintptr_t i = 0; i < 256; i++)
            assert_int_equal(livemap_insert((void *)(pages[k] + i * 16), (uint32_t)k, i, &ob, &os), 1);
    print_message("%.1f KiB for %d objects at the end\n", (arena_bytes() - b0) / 1024.0, PAGES * 256);
    assert_true(arena_bytes() - b0 <= 64ull * PAGES * 256 * 12);
    assert_int_equal(livemap_count(), c0 + PAGES * 256);
    for (int k = PAGES - 1; k >= 0; k--)
        for (uintptr_t i = 0; i < 256; i += 1 + (k & 1)) {
            assert_true(livemap_remove((void *)(pages[k] + i * 16), &bucket, &size));
            assert_int_equal(bucket, (uint32_t)k);
            assert_int_equal(size, i);
        }
    for (int k = 1; k < PAGES; k += 2)
        for (uintptr_t i = 1; i < 256; i += 2)
            assert_true(livemap_remove((void *)(pages[k] + i * 16), &bucket, &size));
    assert_int_equal(livemap_count(), c0);
}

static void test_against_reference(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    static uintptr_t keys[N];
    static uint8_t present[N];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        keys[i] = (x & 0x7ffffffffff0ull) | 0x10; /* heap-like, 16-aligned, nonzero */
    }
    uint32_t ob;
    uint64_t os, size;
    uint32_t bucket;
    /* Random inserts and removals; every state checked against present[]. */
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            if ((i + round) % 3 == 0 && present[i]) {
                assert_true(livemap_remove((void *)keys[i], &bucket, &size));
                assert_int_equal(bucket, (uint32_t)(i & 0xffffff));
                assert_int_equal(size, (uint64_t)i * 8);
                present[i] = 0;
            } else if (!present[i]) {
                int rc = livemap_insert((void *)keys[i], (uint32_t)(i & 0xffffff), (uint64_t)i * 8,
                                        &ob, &os);
                assert_int_equal(rc, 1);
                present[i] = 1;
            }
        }
        uint64_t count = 0;
        for (int i = 0; i < N; i++) {
            count += present[i];
            if (present[i])
                assert_true(livemap_maybe((void *)keys[i]));
        }
        assert_int_equal(livemap_count(), count);
    }
    /* Re-inserting a live key replaces it and hands back the old value. */
    int k = 0;
    while (!present[k])
        k++;
    assert_int_equal(livemap_insert((void *)keys[k], 5, 99, &ob, &os), 0);
    assert_int_equal(os, (uint64_t)k * 8);
    assert_true(livemap_remove((void *)keys[k], &bucket, &size));
    assert_int_equal(bucket, 5);
    assert_int_equal(size, 99);
    assert_false(livemap_remove((void *)keys[k], &bucket, &size));
    /* Remove everything: the filter returns to empty for those keys. */
    for (int i = 0; i < N; i++)
        if (present[i] && i != k)
            assert_true(livemap_remove((void *)keys[i], &bucket, &size));
    assert_int_equal(livemap_count(), 0);
    for (int i = 0; i < N; i += 97)
        assert_false(livemap_maybe((void *)keys[i]));
}

/* The leak scan's copy: every live object once, with its bucket and size;
 * and the tables lie in the ranges the arena reports (which the scan
 * leaves out). */
static int by_addr(const void *a, const void *b)
{
    const livemap_entry_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void test_copy(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    enum { M = 5000 };
    uint32_t ob;
    uint64_t os;
    for (uintptr_t i = 0; i < M; i++)
        assert_int_equal(livemap_insert((void *)(0x7f0000001000 + i * 48), (uint32_t)i % 7, i, &ob, &os), 1);
    static livemap_entry_t out[M + 10];
    livemap_lock_all();
    size_t n = livemap_copy_locked(out, M + 10);
    size_t few = livemap_copy_locked(out + M, 3); /* max is respected */
    livemap_unlock_all();
    assert_int_equal(n, M);
    assert_int_equal(few, 3);
    qsort(out, n, sizeof(*out), by_addr);
    for (uintptr_t i = 0; i < M; i++) {
        assert_int_equal(out[i].addr, 0x7f0000001000 + i * 48);
        assert_int_equal(out[i].size, i);
        assert_int_equal(out[i].bucket, (uint32_t)i % 7);
    }
    static arena_range_t r[8192];
    bool complete;
    size_t nr = arena_ranges(r, 8192, &complete);
    assert_true(complete);
    assert_true(nr > 0);
    /* the filter is arena memory: it must be in a range */
    bool found = false;
    for (size_t i = 0; i < nr; i++)
        found = found || ((uintptr_t)livemap_filter >= r[i].lo && (uintptr_t)livemap_filter < r[i].hi);
    assert_true(found);
    /* With most removed, each stripe's scan stops at its last entry: every
     * one still live is copied, wherever it sits in its table. */
    uint32_t bucket;
    uint64_t size;
    for (uintptr_t i = 0; i < M; i++)
        if (i % 97)
            assert_true(livemap_remove((void *)(0x7f0000001000 + i * 48), &bucket, &size));
    livemap_lock_all();
    n = livemap_copy_locked(out, M + 10);
    livemap_unlock_all();
    assert_int_equal(n, (M + 96) / 97);
    qsort(out, n, sizeof(*out), by_addr);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(out[k].addr, 0x7f0000001000 + k * 97 * 48);
    for (uintptr_t i = 0; i < M; i += 97)
        assert_true(livemap_remove((void *)(0x7f0000001000 + i * 48), &bucket, &size));
}

/* A custom-heap object at the address of a block takes its own key
 * (LIVEMAP_CUSTOM): both are live, each removed alone, and the copy for
 * the leak scan and the memory profile gives both at the same address,
 * the object marked custom, and sorts the block first. */
static void test_custom_key(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    void *blk = (void *)0x7f0000201000;
    void *obj = (void *)((uintptr_t)blk | LIVEMAP_CUSTOM);
    uint32_t ob, bucket;
    uint64_t os, size;
    assert_int_equal(livemap_insert(blk, 1, 4096, &ob, &os), 1);
    assert_int_equal(livemap_insert(obj, 2, 64, &ob, &os), 1);
    livemap_entry_t out[4];
    livemap_lock_all();
    size_t n = livemap_copy_locked(out, 4);
    livemap_unlock_all();
    assert_int_equal(n, 2);
    int c = out[1].custom; /* which of the two is the object */
    assert_int_equal(out[c].addr, (uintptr_t)blk);
    assert_int_equal(out[c].bucket, 2);
    assert_int_equal(out[c].size, 64);
    assert_true(out[c].custom);
    assert_int_equal(out[!c].addr, (uintptr_t)blk);
    assert_int_equal(out[!c].bucket, 1);
    assert_false(out[!c].custom);
    /* sorted, the block comes first: the memory profile's holder */
    livemap_entry_t two[2] = {out[0], out[1]};
    for (int k = 0; k < 2; k++) {
        livemap_entry_t sorted[2] = {two[k], two[!k]};
        livemap_sort_copy(sorted, 2);
        assert_false(sorted[0].custom);
        assert_true(sorted[1].custom);
    }
    assert_true(livemap_remove(blk, &bucket, &size));
    assert_int_equal(bucket, 1);
    assert_false(livemap_remove(blk, &bucket, &size));
    assert_true(livemap_remove(obj, &bucket, &size));
    assert_int_equal(bucket, 2);
    assert_int_equal(size, 64);
}

/* A page's filter counter stops at 255 and stays there: every free in the
 * page then looks into the table, none is missed; a page below it counts
 * down to 0 again. */
static void test_filter_saturates(void **state)
{
    (void)state;
    uintptr_t page = 0x7f0000200000, other = page + 0x1000;
    while (livemap_maybe((void *)other)) /* a key left by the tests above */
        other += 0x1000;
    uint32_t ob, bucket;
    uint64_t os, size;
    for (uintptr_t i = 0; i < 300; i++)
        assert_int_equal(livemap_insert((void *)(page + 8 * i), 1, 8, &ob, &os), 1);
    assert_int_equal(livemap_insert((void *)other, 1, 8, &ob, &os), 1);
    assert_int_equal(*livemap_filter_slot((void *)page), 255);
    for (uintptr_t i = 0; i < 300; i++) {
        assert_true(livemap_maybe((void *)(page + 8 * i)));
        assert_true(livemap_remove((void *)(page + 8 * i), &bucket, &size));
    }
    assert_true(livemap_maybe((void *)page));
    assert_true(livemap_maybe((void *)other));
    assert_true(livemap_remove((void *)other, &bucket, &size));
    assert_false(livemap_maybe((void *)other));
}

/* Keys that share pages (every 16 bytes of a run of pages), keys in pages
 * 256 MiB apart (they share a filter counter, and would share a window if
 * the page hash were cut to 16 bits), and keys a page apart: inserted in
 * address order across many doublings, replaced, copied, then removed in
 * an order unlike the insertion's, which exercises backward-shift deletion
 * across neighbouring windows. */
static uintptr_t pattern_key(int i)
{
    if (i < 40000)
        return 0x555555554010 + (uintptr_t)i * 16; /* adjacent */
    if (i < 40300)
        return 0x7f3000000020 + (uintptr_t)(i - 40000) * (256u << 20); /* 256 MiB apart */
    return 0x600000000080 + (uintptr_t)(i - 40300) * 4096; /* one per page */
}

static void test_patterns(void **state)
{
    (void)state;
    assert_int_equal(livemap_init(), 0);
    enum { P = 60300 };
    uint32_t ob, bucket;
    uint64_t os, size;
    for (int i = 0; i < P; i++)
        assert_int_equal(livemap_insert((void *)pattern_key(i), (uint32_t)i, (uint64_t)i + 1, &ob, &os), 1);
    assert_int_equal(livemap_count(), P);
    for (int i = 0; i < P; i += 7) {
        assert_int_equal(livemap_insert((void *)pattern_key(i), 3, 5, &ob, &os), 0);
        assert_int_equal(ob, (uint32_t)i);
        assert_int_equal(os, (uint64_t)i + 1);
    }
    assert_int_equal(livemap_count(), P);
    static livemap_entry_t out[P];
    livemap_lock_all();
    assert_int_equal(livemap_copy_locked(out, P), P);
    livemap_unlock_all();
    qsort(out, P, sizeof(*out), by_addr);
    for (int i = 1; i < P; i++)
        assert_true(out[i - 1].addr < out[i].addr);
    /* Remove the odd ones from the top down, then the rest bottom up. */
    for (int i = P - 1; i >= 0; i--) {
        if (!(i & 1))
            continue;
        assert_true(livemap_remove((void *)pattern_key(i), &bucket, &size));
        assert_int_equal(bucket, i % 7 ? (uint32_t)i : 3);
        assert_int_equal(size, i % 7 ? (uint64_t)i + 1 : 5);
        assert_false(livemap_remove((void *)pattern_key(i), &bucket, &size));
    }
    for (int i = 0; i < P; i += 2) {
        assert_true(livemap_maybe((void *)pattern_key(i)));
        assert_true(livemap_remove((void *)pattern_key(i), &bucket, &size));
        assert_int_equal(size, i % 7 ? (uint64_t)i + 1 : 5);
    }
    assert_int_equal(livemap_count(), 0);
    /* Not pattern_key(0): its page held 256 keys, past the filter's 255. */
    assert_false(livemap_maybe((void *)pattern_key(P - 1)));
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* A grown table's pages are written before they are read: one fault each.
 * Read first, a page maps the shared zero page and its first write faults
 * again to replace it, flushing the TLB of every CPU that runs another of
 * the program's threads (livemap.c grow_locked). Counted over 2 million
 * inserts that grow every stripe several times: the pages mapped over all
 * the tables made, a doubling series, are twice the net growth, so one
 * fault a page is 2 faults per net page and a zero-page read first is 4. */
static void test_first_write(void **state)
{
    (void)state;
    enum { K = 2000000 };
    uint32_t ob, bucket;
    uint64_t os, size;
    long f0 = minor_faults();
    uint64_t b0 = arena_bytes();
    for (uintptr_t i = 0; i < K; i++)
        assert_int_equal(livemap_insert((void *)(0x500000000000ull + i * 48), 1, 48, &ob, &os), 1);
    long faults = minor_faults() - f0;
    uint64_t pages = (arena_bytes() - b0) / 4096;
    print_message("%ld faults for %llu net pages\n", faults, (unsigned long long)pages);
    assert_true(pages > 1000);
    assert_true((uint64_t)faults < 3 * pages);
    for (uintptr_t i = 0; i < K; i++)
        assert_true(livemap_remove((void *)(0x500000000000ull + i * 48), &bucket, &size));
}

/* Each stripe picks the unit of offsets in its windows at each growth from
 * how many objects the pages of its live objects hold (livemap.c
 * next_shift): the coarsest unit in which those objects take at most 1 in
 * 4 slots of their page's window. Heaps of one density after another,
 * each large enough to grow every stripe once more: pages of 43 objects
 * take 16-byte units, pages of 256 (counters stuck at 255) 4-byte, then
 * pages of 16 go straight to 32-byte units (the stuck counters of the
 * freed dense pages weigh nothing more), and pages of 114 (mtindex's) to
 * 8-byte, where 1 in 5 would take 4. Every entry comes back exact through
 * each relayout. Run first, in a child, so that the tables start empty and
 * stay so for the next test. */
static unsigned unit_range(uintptr_t base, uintptr_t step, uintptr_t n, unsigned *hi)
{
    unsigned lo = 99;
    *hi = 0;
    for (uintptr_t i = 0; i < n; i += 997) {
        unsigned u = livemap_unit_shift((void *)(base + i * step));
        lo = u < lo ? u : lo;
        *hi = u > *hi ? u : *hi;
    }
    return lo;
}

/* Inserts n keys, or removes them checking their values; false on a miss. */
static bool fill_check(uintptr_t base, uintptr_t step, uintptr_t n, bool insert)
{
    uint32_t ob, bucket;
    uint64_t os, size;
    for (uintptr_t i = 0; i < n; i++) {
        void *p = (void *)(base + i * step);
        if (insert ? livemap_insert(p, (uint32_t)(i % 1000003), i * 3, &ob, &os) != 1
                   : !livemap_remove(p, &bucket, &size) || bucket != i % 1000003 || size != i * 3)
            return false;
    }
    return true;
}

static int unit_density_child(void)
{
    static const struct {
        uintptr_t base, step, n;
        unsigned shift;
    } heaps[] = {
        {0x3a0000000000ull, 96, 150000, 4},
        {0x3b0004000000ull, 16, 400000, 2},
        {0x3c0008000000ull, 256, 600000, 5},
        {0x3d0014000000ull, 36, 1200000, 3},
    }; /* apart modulo 1 GiB: no page shares a filter counter with another heap's */
    if (livemap_init() || livemap_count())
        return 1;
    for (int k = 0; k < 4; k++) {
        unsigned lo, hi;
        if (!fill_check(heaps[k].base, heaps[k].step, heaps[k].n, true))
            return 10 + k;
        lo = unit_range(heaps[k].base, heaps[k].step, heaps[k].n, &hi);
        printf("%lu-byte steps: units of 2^%u to 2^%u bytes\n", (unsigned long)heaps[k].step, lo,
               hi);
        if (lo != heaps[k].shift || hi != heaps[k].shift)
            return 20 + k;
        if (!fill_check(heaps[k].base, heaps[k].step, heaps[k].n, false) || livemap_count())
            return 30 + k;
    }
    return 0;
}

static void test_unit_from_density(void **state)
{
    (void)state;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int rc = unit_density_child();
        fflush(stdout);
        _exit(rc);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* free() asks the filter before livemap_init has mapped it (a free before
 * cprof's constructor, or with no tables): every pointer is not sampled. */
static void test_maybe_before_init(void **state)
{
    (void)state;
    static char local;
    const void *ps[] = {&local, state, (void *)0x1000, (void *)UINTPTR_MAX};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        assert_false(livemap_maybe(ps[i]));
}

/* Past the memory limit an insert fails cleanly instead of crashing. */
static void test_full(void **state)
{
    (void)state;
    arena_set_limit(arena_bytes() + (1u << 20));
    uint32_t ob;
    uint64_t os;
    int rc = 1;
    uintptr_t p = 0x100000;
    for (int i = 0; i < 10000000 && rc == 1; i++, p += 16)
        rc = livemap_insert((void *)p, 1, 1, &ob, &os);
    assert_int_equal(rc, -1);
    assert_true(arena_bytes() <= arena_limit());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maybe_before_init), /* first: before livemap_init */
        cmocka_unit_test(test_unit_from_density), /* on empty tables, in a child */
        cmocka_unit_test(test_memory_per_object), /* on empty tables */
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_exact_sizes),
        cmocka_unit_test(test_remove_absent),
        cmocka_unit_test(test_threads_race),
        cmocka_unit_test(test_filter_shared_race),
        cmocka_unit_test(test_crowded_end),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_custom_key),
        cmocka_unit_test(test_filter_saturates),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_first_write),
        cmocka_unit_test(test_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
