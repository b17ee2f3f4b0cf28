// links: src/runtime/peak.c src/runtime/buckets.c src/runtime/counters.c src/runtime/arena.c src/runtime/rt.c
/* test_peak.c — the peak's bookkeeping without a lock (peak.h): a bucket's
 * save claimed by a compare-and-swap of its stamp, the epoch word, and
 * threads racing to save one bucket in each of many epochs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "base/hash.h"
#include "runtime/counters.h"
#include "runtime/peak.h"

/* What peak.c uses from modules this test does not link. */
int64_t sampler_rate = 1;
uint64_t dump_inuse_next = UINT64_MAX;
static uint64_t crossed_at; /* the live bytes of the last step crossed */
void dump_inuse_crossed(uint64_t live)
{
    crossed_at = live;
}
void heap_record_site(heap_record_t *r, const struct bucket *b)
{
    (void)r;
    (void)b;
}

static bucket_t *bucket(uintptr_t pc)
{
    uintptr_t pcs[2] = {pc, 0x7000};
    assert_int_equal(buckets_init(), 0);
    return buckets_intern(pcs, 2, hash_pcs(pcs, 2), 0, 1, 0);
}

static uint64_t epoch_now(void)
{
    return __atomic_load_n(&peak_high.epoch, __ATOMIC_ACQUIRE) & ~(PEAK_FROZEN | PEAK_OPEN);
}

/* A new high without a heap: what peak_check does once it has one. */
static void high(void)
{
    __atomic_fetch_or(&peak_high.epoch, PEAK_OPEN, __ATOMIC_ACQ_REL);
}

/* A high and the change that closes it: the next epoch. */
static void next_epoch(void)
{
    high();
    peak_close();
}

static void test_claim(void **state)
{
    (void)state;
    bucket_t *b = bucket(0x1000);
    b->cell->counts.alloc_objects = 5;
    b->cell->counts.alloc_bytes = 50;
    peak_touch(&b->cell->counts); /* never saved: saves */
    uint64_t now = epoch_now();
    assert_int_equal(b->cell->counts.peak_epoch, now);
    assert_int_equal(b->cell->counts.peak_alloc_objects, 5);
    assert_int_equal(b->cell->counts.peak_alloc_bytes, 50);
    assert_int_equal(rt_self.locks, 0);
    b->cell->counts.alloc_objects = 7;
    peak_touch(&b->cell->counts); /* saved in this epoch: nothing */
    assert_int_equal(b->cell->counts.peak_alloc_objects, 5);
    /* Another thread's claim in this epoch, its values not written yet:
     * it read them before claiming, so this change goes on at once,
     * neither waiting nor writing. */
    b->cell->counts.peak_epoch = now | PEAK_BUSY;
    b->cell->counts.peak_alloc_objects = 99;
    peak_touch(&b->cell->counts);
    assert_int_equal(b->cell->counts.peak_epoch, now | PEAK_BUSY);
    assert_int_equal(b->cell->counts.peak_alloc_objects, 99);
    /* A new high: the next change closes it and saves the values of then. */
    b->cell->counts.peak_epoch = now;
    high();
    peak_touch(&b->cell->counts);
    assert_int_equal(peak_high.epoch, now + PEAK_STEP);
    assert_int_equal(b->cell->counts.peak_epoch, now + PEAK_STEP);
    assert_int_equal(b->cell->counts.peak_alloc_objects, 7);
}

/* &rt_self through a call: gcc 12's UBSan null check of an initial-exec
 * TLS address inlined here tested stale flags (lea sets none) and failed. */
static __attribute__((noinline)) rt_thread_t *self(void)
{
    return &rt_self;
}

/* A run of highs leaves the epoch word alone; a snapshot while it is open
 * reads the counters as they are (saves of the epoch are older than the
 * high) and closes it; a reset opens it. */
