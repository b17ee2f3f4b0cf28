// links: src/runtime/glibcheap.c src/runtime/counters.c src/runtime/procmaps.c src/runtime/arena.c src/runtime/rt.c
/* test_glibcheap.c — glibc's heap as the leak scan sees it, on this
 * process's own glibc heap: the chunks in use at start are listed (not
 * the free ones, not those made after), and a thread's arena heap is told
 * apart from anonymous memory that merely starts at the same alignment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/glibcheap.h"

#define HEAP_MAX ((uintptr_t)64 << 20)

static size_t read_direct(void *arg, uintptr_t a, void *buf, size_t len)
{
    (void)arg;
    memcpy(buf, (const void *)a, len);
    return len;
}

/* The writable mapping holding a, or the one named name, from
 * /proc/self/maps. */
static int mapping(uintptr_t a, const char *name, uintptr_t *lo, uintptr_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof(line), f)) {
        unsigned long l, h;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &l, &h, perms) != 3 || perms[1] != 'w')
            continue;
        found = name ? strstr(line, name) != NULL : a >= l && a < h;
        *lo = l, *hi = h;
    }
    if (f)
        fclose(f);
    return found;
}

typedef struct {
    uintptr_t lo[64];
    int n;
} seen_t;

static void collect(void *arg, uintptr_t lo, uintptr_t hi)
{
    seen_t *s = arg;
    assert_true(hi > lo);
    if (s->n < 64)
        s->lo[s->n++] = lo;
}

static int seen(const seen_t *s, const void *p)
{
    for (int i = 0; i < s->n; i++)
        if (s->lo[i] == (uintptr_t)p)
            return 1;
    return 0;
}

static void test_early_chunks(void **state)
{
    (void)state;
    void *kept = malloc(100), *freed = malloc(5000), *fence = malloc(100);
    assert_non_null(kept);
    assert_non_null(fence);
    uintptr_t freed_at = (uintptr_t)freed;
    free(freed); /* too big for a tcache: a free chunk the heap shows */
    glibcheap_note_start();
    void *after = malloc(100);
    uintptr_t lo, hi;
    assert_true(mapping(0, "[heap]", &lo, &hi));
    seen_t s = {.n = 0};
    glibcheap_early_chunks(lo, hi, read_direct, NULL, collect, &s);
    assert_true(seen(&s, kept));
    assert_true(seen(&s, fence));
    assert_false(seen(&s, (void *)freed_at));
    assert_false(seen(&s, after));
    free(kept);
    free(fence);
    free(after);
}

static void *thread_alloc(void *arg)
{
    (void)arg;
    return malloc(1000);
}

static void test_arena(void **state)
{
    (void)state;
    pthread_t t;
    void *p = NULL;
    assert_int_equal(pthread_create(&t, NULL, thread_alloc, NULL), 0);
    assert_int_equal(pthread_join(t, &p), 0);
    assert_non_null(p);
    if (!(((uintptr_t *)p)[-1] & 4))
        skip(); /* NON_MAIN_ARENA clear: glibc used the main arena */
    uintptr_t lo, hi, end = 0;
    assert_true(mapping((uintptr_t)p, NULL, &lo, &hi));
    assert_int_equal(glibcheap_next_arena(lo, hi, read_direct, NULL, &end),
                     (uintptr_t)p & ~(HEAP_MAX - 1));
    assert_true(end > (uintptr_t)p && end <= hi);
    free(p);

    /* Anonymous memory with a HEAP_MAX-aligned start: zeros, then words
     * that are no heap_info. */
    size_t len = 2 * HEAP_MAX;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    assert_true(m != MAP_FAILED);
    uintptr_t a = ((uintptr_t)m + HEAP_MAX - 1) & ~(HEAP_MAX - 1);
    assert_int_equal(glibcheap_next_arena((uintptr_t)m, (uintptr_t)m + len, read_direct, NULL,
                                          &end), 0);
    uintptr_t *w = (uintptr_t *)a;
    w[0] = a + 48, w[1] = 0, w[2] = 4096 * 3, w[3] = 4096 * 2; /* size above mprotect_size */
    assert_int_equal(glibcheap_next_arena((uintptr_t)m, (uintptr_t)m + len, read_direct, NULL,
                                          &end), 0);
    w[3] = 4096 * 4;
    w[0] = a + 40; /* an arena not where a first heap keeps it */
    assert_int_equal(glibcheap_next_arena((uintptr_t)m, (uintptr_t)m + len, read_direct, NULL,
                                          &end), 0);
    w[0] = a + HEAP_MAX + 48, w[1] = a + HEAP_MAX; /* a later heap whose prev is none */
    assert_int_equal(glibcheap_next_arena((uintptr_t)m, (uintptr_t)m + len, read_direct, NULL,
                                          &end), 0);
    w[0] = a + 48, w[1] = 0; /* now a heap_info */
    assert_int_equal(glibcheap_next_arena((uintptr_t)m, (uintptr_t)m + len, read_direct, NULL,
                                          &end), a);
    assert_int_equal(end, a + 4096 * 4);
    munmap(m, len);
}

/* More chunks in use than the table takes (65536): the walk stops at the
 * first one past it rather than reading the whole heap, and the heap is
 * then a root whole. */
static void test_walk_bounded(void **state)
{
    (void)state;
    enum { N = 100000 };
    void **p = malloc(N * sizeof(*p));
    assert_non_null(p);
    for (int i = 0; i < N; i++)
        assert_non_null(p[i] = malloc(24));
    size_t walked = glibcheap_note_start();
    assert_true(walked >= 65536);
    assert_true(walked < 65536 + 1000);
    uintptr_t lo, hi;
    assert_true(mapping(0, "[heap]", &lo, &hi));
    seen_t s = {.n = 0};
    glibcheap_early_chunks(lo, hi, read_direct, NULL, collect, &s);
    assert_int_equal(s.n, 1); /* the whole heap at start */
    for (int i = 0; i < N; i++)
        free(p[i]);
    free(p);
}

/* An argument is a cmocka filter: under qemu-user (arm64_units.sh), which
 * fakes /proc/self/stat and has no [heap] mapping, test_arena alone. */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
#if defined(__SANITIZE_ADDRESS__)
    puts("glibcheap: the sanitizer's allocator is no glibc heap; skipped");
    return 0;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_early_chunks),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_walk_bounded), /* last: it leaves the whole heap noted */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
