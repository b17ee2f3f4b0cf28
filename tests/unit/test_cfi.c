// links: src/runtime/cfi.c src/runtime/pltstub.c src/runtime/arena.c src/runtime/rt.c
/* test_cfi.c — the .eh_frame walk gives libunwind's stacks, with the hash
 * of every suffix, also when the thread's last walk is reused, when the
 * part above the reused frame changed (a different call site, a deeper or
 * shallower stack) and when a stack word the last walk read changed; the
 * holder's tags on the frames follow the frames. */
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/hash.h"
#include "runtime/cfi.h"
#include "runtime/unwind.h"
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define MAX 64

typedef struct {
    uintptr_t pcs[MAX], unw[MAX];
    uint64_t hashes[MAX];
    int n, nunw, reused;
    bool hashed; /* the walk gave hashes (not one cut at its max) */
} probe_t;

/* A walk's stack (where it lies: cfi.h) copied into p, and given back. */
static void take(probe_t *p, int n, cfi_stack_t *st)
{
    p->n = n;
    p->reused = st->reused;
    p->hashed = n > 0 && st->hashes;
    if (n > 0)
        memmove(p->pcs, st->pcs, (size_t)n * sizeof(uintptr_t));
    if (p->hashed)
        memmove(p->hashes, st->hashes, (size_t)n * sizeof(uint64_t));
    cfi_release(st->held);
}

static uintptr_t stack_lo, stack_hi; /* the main thread's */

/* Both unwinders from one frame: cfi_walk's entry 0 is in cfi_walk and 1
 * in probe, unw_backtrace's entry 0 in probe; after those, the callers of
 * probe, the same for both. */
static __attribute__((noinline)) void probe(probe_t *p)
{
    cfi_stack_t st;
    take(p, cfi_walk(p->pcs, p->hashes, MAX, stack_lo, stack_hi, &st), &st);
    p->nunw = unwind_backtrace_sigsafe(p->unw, MAX);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) int recurse(probe_t *p, int depth)
{
    if (depth == 0)
        probe(p);
    else
        recurse(p, depth - 1);
    __asm__ volatile("" ::: "memory");
    return depth;
}

/* Two call sites of recurse: same frames below, a different caller. */
static __attribute__((noinline)) void site_a(probe_t *p, int depth)
{
    recurse(p, depth);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void site_b(probe_t *p, int depth)
{
    recurse(p, depth);
    __asm__ volatile("" ::: "memory");
}

static void check(const probe_t *p)
{
    assert_true(p->n > 2);
    assert_int_equal(p->n, p->nunw + 1);
    assert_memory_equal(p->pcs + 2, p->unw + 1, (size_t)(p->n - 2) * sizeof(uintptr_t));
    assert_true(p->hashed);
    for (int i = 0; i < p->n; i++)
        assert_true(p->hashes[i] == hash_pcs(p->pcs + i, (size_t)(p->n - i)));
}

static void test_matches_libunwind(void **state)
{
    (void)state;
    probe_t p, prev;
    for (int round = 0; round < 40; round++) {
        /* Alternating sites at the same depth: the last walk matches up to
         * the frame whose return address differs. */
        if (round & 1)
            site_a(&p, round / 2 % 7);
        else
            site_b(&p, round / 2 % 7);
        check(&p);
        /* From the second round on, the frames below the site are the
         * last walk's. */
        if (round)
            assert_true(p.reused > 0);
        /* The same depth from the other site: only the frame of recurse
         * called by the site differs (its return address). */
        if (round & 1)
            assert_true(memcmp(p.pcs + 2, prev.pcs + 2, (size_t)(p.n - 2) * sizeof(uintptr_t)) != 0);
        prev = p;
    }
}

/* Walks of varying depth from one site, each joining the last one: the
 * new frames are written before the part joined, whether the walk is
 * longer or shorter than the last (cfi.c keeps the last walk in place). */
static void test_join_depths(void **state)
{
    (void)state;
    static const int depths[] = {0, 12, 3, 20, 1, 7, 7, 0, 25, 2};
    probe_t p;
    for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
        site_a(&p, depths[i]);
        check(&p);
        if (i)
            assert_true(p.reused > 0);
    }
}