static void test_open_run(void **state)
{
    (void)state;
    bucket_t *b = bucket(0x6000);
    rt_self.taken_rate = 1;
    counters_alloc(self(), peak_high.live + 4096);
    assert_true(peak_check());
    uint64_t w = peak_high.epoch;
    assert_int_equal(w & (PEAK_OPEN | PEAK_FROZEN), PEAK_OPEN);
    counters_alloc(self(), 100);
    b->cell->counts.alloc_objects = 2, b->cell->counts.alloc_bytes = 20; /* the high's own */
    /* saved in this epoch, before the high: stale while open */
    b->cell->counts.peak_epoch = w & ~PEAK_OPEN;
    b->cell->counts.peak_alloc_objects = 1, b->cell->counts.peak_alloc_bytes = 10;
    assert_true(peak_check());
    assert_int_equal(peak_high.epoch, w); /* not written */
    b->cell->counts.alloc_objects = 3, b->cell->counts.alloc_bytes = 120;
    heap_snapshot_t s;
    assert_int_equal(peak_snapshot(&s), 0);
    assert_int_equal(s.recs[b->index].inuse_objects, 3);
    assert_int_equal(s.recs[b->index].inuse_bytes, 120);
    free(s.recs);
    assert_int_equal(peak_high.epoch, (w & ~PEAK_OPEN) + PEAK_STEP);
    peak_touch(&b->cell->counts); /* the high's values, saved in the new epoch */
    assert_int_equal(b->cell->counts.peak_epoch, (w & ~PEAK_OPEN) + PEAK_STEP);
    assert_int_equal(b->cell->counts.peak_alloc_objects, 3);
    counters_free(self(), 1, 100);
    assert_false(peak_check());
    peak_reset();
    assert_int_equal(peak_high.epoch & PEAK_OPEN, PEAK_OPEN);
    counters_sum_t t;
    counters_sum(&t);
    assert_int_equal(peak_high.live, counters_live_bytes(&t));
    peak_close();
    rt_self.taken_rate = 0;
}

/* The snapshot reads saved values where a bucket changed since the high,
 * current ones where it did not, and unfreezes the epoch word. */
static void test_snapshot(void **state)
{
    (void)state;
    bucket_t *changed = bucket(0x2000), *still = bucket(0x3000);
    next_epoch();
    changed->cell->counts.alloc_objects = 3;
    changed->cell->counts.alloc_bytes = 300;
    still->cell->counts.alloc_objects = 4;
    still->cell->counts.alloc_bytes = 400;
    peak_touch(&changed->cell->counts);
    changed->cell->counts.free_objects = 2;
    changed->cell->counts.free_bytes = 200;
    heap_snapshot_t s;
    assert_int_equal(peak_snapshot(&s), 0);
    assert_int_equal(s.recs[changed->index].inuse_objects, 3);
    assert_int_equal(s.recs[changed->index].inuse_bytes, 300);
    assert_int_equal(s.recs[still->index].inuse_objects, 4);
    assert_int_equal(s.recs[still->index].inuse_bytes, 400);
    free(s.recs);
    assert_int_equal(peak_high.epoch & PEAK_FROZEN, 0);
    /* A high after it: the counters' live bytes above the last high. */
    uint64_t e = epoch_now();
    counters_alloc(&rt_self, peak_high.live + 4096);
    assert_true(peak_check());
    assert_int_equal(peak_high.epoch, e | PEAK_OPEN);
    assert_false(peak_check());
    peak_close();
}

/* At rate 1 a sample reads the bound (counters.h), not every block: it
 * must still see a high made of another thread's unpublished bytes (the
 * slack of a held block) and of an exited thread's (published on exit),
 * and a lower heap must be no high. */
static int hold_phase;

