// links: profile
/* test_profile.c — the profile's storage: chunk blocks aligned per kind,
 * strings packed, kept by profile_clear. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "profile/profile.h"

#include "encode_same.h"

/* Strings take their bytes and NUL only (a decoded profile holds
 * hundreds of thousands); every other block keeps its alignment whatever
 * string lengths came before it. */
static void test_chunk_alignment(void **state)
{
    (void)state;
    profile_t *p = profile_new();
    assert_non_null(p);
    for (size_t len = 1; len < 40; len++) {
        char s[64];
        memset(s, 'a' + (int)(len % 26), len);
        int64_t i = profile_add_string(p, s, len);
        assert_true(i > 0);
        const char *c = p->strings[i];
        assert_int_equal(strlen(c), len);
        void *b = profile_alloc(p, len);
        assert_int_equal((uintptr_t)b % _Alignof(max_align_t), 0);
        memset(b, 0xff, len);
        uint64_t ids[3] = {len, len + 1, len + 2};
        uint64_t *st = profile_alloc_stack(p, ids, len % 3 + 1);
        assert_int_equal((uintptr_t)st % _Alignof(uint64_t), 0);
        assert_int_equal(st[0], len);
        profile_line_t ln = {len, (int64_t)len};
        profile_line_t *l = profile_alloc_lines(p, &ln, 1);
        assert_int_equal((uintptr_t)l % _Alignof(profile_line_t), 0);
        assert_int_equal(l->line, (int64_t)len);
    }
    /* a run of strings with nothing between them is one packed run */
    int64_t a = profile_add_string(p, "xyz", 3), b = profile_add_string(p, "q", 1),
            c = profile_add_string(p, "hello", 5);
    assert_ptr_equal(p->strings[b], p->strings[a] + 4);
    assert_ptr_equal(p->strings[c], p->strings[b] + 2);
    assert_string_equal(p->strings[c], "hello");
    profile_free(p);
}

/* A large table from profile_calloc_written is zero and each of its pages
 * is mapped (mincore: resident) before any use; a small one is zero. */
static void test_calloc_written(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 4096, (64 << 10) - 1, 64 << 10, (3 << 20) + 100};
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
        size_t n = sizes[k];
        unsigned char *b = profile_calloc_written(n, 1);
        assert_non_null(b);
        if (n >= (64 << 10)) {
            uintptr_t a = (uintptr_t)b & ~(uintptr_t)(pg - 1);
            size_t span = (size_t)((uintptr_t)b + n - a), np = (span + pg - 1) / pg;
            unsigned char *vec = malloc(np);
            assert_non_null(vec);
            assert_int_equal(mincore((void *)a, span, vec), 0);
            for (size_t i = 0; i < np; i++)
                assert_true(vec[i] & 1);
            free(vec);
        }
        for (size_t i = 0; i < n; i++)
            assert_int_equal(b[i], 0);
        free(b);
    }
}

/* n locations whose ids are ids[i] (each with one line naming function
 * ids[i] too, ids[i] nonzero), and n such functions. */
static profile_t *with_ids(const uint64_t *ids, size_t n)
{
    profile_t *p = profile_new();
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        profile_line_t ln = {ids[i], (int64_t)i};
        profile_location_t *l = profile_add_location(p, &ln, 1);
        assert_non_null(l);
        l->id = ids[i];
        l->address = 0x1000 + i;
        profile_function_t *f = profile_add_function(p);
        assert_non_null(f);
        f->id = ids[i];
        f->start_line = (int64_t)i;
        profile_mapping_t *m = profile_add_mapping(p);
        assert_non_null(m);
        m->id = ids[i];
        m->memory_start = 0x1000 * i;
    }
    return p;
}

/* Each id finds its element, an unknown id none, whatever the index. */
static void check_lookups(const profile_t *p, const uint64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(profile_location_by_id(p, ids[i]), &p->locations[i]);
        assert_ptr_equal(profile_function_by_id(p, ids[i]), &p->functions[i]);
        assert_ptr_equal(profile_mapping_by_id(p, ids[i]), &p->mappings[i]);
    }
    const uint64_t none[] = {0, n + 1, n + 2, 2 * n + 1023, 2 * n + 1024, UINT64_MAX};
    for (size_t k = 0; k < sizeof(none) / sizeof(*none); k++) {
        bool used = false;
        for (size_t i = 0; i < n; i++)
            used |= ids[i] == none[k];
        if (used)
            continue;
        assert_null(profile_location_by_id(p, none[k]));
        assert_null(profile_function_by_id(p, none[k]));
        assert_null(profile_mapping_by_id(p, none[k]));
    }
}