/* The holder's tags (cfi.h), checked and set before they are given back,
 * as buckets.c does: the frames walked anew read 0, the ones carried over
 * what a walk before set on them; each new frame is set to its walk's
 * number and its distance from the stack's end, which a frame carried
 * over keeps. */
static uint64_t tag_walks;
static int tags_wrong, tags_carried;

static __attribute__((noinline)) void probe_tags(probe_t *p)
{
    cfi_stack_t st;
    int n = cfi_walk(p->pcs, p->hashes, MAX, stack_lo, stack_hi, &st);
    tag_walks++;
    if (n > 0) {
        assert_non_null(st.tags);
        assert_non_null(st.memo);
        int fresh = n - st.reused;
        for (int i = 0; i < n; i++) {
            uint64_t t = st.tags[i];
            if (i < fresh ? t != 0
                          : (t & 0xffff) != (uint64_t)(n - i) || t >> 16 == 0 || t >> 16 >= tag_walks)
                tags_wrong++;
            if (i < fresh)
                st.tags[i] = tag_walks << 16 | (uint64_t)(n - i);
        }
        tags_carried += n - fresh;
    }
    take(p, n, &st);
    p->nunw = unwind_backtrace_sigsafe(p->unw, MAX);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void recurse_tags(probe_t *p, int depth)
{
    if (depth == 0)
        probe_tags(p);
    else
        recurse_tags(p, depth - 1);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void tags_a(probe_t *p, int depth)
{
    recurse_tags(p, depth);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void tags_b(probe_t *p, int depth)
{
    recurse_tags(p, depth);
    __asm__ volatile("" ::: "memory");
}

/* Another site, deeper and shallower stacks, the same stack again: a
 * frame written by a walk never shows the tag of the frame it replaced. */
static void test_tags(void **state)
{
    (void)state;
    static const int depths[] = {0, 12, 3, 20, 1, 7, 7, 0, 25, 2, 2, 9};
    probe_t p;
    tags_wrong = tags_carried = 0;
    for (int round = 0; round < 4; round++)
        for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
            ((i + (size_t)round) & 1 ? tags_a : tags_b)(&p, depths[i]);
            check(&p);
        }
    assert_int_equal(tags_wrong, 0);
    assert_true(tags_carried > 0);
    /* A walk cut at its max keeps no tags, but has the memo (buckets.c
     * finds a cut stack's bucket there by the stack itself). */
    cfi_stack_t st;
    uintptr_t pcs[MAX];
    uint64_t hashes[MAX];
    assert_true(cfi_walk(pcs, hashes, 2, stack_lo, stack_hi, &st) == 2);
    assert_null(st.tags);
    assert_non_null(st.memo);
    cfi_release(st.held);
}

/* A stack word the last walk read has changed (a return address, as after
 * the function returned and another call reused its frame): the frames
 * that read it are walked again, not taken from the last walk. */
static __attribute__((noinline)) void probe_twice(probe_t *p1, probe_t *p2, uintptr_t *word,
                                                  uintptr_t other)
{
    probe(p1);
    uintptr_t was = *word;
    *(volatile uintptr_t *)word = other;
    probe(p2);
    *(volatile uintptr_t *)word = was;
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void tamper_below(probe_t *p1, probe_t *p2, uintptr_t *rec,
                                                   int depth)
{
    if (depth)
        tamper_below(p1, p2, rec, depth - 1);
    else /* an address in the same caller: the walk goes on as before */
        probe_twice(p1, p2, &rec[1], rec[1] + 1);
    __asm__ volatile("" ::: "memory");
}

/* tamper_site's frame record: the caller's fp, then the return address
 * into the caller (x86-64 and aarch64 with frame pointers). */
static __attribute__((noinline)) uintptr_t tamper_site(probe_t *p1, probe_t *p2, int depth)
{
    uintptr_t *rec = __builtin_frame_address(0);
    uintptr_t ra = rec[1];
    tamper_below(p1, p2, rec, depth);
    __asm__ volatile("" ::: "memory");
    return ra;
}

/* The changed word at several distances from the frame joined: unchanged
 * reads the words by blocks of frames, a change in any is seen. */
static void changed_word(int depth)
{
    probe_t p1, p2;
    uintptr_t ra = tamper_site(&p1, &p2, depth);
    check(&p1);
    int k = -1;
    for (int i = 0; i < p1.n; i++)
        if (p1.pcs[i] == ra)
            k = i;
    assert_true(k > 3);
    assert_int_equal(p2.n, p1.n);
    /* pcs[2]: two call sites of probe in probe_twice */
    for (int i = 0; i < p1.n; i++)
        if (i != 2)
            assert_true(p2.pcs[i] == (i == k ? ra + 1 : p1.pcs[i]));
    for (int i = 0; i < p2.n; i++)
        assert_true(p2.hashes[i] == hash_pcs(p2.pcs + i, (size_t)(p2.n - i)));
    /* Joined past the changed word only: at the frame after the one whose
     * return address it is. */
    assert_int_equal(p2.reused, p1.n - k - 1);
}

static void test_changed_word(void **state)
{
    (void)state;
    for (int depth = 3; depth < 14; depth++)
        changed_word(depth);
}

static void test_depth_limit(void **state)
{
    (void)state;
    uintptr_t pcs[MAX];
    uint64_t hashes[MAX];
    probe_t p;
    site_a(&p, 10);
    check(&p);
    /* Cut at 5: no hashes (they would cover the 5 frames, not the
     * stack's end), the stack's leaf end. */
    cfi_stack_t st;
    uintptr_t unw[MAX];
    int n = cfi_walk(pcs, hashes, 5, stack_lo, stack_hi, &st);
    const uint64_t *got_hashes = st.hashes;
    memcpy(pcs, st.pcs, (size_t)(n > 0 ? n : 0) * sizeof(uintptr_t));
    cfi_release(st.held);
    int nunw = unwind_backtrace_sigsafe(unw, MAX);
    assert_int_equal(n, 5);
    assert_null(got_hashes);
    /* cfi_walk's entry 0 is in cfi_walk, 1 and unw_backtrace's 0 here */
    assert_true(nunw > 5);
    assert_memory_equal(pcs + 2, unw + 1, 3 * sizeof(uintptr_t));
}

/* Walks cut at their max (stacks deeper than it) are kept, and the next
 * walk reuses one to its cut and goes on from there: each walk is the
 * leaf end of the full stack, with the hashes of what it kept. */
static int cut_max = 6;

static __attribute__((noinline)) void probe_cut(probe_t *p)
{
    cfi_stack_t st;
    take(p, cfi_walk(p->pcs, p->hashes, cut_max, stack_lo, stack_hi, &st), &st);
    p->nunw = unwind_backtrace_sigsafe(p->unw, MAX);
    __asm__ volatile("" ::: "memory");
}

/* depth frames of recursion, then probe_fn: a stack as deep as asked. */
static __attribute__((noinline)) int recurse_into(void (*probe_fn)(probe_t *), probe_t *p,
                                                  int depth)
{
    if (depth == 0)
        probe_fn(p);
    else
        recurse_into(probe_fn, p, depth - 1);
    __asm__ volatile("" ::: "memory");
    return depth;
}

static void test_cut_reuse(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        probe_t p;
        /* One frame shallower each time (the last walk's part from the
         * match is shorter than max: the walk goes on after its cut),
         * then deeper, then at random. */
        int depth = round < 15 ? 30 - round : round < 30 ? round : 10 + (round * 7) % 5;
        recurse_into(probe_cut, &p, depth);
        assert_int_equal(p.n, cut_max);
        assert_memory_equal(p.pcs + 2, p.unw + 1, (size_t)(p.n - 2) * sizeof(uintptr_t));
        assert_false(p.hashed);
        if (round > 0 && round < 15) {
            assert_true(p.reused > 0);
            assert_true(p.reused < cut_max - 3); /* frames walked after the copy */
        }
    }
}

/* Three walks in a row from one frame with different maxes: a cut walk
 * taken by a whole one, which the next joins, and the other orders. Each
 * is the leaf end of libunwind's stack, with the hash of every suffix
 * when it has hashes (frames moved in the kept arrays stay right). */
static int mixed_max[3];

static __attribute__((noinline)) void probe_mixed(probe_t *p)
{
    cfi_stack_t st;
    for (int k = 0; k < 3; k++) {
        take(&p[k], cfi_walk(p[k].pcs, p[k].hashes, mixed_max[k], stack_lo, stack_hi, &st),
             &st);
        __asm__ volatile("" ::: "memory");
    }
    p[3].nunw = unwind_backtrace_sigsafe(p[3].unw, MAX);
    __asm__ volatile("" ::: "memory");
}

static void test_mixed_max(void **state)
{
    (void)state;
    static const int maxes[][3] = {{6, MAX, MAX}, {6, 8, MAX}, {6, 8, 10}, {10, 6, MAX},
                                   {MAX, 6, MAX}, {MAX, 6, 9},  {7, 7, 7},  {30, MAX, 30}};
    static const int depths[] = {5, 20, 40};
    for (size_t i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
        for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
            probe_t p[4];
            memcpy(mixed_max, maxes[i], sizeof(mixed_max));
            recurse_into(probe_mixed, p, depths[d]);
            int full = p[3].nunw + 1; /* cfi_walk's own frame first */
            for (int k = 0; k < 3; k++) {
                int n = p[k].n;
                assert_int_equal(n, mixed_max[k] < full ? mixed_max[k] : full);
                assert_memory_equal(p[k].pcs + 2, p[3].unw + 1, (size_t)(n - 2) * sizeof(uintptr_t));
                assert_true(p[k].hashed == (n == full));
                for (int j = 0; p[k].hashed && j < n; j++)
                    assert_true(p[k].hashes[j] == hash_pcs(p[k].pcs + j, (size_t)(n - j)));
            }
        }
    }
}

/* A walk's stack is read where the thread's last walk keeps it, held
 * until released: a walk made meanwhile (a signal handler's) goes without
 * the thread's arrays, reuses nothing and leaves the held stack as it was;
 * once released, walks join the last one again. */
static __attribute__((noinline)) void probe_held(probe_t *held, probe_t *nested,
                                                 probe_t *after)
{
    cfi_stack_t st;
    held->n = cfi_walk(held->pcs, held->hashes, MAX, stack_lo, stack_hi, &st);
    held->reused = st.reused;
    memcpy(held->unw, st.pcs, (size_t)held->n * sizeof(uintptr_t));
    site_b(nested, 3); /* deeper: would write its frames over the held ones */
    bool same = memcmp(held->unw, st.pcs, (size_t)held->n * sizeof(uintptr_t)) == 0;
    for (int i = 0; i < held->n; i++)
        same = same && st.hashes[i] == hash_pcs(st.pcs + i, (size_t)(held->n - i));
    memcpy(held->pcs, st.pcs, (size_t)held->n * sizeof(uintptr_t));
    cfi_release(st.held);
    assert_true(held->n > 3);
    assert_true(same);
    site_b(after, 3);
    __asm__ volatile("" ::: "memory");
}

static void test_held(void **state)
{
    (void)state;
    probe_t p, held, nested, after;
    for (int round = 0; round < 3; round++) {
        site_a(&p, 2);
        probe_held(&held, &nested, &after);
        check(&nested);
        check(&after);
        assert_true(held.reused > 0); /* joined the walk in site_a */
        assert_int_equal(nested.reused, 0);
        /* after: joins held's walk (below probe_held), not nested's */
        assert_true(after.reused > 0);
        assert_true(after.reused < after.n - 4);
        /* held, read after the nested walk: the frames below probe_held
         * are the other walks' too */
        assert_memory_equal(held.pcs + 2, after.pcs + after.n - held.n + 2,
                            (size_t)(held.n - 2) * sizeof(uintptr_t));
    }
}

/* A start outside the given stack, or a read that would leave it: the
 * walk gives up, reading nothing outside. */
static void test_bounds(void **state)
{
    (void)state;
    uintptr_t pcs[MAX];
    uint64_t hashes[MAX];
    cfi_stack_t st;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    assert_int_equal(cfi_walk(pcs, hashes, MAX, stack_lo, here - 4096, &st), -1);
    assert_null(st.held);
    assert_int_equal(cfi_walk(pcs, hashes, MAX, here + 4096, stack_hi, &st), -1);
    /* The stack ends just above this frame: the callers' words are out. */
    assert_int_equal(cfi_walk(pcs, hashes, MAX, stack_lo, here + 16, &st), -1);
    assert_null(st.held);
    assert_true(cfi_walk(pcs, hashes, MAX, stack_lo, stack_hi, &st) > 2);
    cfi_release(st.held);
}

/* A hook's view: the walk from its own frame starts at its caller, with
 * the stack and hashes of the whole walk from there, whether the last
 * walk (the whole one just made) is reused or not. */
static __attribute__((noinline)) void hook(probe_t *whole, probe_t *from)
{
    cfi_stack_t st;
    take(whole, cfi_walk(whole->pcs, whole->hashes, MAX, stack_lo, stack_hi, &st), &st);
    take(from,
         cfi_walk_frame(__builtin_frame_address(0), from->pcs, from->hashes, MAX, stack_lo,
                        stack_hi, &st),
         &st);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void hook_caller(probe_t *whole, probe_t *from, int depth)
{
    if (depth)
        hook_caller(whole, from, depth - 1);
    else
        hook(whole, from);
    __asm__ volatile("" ::: "memory");
}

static void test_from_frame(void **state)
{
    (void)state;
#if !defined(__x86_64__)
    skip(); /* elsewhere cfi_walk_frame walks from itself */
#endif
    for (int round = 0; round < 6; round++) {
        probe_t whole, from;
        hook_caller(&whole, &from, round);
        /* whole: cfi_walk, hook, hook_caller... from: hook_caller... */
        assert_true(whole.n > 3);
        assert_int_equal(from.n, whole.n - 2);
        assert_memory_equal(from.pcs, whole.pcs + 2, (size_t)from.n * sizeof(uintptr_t));
        assert_memory_equal(from.hashes, whole.hashes + 2, (size_t)from.n * sizeof(uint64_t));
        assert_true(from.reused > 0);
    }
    /* A frame outside the stack: nothing is read, the walk gives up. */
    uintptr_t pcs[MAX];
    uint64_t hashes[MAX];
    cfi_stack_t st;
    assert_int_equal(cfi_walk_frame((void *)(stack_hi - 8), pcs, hashes, MAX, stack_lo, stack_hi,
                                    &st), -1);
    assert_int_equal(cfi_walk_frame((void *)(stack_lo - 4096), pcs, hashes, MAX, stack_lo,
                                    stack_hi, &st), -1);
    assert_null(st.held);
}

/* --- a frame's fp where no rule takes the CFA from it ------------------
 *
 * with_bp(p, fn, bp) calls fn(p) with rbp set to bp (saved and restored
 * as a callee-saved register, the CFA from rsp), from a thread whose
 * frames take no CFA from rbp either: code built without frame pointers.
 * Two calls from one site with another bp each: the frame fn runs in has
 * the same pc and sp in both walks and another fp, which no outer rule
 * reads, so the second walk joins the first there. */
#if defined(__x86_64__) && !defined(__clang__)
#define NO_FP __attribute__((noinline, optimize("omit-frame-pointer")))
__asm__(".text\n"
        ".p2align 4\n"
        ".type with_bp, @function\n"
        "with_bp:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  movq %rdx, %rbp\n"
        "  call *%rsi\n"
        "  popq %rbp\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size with_bp, .-with_bp\n");
void with_bp(probe_t *p, void (*fn)(probe_t *), uintptr_t bp);

static uintptr_t thread_lo, thread_hi;
static int fp_max = MAX;

/* cfi_walk (its CFA from rbp: cfi.c is built with frame pointers) saves
 * the bp with_bp set: the first frame whose fp no rule reads is this. */
static NO_FP void fp_middle(probe_t *p)
{
    cfi_stack_t st;
    take(p, cfi_walk(p->pcs, p->hashes, fp_max, thread_lo, thread_hi, &st), &st);
    p->nunw = unwind_backtrace_sigsafe(p->unw, MAX);
    __asm__ volatile("" ::: "memory");
}

static NO_FP void fp_probe(probe_t *p)
{
    fp_middle(p);
    __asm__ volatile("" ::: "memory");
}

static NO_FP void *fp_thread(void *arg)
{
    probe_t *p = arg;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return NULL;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    thread_lo = (uintptr_t)addr;
    thread_hi = thread_lo + size;
    /* One call site: a bound not known, so the loop is not unrolled.
     * Rounds 3 to 5: a walk cut at 3 frames, one that takes them from it
     * and goes on (the same bp; a walk from another depth before round 3
     * leaves it nothing to take), and one with another bp, which
     * joins that one as rounds 1 and 2 join round 0's: the walk that took
     * frames knows which of them take the CFA from fp. Rounds 6 and 7:
     * walks cut at 3, each with another bp, which take the last walk's
     * frames from fp_middle's on (they end there: no fp needed). */
    static volatile int rounds = 8;
    for (int i = 0; i < rounds; i++) {
        fp_max = MAX;
        if (i == 3)
            fp_middle(&p[i]);
        fp_max = i == 3 || i >= 6 ? 3 : MAX;
        with_bp(&p[i], fp_probe, 0x1000 * (uintptr_t)(i == 4 ? i : i + 1));
    }
    return arg;
}
#endif

static void test_dead_fp(void **state)
{
    (void)state;
#if defined(__x86_64__) && !defined(__clang__)
    probe_t p[8];
    pthread_t th;
    void *ret = NULL;
    assert_int_equal(pthread_create(&th, NULL, fp_thread, p), 0);
    assert_int_equal(pthread_join(th, &ret), 0);
    assert_ptr_equal(ret, p);
    assert_int_equal(p[3].n, 3);
    assert_int_equal(p[3].reused, 0);
    assert_memory_equal(p[3].pcs, p[0].pcs, 3 * sizeof(uintptr_t));
    assert_int_equal(p[4].reused, 3);
    for (int i = 6; i < 8; i++) {
        assert_int_equal(p[i].n, 3);
        assert_memory_equal(p[i].pcs, p[0].pcs, 3 * sizeof(uintptr_t));
        assert_int_equal(p[i].reused, 2);
    }
    for (int i = 0; i < 6; i++) {
        if (i == 3)
            continue;
        /* cfi_walk, fp_middle, fp_probe, with_bp, fp_thread, ... */
        check(&p[i]);
        assert_true(p[i].n > 5);
        if (i && i != 4) {
            /* joined at fp_middle's frame (index 1: its fp is the bp
             * given), not only at fp_thread's (4), where fp is restored */
            assert_memory_equal(p[i].pcs, p[0].pcs, (size_t)p[0].n * sizeof(uintptr_t));
            assert_int_equal(p[i].reused, p[i].n - 1);
        }
    }
#else
    skip(); /* the frames without frame pointers need GCC on x86-64 */
#endif
}

int main(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 1;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    stack_lo = (uintptr_t)addr;
    stack_hi = stack_lo + size;
    cfi_init(MAX);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_libunwind),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_from_frame),
        cmocka_unit_test(test_cut_reuse),
        cmocka_unit_test(test_join_depths),
        cmocka_unit_test(test_changed_word),
        cmocka_unit_test(test_dead_fp),
        cmocka_unit_test(test_held),
        cmocka_unit_test(test_mixed_max),
        cmocka_unit_test(test_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