static void *holder(void *arg)
{
    counters_alloc(&rt_self, (uint64_t)(uintptr_t)arg); /* never checked */
    __atomic_store_n(&hold_phase, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&hold_phase, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    return NULL;
}

static void *leaver(void *arg)
{
    counters_alloc(&rt_self, (uint64_t)(uintptr_t)arg); /* never checked */
    return NULL;
}

static void test_bound(void **state)
{
    (void)state;
    counters_init(); /* blocks of exited threads go back */
    rt_self.taken_rate = 1;
    counters_alloc(&rt_self, 4 << 20);
    assert_true(peak_check()); /* 4 MiB more than any high so far */
    uint64_t high = peak_high.live;
    counters_free(&rt_self, 1, 2 << 20);
    assert_false(peak_check());
    /* A CPROF_DUMP_INUSE step under the high is crossed all the same. */
    counters_sum_t t;
    counters_sum(&t);
    dump_inuse_next = counters_live_bytes(&t) - 1;
    assert_false(peak_check());
    assert_int_equal(crossed_at, counters_live_bytes(&t));
    dump_inuse_next = UINT64_MAX;
    counters_alloc(&rt_self, (2 << 20) - COUNTERS_BATCH / 2);
    assert_false(peak_check()); /* BATCH/2 below the high */
    /* Another thread's bytes under the batch, held: in the slack. */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, holder, (void *)(uintptr_t)COUNTERS_BATCH), 0);
    while (__atomic_load_n(&hold_phase, __ATOMIC_ACQUIRE) != 1)
        sched_yield();
    assert_true(peak_check());
    assert_int_equal(peak_high.live, high + COUNTERS_BATCH / 2);
    __atomic_store_n(&hold_phase, 2, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    /* An exited thread's bytes: in the sum, not the slack, which goes
     * with its block. The heap 1 MiB under the high, then 1 MiB + 1 more. */
    high = peak_high.live;
    counters_free(&rt_self, 1, 1 << 20);
    assert_false(peak_check());
    assert_int_equal(pthread_create(&th, NULL, leaver, (void *)(uintptr_t)((1 << 20) + 1)), 0);
    pthread_join(th, NULL);
    assert_true(peak_check());
    assert_int_equal(peak_high.live, high + 1);
    /* A fork child: a parent's thread was between an allocation and its
     * publish (more than the batch unpublished); its block's bytes go
     * into the sum, or the child's bound would stay under its heap. */
    hold_phase = 0;
    assert_int_equal(pthread_create(&th, NULL, holder, (void *)(uintptr_t)(4 * COUNTERS_BATCH)), 0);
    while (__atomic_load_n(&hold_phase, __ATOMIC_ACQUIRE) != 1)
        sched_yield();
    peak_fork_prepare();
    peak_fork_child();
    counters_sum(&t);
    bool exact;
    assert_true(counters_live_bound(&exact) >= counters_live_bytes(&t));
    __atomic_store_n(&hold_phase, 2, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    rt_self.taken_rate = 0;
}

/* The live bytes without the objects' counts (counters_live_now) and the
 * bound that is exact while this thread holds the only block: both equal
 * counters_sum's live bytes, with another thread's block held (its bytes
 * unpublished: the bound then is no sum) and after it exited. */
static void expect_live(bool want_exact)
{
    counters_sum_t t;
    counters_sum(&t);
    bool exact;
    uint64_t bound = counters_live_bound(&exact);
    assert_int_equal(exact, want_exact);
    if (exact)
        assert_int_equal(bound, counters_live_bytes(&t));
    else
        assert_true(bound >= counters_live_bytes(&t));
    assert_int_equal(counters_live_now(), counters_live_bytes(&t));
}

static void test_live_exact(void **state)
{
    (void)state;
    counters_init();
    counters_alloc(&rt_self, 3 * COUNTERS_BATCH + 5); /* unpublished */
    expect_live(true);
    counters_publish(&rt_self);
    counters_free(&rt_self, 1, 7);
    expect_live(true);
    hold_phase = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, holder, (void *)(uintptr_t)(COUNTERS_BATCH - 3)), 0);
    while (__atomic_load_n(&hold_phase, __ATOMIC_ACQUIRE) != 1)
        sched_yield();
    expect_live(false);
    __atomic_store_n(&hold_phase, 2, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    expect_live(true);
    counters_orphan_add(1, 0, 11, 0);
    expect_live(true);
}

/* A bucket changed by several threads: each set of counters (the
 * owner's, then a shard per slot) is saved on its own, and the peak is
 * the sum of each set's values at the high. */