/* Ids that are the positions + 1 are indexed by no table; others (out of
 * order, sparse, with a gap) by one; either way every id finds its
 * element, and one appended after indexing is found too. */
static void test_index_positions(void **state)
{
    (void)state;
    const uint64_t pos[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const uint64_t shuffled[] = {3, 1, 2, 8, 5, 6, 7, 4};
    const uint64_t gap[] = {1, 2, 3, 5, 6, 7, 8, 9};
    const uint64_t sparse[] = {1, 2, 3, 4, 5, 6, 7, 1ull << 40};
    const uint64_t *sets[] = {pos, shuffled, gap, sparse};
    for (size_t s = 0; s < 4; s++) {
        profile_t *p = with_ids(sets[s], 8);
        assert_int_equal(profile_index(p), 0);
        assert_true((p->loc_index == NULL) == (s == 0));
        assert_true((p->fn_index == NULL) == (s == 0));
        assert_true((p->map_index == NULL) == (s == 0));
        check_lookups(p, sets[s], 8);
        /* appended since: found by its id (a scan), the others still */
        uint64_t more[9];
        memcpy(more, sets[s], sizeof(pos));
        more[8] = s == 0 ? 9 : 1000;
        profile_line_t ln = {more[8], 1};
        profile_location_t *l = profile_add_location(p, &ln, 1);
        profile_function_t *f = profile_add_function(p);
        profile_mapping_t *m = profile_add_mapping(p);
        assert_true(l && f && m);
        l->id = f->id = m->id = more[8];
        check_lookups(p, more, 9);
        assert_int_equal(profile_index(p), 0);
        check_lookups(p, more, 9);
        profile_free(p);
    }
    /* none at all */
    profile_t *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_index(p), 0);
    check_lookups(p, pos, 0);
    profile_free(p);
}

/* profile_index_movable makes tables even for ids that are the
 * positions + 1, and the swaps keep them: each id still finds its
 * element after any sequence of swaps. */
static void test_index_movable(void **state)
{
    (void)state;
    uint64_t ids[16];
    for (size_t i = 0; i < 16; i++)
        ids[i] = i + 1;
    profile_t *p = with_ids(ids, 16);
    assert_int_equal(profile_index_movable(p), 0);
    assert_non_null(p->loc_index);
    assert_non_null(p->fn_index);
    for (size_t k = 0; k < 40; k++) {
        size_t a = (k * 7) % 16, b = (k * 11 + 3) % 16;
        profile_swap_locations(p, a, b);
        profile_swap_functions(p, a, b);
        uint64_t t = ids[a];
        ids[a] = ids[b];
        ids[b] = t;
        for (size_t i = 0; i < 16; i++) {
            assert_ptr_equal(profile_location_by_id(p, ids[i]), &p->locations[i]);
            assert_ptr_equal(profile_function_by_id(p, ids[i]), &p->functions[i]);
        }
    }
    /* indexed again, the shuffled ids get a table */
    assert_int_equal(profile_index(p), 0);
    assert_non_null(p->loc_index);
    for (size_t i = 0; i < 16; i++)
        assert_ptr_equal(profile_location_by_id(p, ids[i]), &p->locations[i]);
    profile_free(p);
}

/* A profile with k of everything (k * 100 stack ids, strings of ~100
 * bytes: several chunks of each kind for k in the thousands) and every
 * header field set from k. */
