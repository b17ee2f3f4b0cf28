// links: report
/* test_flame.c — folded stacks and the flame graph's data: stacks merged,
 * root first, inline frames expanded; the tree pruned to its heaviest
 * FLAME_MAX_NODES frames; diffs; JSON that is safe inside a page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/report/commands.h"
#include "tool/report/flame.h"
#include "tool/report/report.h"
#include "unit/report_run.h"

/* Functions 1..nf named fmt(i); location i+1 holds function i+1, except
 * location 100 (id) which holds an inlined pair: leaf 2 inside 1. Stacks
 * leaf first, -1 terminated, as function indexes (0-based). */
static profile_t *make(size_t nf, const char *const *names, const int *stacks,
                       const int64_t *values, size_t ns)
{
    profile_t *p = profile_new();
    profile_add_sample_type(p, "space", "bytes");
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->filename = profile_intern(p, "/usr/bin/prog");
    m->has_functions = true;
    char buf[64];
    for (size_t i = 0; i < nf; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = i + 1;
        if (names)
            snprintf(buf, sizeof(buf), "%s", names[i]);
        else
            snprintf(buf, sizeof(buf), "f%zu", i);
        f->name = f->system_name = profile_intern(p, buf);
        profile_line_t l = {i + 1, (int64_t)i};
        profile_location_t *loc = profile_add_location(p, &l, 1);
        loc->id = i + 1;
        loc->mapping_id = 1;
    }
    const int *s = stacks;
    for (size_t i = 0; i < ns; i++) {
        uint64_t ids[64];
        size_t n = 0;
        for (; *s >= 0; s++)
            ids[n++] = (uint64_t)*s + 1;
        s++;
        profile_add_sample(p, ids, n, &values[i]);
    }
    profile_index(p);
    return p;
}

static char *gen(profile_t *p, const char *cmd, report_fn fn)
{
    config_t cfg;
    config_default(&cfg);
    return report_run(p, cmd, fn, &cfg, 0, "space", "bytes", NULL);
}

static int json_gen(report_t *r, char *err, size_t errlen)
{
    sbuf_t b = {0};
    int rc = flame_json(r, &b, err, errlen);
    if (rc == 0)
        fputs(sb_cstr(&b), r->out);
    sb_free(&b);
    return rc;
}

static void test_folded(void **state)
{
    (void)state;
    static const char *const names[] = {"main", "a;b", "leaf", "zero"};
    /* main->leaf twice (merged), main->"a;b"->leaf, main alone, a stack
     * whose values cancel, and one of value 0 */
    static const int stacks[] = {2, 0, -1, 2, 0, -1, 2, 1, 0, -1, 0, -1,
                                 3, 0, -1, 3, 0, -1, 3, -1};
    static const int64_t values[] = {10, 5, 7, 3, 4, -4, 0};
    profile_t *p = make(4, names, stacks, values, 7);
    char *out = gen(p, "folded", flame_folded);
    assert_string_equal(out, "main 3\n"
                             "main;a:b;leaf 7\n"
                             "main;leaf 15\n");
    free(out);
    profile_free(p);
}

static void test_json(void **state)
{
    (void)state;
    static const char *const names[] = {"main", "</script><b>&", "leaf"};
    static const int stacks[] = {2, 0, -1, 1, 0, -1, 0, -1};
    static const int64_t values[] = {60, 30, 10};
    profile_t *p = make(3, names, stacks, values, 3);
    char *out = gen(p, "flame", json_gen);
    /* pre-order, heaviest child first: root, main, leaf, the odd name */
    assert_non_null(strstr(out, "\"nodes\":[0,100,0,1,1,100,10,2,2,60,60,0,3,30,30,0]"));
    assert_non_null(strstr(out, "\"diff\":false"));
    assert_non_null(strstr(out, "\"total\":100,"));
    assert_non_null(strstr(out, "\"names\":[\"root\",\"main\",\"leaf\","
                                "\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\"]"));
    assert_null(strstr(out, "</"));
    assert_non_null(strstr(out, "\"fflat\":[0,10,60,30]"));
    assert_non_null(strstr(out, "\"fcum\":[100,100,60,30]"));
    free(out);
    profile_free(p);
}

static void test_diff(void **state)
{
    (void)state;
    static const int stacks[] = {1, 0, -1, 1, 0, -1, 2, 0, -1};
    static const int64_t values[] = {50, -20, -5};
    profile_t *p = make(3, NULL, stacks, values, 3);
    char *out = gen(p, "flame", json_gen);
    assert_non_null(strstr(out, "\"diff\":true"));
    /* name, new, base, self new, self base, children */
    assert_non_null(strstr(out, "\"nodes\":[0,50,25,0,0,1,1,50,25,0,0,2,2,50,20,50,20,0,3,0,5,0,5,0]"));
    free(out);
    profile_free(p);
}

/* More frames than a page keeps: exactly the heaviest remain, connected. */
static void test_pruning(void **state)
{
    (void)state;
    size_t nf = FLAME_MAX_NODES + 5000;
    int *stacks = malloc(nf * 3 * sizeof(*stacks));
    int64_t *values = malloc(nf * sizeof(*values));
    size_t k = 0;
    for (size_t i = 1; i < nf; i++) {
        stacks[k++] = (int)i;
        stacks[k++] = 0;
        stacks[k++] = -1;
        values[i - 1] = (int64_t)i; /* f1 lightest */
    }
    profile_t *p = make(nf, NULL, stacks, values, nf - 1);
    char *out = gen(p, "flame", json_gen);
    const char *n = strstr(out, "\"nodes\":[");
    assert_non_null(n);
    size_t commas = 0;
    for (const char *c = n + 9; *c != ']'; c++)
        commas += *c == ',';
    assert_int_equal((commas + 1) / 4, FLAME_MAX_NODES);
    /* root and main, then the heaviest leaves: f1..f5001 are left out */
    char want[64];
    snprintf(want, sizeof(want), "\"pruned\":%d,", 5001);
    assert_non_null(strstr(out, want));
    assert_null(strstr(out, "\"f5001\""));
    assert_non_null(strstr(out, "\"f5002\""));
    free(out);
    profile_free(p);
    free(stacks);
    free(values);
}

/* Long names: the page's data stays near FLAME_MAX_BYTES however many
 * distinct frames there are. */
static void test_byte_budget(void **state)
{
    (void)state;
    size_t nf = 20000;
    char **names = malloc(nf * sizeof(*names));
    int *stacks = malloc(nf * 3 * sizeof(*stacks));
    int64_t *values = malloc(nf * sizeof(*values));
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        names[i] = malloc(256);
        snprintf(names[i], 256, "ns::detail::Widget<std::basic_string<char>, %zu>::render_"
                 "with_a_rather_long_method_name_number_%zu(std::vector<int> const&, "
                 "std::map<std::string, int>&) const", i, i);
        if (i) {
            stacks[k++] = (int)i;
            stacks[k++] = 0;
            stacks[k++] = -1;
            values[i - 1] = (int64_t)i;
        }
    }
    profile_t *p = make(nf, (const char *const *)names, stacks, values, nf - 1);
    char *out = gen(p, "flame", json_gen);
    size_t len = strlen(out);
    assert_true(len <= FLAME_MAX_BYTES + FLAME_MAX_BYTES / 10);
    assert_true(len >= FLAME_MAX_BYTES / 2);
    assert_null(strstr(out, "\"pruned\":0,"));
    free(out);
    profile_free(p);
    for (size_t i = 0; i < nf; i++)
        free(names[i]);
    free(names);
    free(stacks);
    free(values);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folded),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_pruning),
        cmocka_unit_test(test_byte_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