static void test_snapshot_shards(void **state)
{
    (void)state;
    bucket_t *b = bucket(0x5000);
    bucket_counts_t *own = bucket_counts(b, 1);
    own->alloc_objects = 1, own->alloc_bytes = 10;
    bucket_counts_t *c2 = bucket_counts(b, 2), *c1 = bucket_counts(b, 1);
    assert_ptr_not_equal(c1, own);
    assert_ptr_not_equal(c1, c2);
    c2->alloc_objects = 2, c2->alloc_bytes = 20;
    c1->alloc_objects = 4, c1->alloc_bytes = 40;
    next_epoch(); /* the high: 7 objects, 70 bytes */
    peak_touch(c1);
    c1->free_objects = 4, c1->free_bytes = 40;
    peak_touch(c2);
    c2->alloc_objects += 8, c2->alloc_bytes += 80;
    assert_int_equal(own->peak_epoch, 0); /* untouched: read as it is */
    heap_snapshot_t s;
    assert_int_equal(peak_snapshot(&s), 0);
    assert_int_equal(s.recs[b->index].inuse_objects, 7);
    assert_int_equal(s.recs[b->index].inuse_bytes, 70);
    assert_int_equal(s.recs[b->index].alloc_objects, 7);
    free(s.recs);
}

/* Threads change one bucket in every epoch while one more sets highs.
 * Each epoch's saved count lies between what was added before the high
 * (all of it is in the counters by then) and the value any change made
 * after seeing that epoch found (a change follows the save's claim). A
 * second save in an epoch, or one made after a change of that epoch, is
 * outside. Waits count changes, never time. */
enum { WORKERS = 3, EPOCHS = 20000 };
static bucket_t *shared;
static uint64_t first_seen[WORKERS], first_value[WORKERS];
static int stop;

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    uint64_t done = 0; /* the epoch of this thread's last few changes */
    int changes = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        uint64_t now = epoch_now();
        if (now == done) { /* a few changes an epoch, then the core to others */
            sched_yield();
            continue;
        }
        if (__atomic_load_n(&shared->cell->counts.peak_epoch, __ATOMIC_ACQUIRE) != now)
            peak_save(&shared->cell->counts, now); /* peak_touch, with the epoch it saw */
        uint64_t v = __atomic_fetch_add(&shared->cell->counts.alloc_objects, 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&first_seen[w], __ATOMIC_RELAXED) != now) {
            __atomic_store_n(&first_value[w], v, __ATOMIC_RELAXED);
            __atomic_store_n(&first_seen[w], now, __ATOMIC_RELEASE);
            changes = 0;
        }
        if (++changes == 4)
            done = now;
        if (rt_self.locks != 0)
            abort(); /* a claim left counted */
    }
    return NULL;
}

static void test_racing_saves(void **state)
{
    (void)state;
    shared = bucket(0x4000);
    pthread_t th[WORKERS];
    for (int w = 0; w < WORKERS; w++)
        assert_int_equal(pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w), 0);
    int bad = 0;
    for (int i = 0; i < EPOCHS && !bad; i++) {
        uint64_t before = __atomic_load_n(&shared->cell->counts.alloc_objects, __ATOMIC_ACQUIRE);
        next_epoch();
        uint64_t now = epoch_now(), least = UINT64_MAX;
        for (int w = 0; w < WORKERS; w++) {
            while (__atomic_load_n(&first_seen[w], __ATOMIC_ACQUIRE) != now)
                sched_yield();
            uint64_t v = __atomic_load_n(&first_value[w], __ATOMIC_RELAXED);
            least = v < least ? v : least;
        }
        uint64_t stamp = __atomic_load_n(&shared->cell->counts.peak_epoch, __ATOMIC_ACQUIRE);
        uint64_t saved = __atomic_load_n(&shared->cell->counts.peak_alloc_objects, __ATOMIC_RELAXED);
        if (stamp != now || saved < before || saved > least) {
            print_error("epoch %d: stamp %llu (want %llu), saved %llu, not in [%llu, %llu]\n", i,
                        (unsigned long long)stamp, (unsigned long long)now,
                        (unsigned long long)saved, (unsigned long long)before,
                        (unsigned long long)least);
            bad = 1;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int w = 0; w < WORKERS; w++)
        pthread_join(th[w], NULL);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_open_run),
        cmocka_unit_test(test_snapshot_shards),
        cmocka_unit_test(test_racing_saves),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_live_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