static void fill(profile_t *p, size_t k)
{
    char buf[128];
    assert_int_equal(profile_add_sample_type(p, "alloc_space", "bytes"), 0);
    assert_int_equal(profile_add_comment(p, k % 2 ? "odd" : "even"), 0);
    p->drop_frames = profile_intern(p, "drop.*");
    p->keep_frames = profile_intern(p, "keep.*");
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = profile_intern(p, "bytes");
    p->default_sample_type = p->sample_types[0].type;
    p->time_nanos = (int64_t)k;
    p->duration_nanos = (int64_t)k * 2;
    p->period = (int64_t)k * 3;
    profile_mapping_t *m = profile_add_mapping(p);
    assert_non_null(m);
    m->id = 1;
    m->memory_limit = 1 << 20;
    m->filename = profile_intern(p, "/bin/x");
    uint64_t stack[100];
    for (size_t i = 0; i < k; i++) {
        snprintf(buf, sizeof(buf), "%zu-%090zu", k, i);
        profile_function_t *f = profile_add_function(p);
        assert_non_null(f);
        f->id = i + 1;
        f->name = f->system_name = profile_intern(p, buf);
        profile_line_t ln[2] = {{i + 1, (int64_t)i}, {1, 7}};
        profile_location_t *l = profile_add_location(p, ln, 1 + i % 2);
        assert_non_null(l);
        l->id = i + 1;
        l->mapping_id = 1;
        l->address = 0x1000 + i;
        for (size_t d = 0; d < 100; d++)
            stack[d] = (i + d) % k + 1;
        int64_t v = (int64_t)i;
        profile_sample_t *sm = profile_add_sample(p, stack, 100, &v);
        assert_non_null(sm);
        profile_label_t lb = {p->sample_types[0].unit, 0, (int64_t)i, 0};
        assert_int_equal(profile_sample_add_label(p, sm, &lb), 0);
    }
    assert_int_equal(profile_index(p), 0);
}

/* Page faults of this process so far: memory written for the first time. */
static long faults(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_minflt;
}

/* profile_clear leaves a profile as profile_new makes one, whatever it
 * held, and what is built in it next takes the memory it kept: a smaller
 * profile faults in no page of its own (a new one does, each large block
 * mapped alone as cprof's main has it), and equals the same built in a
 * new profile. */
static void test_clear(void **state)
{
    (void)state;
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    profile_t *p = profile_new();
    assert_non_null(p);
    fill(p, 3000);
    assert_int_equal(profile_clear(p), 0);
    assert_int_equal(p->n_strings, 1);
    assert_string_equal(p->strings[0], "");
    assert_true(p->n_samples == 0 && p->n_locations == 0 && p->n_functions == 0 &&
                p->n_mappings == 0 && p->n_sample_types == 0 && p->n_comments == 0);
    assert_true(p->time_nanos == 0 && p->duration_nanos == 0 && p->period == 0 &&
                p->drop_frames == 0 && p->keep_frames == 0 && p->default_sample_type == 0 &&
                p->period_type.type == 0 && p->period_type.unit == 0);
    assert_true(p->n_loc_index == 0 && p->n_fn_index == 0 && p->n_map_index == 0);
    assert_int_equal(profile_intern(p, ""), 0);
    long f0 = faults();
    fill(p, 1000);
    long reused = faults() - f0;
    profile_t *q = profile_new();
    assert_non_null(q);
    f0 = faults();
    fill(q, 1000); /* ~1.3 MB: stacks 800 KB, strings 100 KB, elements */
    long fresh = faults() - f0;
    /* the intern table is made again (a few pages) */
    if (reused * 5 > fresh)
        fail_msg("page faults: %ld building in a cleared profile, %ld in a new one", reused,
                 fresh);
    assert_same_encoding(p, q);
    for (size_t i = 0; i < 1000; i++) {
        assert_ptr_equal(profile_location_by_id(p, i + 1), &p->locations[i]);
        assert_ptr_equal(profile_function_by_id(p, i + 1), &p->functions[i]);
    }
    assert_null(profile_location_by_id(p, 1001));
    /* and larger again: the memory kept first, then more */
    assert_int_equal(profile_clear(p), 0);
    fill(p, 4000);
    profile_free(q);
    q = profile_new();
    assert_non_null(q);
    fill(q, 4000);
    assert_same_encoding(p, q);
    profile_free(p);
    profile_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_alignment),
        cmocka_unit_test(test_calloc_written),
        cmocka_unit_test(test_index_positions),
        cmocka_unit_test(test_index_movable),
        cmocka_unit_test(test_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
