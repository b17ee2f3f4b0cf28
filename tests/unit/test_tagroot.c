// links: graph
/* test_tagroot.c — label values as pseudo frames: frame order for root and
 * leaf keys, values joined (strings first, numeric ones scaled only when the
 * sample gives the key a unit), interning by (name, file), new ids after
 * the largest ones, match reporting, and the profile left untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/tagroot.h"
#include "tool/graph/work.h"

/* Functions 5 (main) and 9 (leaf); locations 3 (leaf) and 7 (main).
 * Samples: [3 7] k=a k=b n=2048 bytes n=3;  [7] k=a n=5;  [7] no labels. */
static profile_t *make_profile(void)
{
    profile_t *p = profile_new();
    assert_non_null(p);
    profile_add_sample_type(p, "space", "bytes");
    const char *names[] = {"main", "leaf"};
    const uint64_t fids[] = {5, 9}, lids[] = {7, 3};
    for (int i = 0; i < 2; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = fids[i];
        f->name = profile_intern(p, names[i]);
        f->filename = profile_intern(p, "m.c");
        profile_line_t line = {fids[i], 10 + i};
        profile_location_t *l = profile_add_location(p, &line, 1);
        l->id = lids[i];
    }
    uint64_t s1[] = {3, 7}, s2[] = {7};
    int64_t v = 1;
    int64_t k = profile_intern(p, "k"), n = profile_intern(p, "n");
    profile_sample_t *s = profile_add_sample(p, s1, 2, &v);
    profile_label_t l1[] = {{k, profile_intern(p, "a"), 0, 0},
                            {n, 0, 2048, profile_intern(p, "bytes")},
                            {k, profile_intern(p, "b"), 0, 0},
                            {n, 0, 3, 0}};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(profile_sample_add_label(p, s, &l1[i]), 0);
    s = profile_add_sample(p, s2, 1, &v);
    profile_label_t l2[] = {{n, 0, 5, 0}, {k, profile_intern(p, "a"), 0, 0}};
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(profile_sample_add_label(p, s, &l2[i]), 0);
    profile_add_sample(p, s2, 1, &v);
    assert_int_equal(profile_index(p), 0);
    return p;
}

/* "name@file" of frame j of sample i. */
static const char *frame(const work_t *w, size_t i, uint32_t j)
{
    static char buf[128];
    const wloc_t *l = &w->locs[w->samples[i].locs[j]];
    assert_int_equal(l->n_lines, 1);
    const wfunc_t *f = &w->funcs[l->lines[0].fn - 1];
    snprintf(buf, sizeof(buf), "%s@%s", work_str(w, f->name), work_str(w, f->filename));
    return buf;
}

static void test_frames(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    work_t *w;
    char err[128];
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    bool rm, lm;
    assert_int_equal(tagroot_add(w, "k", "n,,k", "minimum", &rm, &lm), 0);
    assert_true(rm);
    assert_true(lm);

    /* Leaf first: last leaf key innermost, then the first leaf key, the
     * sample's own frames, and the root keys (first key outermost). */
    const char *want[][5] = {{"a,b@k", "2kB,3@n", "leaf@m.c", "main@m.c", "a,b@k"},
                             {"a@k", "5@n", "main@m.c", "a@k", NULL},
                             {"@k", "@n", "main@m.c", "@k", NULL}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(w->samples[i].n_locs, i == 0 ? 5 : 4);
        for (uint32_t j = 0; j < w->samples[i].n_locs; j++)
            assert_string_equal(frame(w, i, j), want[i][j]);
    }
    /* Equal (name, file) pairs share a location, root or leaf; ids follow
     * the largest ones in the order pprof interns them (root keys first). */
    assert_int_equal(w->n_locs, 2 + 6);
    assert_int_equal(w->n_funcs, 2 + 6);
    assert_int_equal(w->samples[0].locs[0], w->samples[0].locs[4]);
    assert_int_equal(w->locs[2].id, 8);
    assert_int_equal(w->locs[7].id, 13);
    assert_int_equal(w->funcs[2].id, 10);
    assert_int_equal(w->funcs[7].id, 15);
    assert_int_equal(w->locs[w->samples[0].locs[1]].id, 9);
    assert_int_equal(w->locs[w->samples[1].locs[0]].id, 10);
    assert_int_equal(w->locs[w->samples[1].locs[1]].id, 11);
    /* The original locations still read their own lines. */
    assert_int_equal(w->locs[0].lines[0].line, 10);
    assert_int_equal(w->locs[1].lines[0].line, 11);
    /* The profile itself is not changed. */
    assert_int_equal(p->samples[0].n_location_ids, 2);
    assert_int_equal(p->n_locations, 2);
    work_free(w);
    profile_free(p);
}

static void test_units_and_no_match(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    work_t *w;
    char err[128];
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    bool rm, lm;
    /* With a unit for the key, the unit-less value is scaled from "" and
     * so takes the output unit's name, as pprof's ScaledLabel does; without
     * any unit, values stay plain numbers. */
    assert_int_equal(tagroot_add(w, "n", NULL, "MB", &rm, &lm), 0);
    assert_true(rm);
    assert_false(lm);
    assert_string_equal(frame(w, 0, 2), "0,3MB@n");
    assert_string_equal(frame(w, 1, 1), "5@n");
    work_free(w);

    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    assert_int_equal(tagroot_add(w, "zz", ",", "minimum", &rm, &lm), 0);
    assert_false(rm);
    assert_false(lm);
    /* A key nothing matches still adds an (empty) frame to every sample. */
    assert_int_equal(w->samples[2].n_locs, 2);
    assert_string_equal(frame(w, 2, 1), "@zz");
    work_free(w);

    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    assert_int_equal(tagroot_add(w, "", NULL, "minimum", &rm, &lm), 0);
    assert_int_equal(w->n_locs, 2);
    assert_int_equal(w->samples[0].n_locs, 2);
    work_free(w);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_units_and_no_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
