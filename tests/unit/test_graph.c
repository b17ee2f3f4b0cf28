// links: tests/gen/gen.c graph
/* test_graph.c — the call graph of a hand-built profile: flat/cum values,
 * edges (inline, residual), granularity aggregation, filters, trimming and
 * pprof's sort orders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "tool/graph/filter.h"
#include "tool/graph/graph.h"
#include "tool/graph/measure.h"
#include "tool/graph/work.h"

/* Functions 1..4: main, alloc, helper (inlined into alloc), leaf.
 * Locations: 1 main (main.c:10), 2 alloc+helper inlined (a.c:20/21),
 * 3 leaf (a.c:30), 4 alloc (a.c:25), 5 bare address in mapping 1.
 * Samples (value = single column "space/bytes"):
 *   [2 1] 100   [3 4 1] 50   [4 1] 7   [5 1] 3   [3 1] 0 */
static profile_t *make_profile(void)
{
    profile_t *p = profile_new();
    assert_non_null(p);
    profile_add_sample_type(p, "space", "bytes");
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->memory_start = 0x1000;
    m->memory_limit = 0x9000;
    m->filename = profile_intern(p, "/usr/bin/prog");
    const char *names[] = {"main", "alloc", "helper", "leaf"};
    const char *files[] = {"main.c", "./src/../a.c", "a.c", "a.c"};
    for (int i = 0; i < 4; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = (uint64_t)i + 1;
        f->name = f->system_name = profile_intern(p, names[i]);
        f->filename = profile_intern(p, files[i]);
    }
    struct {
        profile_line_t l[2];
        size_t n;
        uint64_t addr;
    } locs[] = {{{{1, 10}}, 1, 0x1100},
                {{{3, 21}, {2, 20}}, 2, 0x1200},
                {{{4, 30}}, 1, 0x1300},
                {{{2, 25}}, 1, 0x1400},
                {{{0, 0}}, 0, 0x1500}};
    for (int i = 0; i < 5; i++) {
        profile_location_t *l = profile_add_location(p, locs[i].l, locs[i].n);
        l->id = (uint64_t)i + 1;
        l->mapping_id = 1;
        l->address = locs[i].addr;
    }
    uint64_t s1[] = {2, 1}, s2[] = {3, 4, 1}, s3[] = {4, 1}, s4[] = {5, 1}, s5[] = {3, 1};
    int64_t v100 = 100, v50 = 50, v7 = 7, v3 = 3, v0 = 0;
    profile_add_sample(p, s1, 2, &v100);
    profile_add_sample(p, s2, 3, &v50);
    profile_add_sample(p, s3, 2, &v7);
    profile_add_sample(p, s4, 2, &v3);
    profile_add_sample(p, s5, 2, &v0);
    assert_int_equal(profile_index(p), 0);
    return p;
}

static int find(graph_t *g, const char *name)
{
    for (size_t i = 0; i < g->n_sel; i++)
        if (strcmp(graph_node_name(g, g->sel[i]), name) == 0)
            return (int)g->sel[i];
    return -1;
}

static void functions_view(work_t **w, profile_t *p)
{
    char err[128];
    assert_int_equal(work_new(p, w, err, sizeof(err)), 0);
    filter_aggregate(*w, true, true, false, false, false);
}

static void test_values_and_edges(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    assert_int_equal(graph_build(g, NULL), 0);
    assert_int_equal(g->n_sel, 5); /* main alloc helper leaf [prog] */
    int main_ = find(g, "main"), alloc = find(g, "alloc"), helper = find(g, "helper"),
        leaf = find(g, "leaf"), bare = find(g, "[prog]");
    assert_true(main_ >= 0 && alloc >= 0 && helper >= 0 && leaf >= 0 && bare >= 0);
    assert_int_equal(g->nodes[main_].cum, 160);
    assert_int_equal(g->nodes[main_].flat, 0);
    assert_int_equal(g->nodes[helper].flat, 100);
    assert_int_equal(g->nodes[alloc].cum, 157);
    assert_int_equal(g->nodes[alloc].flat, 7);
    assert_int_equal(g->nodes[leaf].flat, 50);
    assert_int_equal(g->nodes[bare].flat, 3);
    /* alloc -> helper is an inline edge, main -> alloc is not */
    size_t n;
    uint32_t *in = graph_edges_sorted(g, (uint32_t)helper, true, &n);
    assert_int_equal(n, 1);
    assert_true(g->edges[in[0]].inl);
    assert_int_equal(g->edges[in[0]].weight, 100);
    free(in);
    uint32_t *out = graph_edges_sorted(g, (uint32_t)main_, false, &n);
    assert_int_equal(n, 2); /* alloc, [prog]; the zero sample adds nothing */
    assert_int_equal(g->edges[out[0]].weight, 157); /* heaviest first */
    assert_false(g->edges[out[0]].inl);
    free(out);
    graph_sort(g, false);
    assert_string_equal(graph_node_name(g, g->sel[0]), "helper");
    assert_string_equal(graph_node_name(g, g->sel[1]), "leaf");
    graph_sort(g, true);
    assert_string_equal(graph_node_name(g, g->sel[0]), "main");
    graph_free(g);
    work_free(w);
    profile_free(p);
}

/* Many nodes, the node index grown many times: two locations of one
 * function are one node at the functions' granularity, each of the
 * 6,000 functions its own. */
static void test_many_nodes(void **state)
{
    (void)state;
    enum { NF = 6000 };
    profile_t *p = profile_new();
    assert_non_null(p);
    profile_add_sample_type(p, "space", "bytes");
    char name[32];
    for (int i = 0; i < NF; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = (uint64_t)i + 1;
        snprintf(name, sizeof(name), "f%d", i);
        f->name = f->system_name = profile_intern(p, name);
        f->filename = profile_intern(p, "a.c");
    }
    for (int i = 0; i < 2 * NF; i++) {
        profile_line_t l = {(uint64_t)(i / 2) + 1, 1 + i % 2};
        profile_location_t *loc = profile_add_location(p, &l, 1);
        loc->id = (uint64_t)i + 1;
        uint64_t id = loc->id;
        int64_t v = 1;
        profile_add_sample(p, &id, 1, &v);
    }
    assert_int_equal(profile_index(p), 0);
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    assert_int_equal(graph_build(g, NULL), 0);
    assert_int_equal(g->n_nodes, NF);
    assert_int_equal(g->n_sel, NF);
    /* the nodes moved to their block's aligned start at each growth,
     * whole: node i is function i's, in the order made */
    assert_int_equal((uintptr_t)g->nodes % 64, 0);
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_int_equal(g->nodes[i].flat, 2);
        snprintf(name, sizeof(name), "f%zu", i);
        assert_string_equal(work_str(w, g->nodes[i].info.name), name);
    }
    for (size_t i = NF; i-- > 0;) { /* the names' array grows from the last */
        snprintf(name, sizeof(name), "f%zu", i);
        assert_string_equal(graph_node_name(g, (uint32_t)i), name);
    }
    graph_free(g);
    work_free(w);
    profile_free(p);
}

static void test_kept_nodes_make_residual_edges(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    assert_int_equal(graph_build(g, NULL), 0);
    bool *kept = calloc(g->n_nodes, sizeof(bool));
    kept[find(g, "main")] = kept[find(g, "leaf")] = true;
    int leaf = find(g, "leaf");
    assert_int_equal(graph_build(g, kept), 0);
    assert_int_equal(g->n_sel, 2);
    size_t n;
    uint32_t *in = graph_edges_sorted(g, (uint32_t)leaf, true, &n);
    assert_int_equal(n, 1);
    assert_true(g->edges[in[0]].residual);
    free(in);
    /* Samples ending in a dropped node give no flat value to main. */
    assert_int_equal(g->nodes[find(g, "main")].flat, 0);
    free(kept);
    graph_free(g);
    work_free(w);
    profile_free(p);
}

static void test_trimming(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    trim_opts_t t = {.node_fraction = 0.05, .edge_fraction = 0.001}; /* cutoff 8: drops [prog] (3) */
    trim_result_t r;
    assert_int_equal(graph_trimmed(g, &t, &r), 0);
    assert_int_equal(r.dropped_nodes, 1);
    assert_int_equal(r.orig_count, 4);
    assert_int_equal(g->n_sel, 4);
    t = (trim_opts_t){.node_count = 2, .cum_sort = true};
    assert_int_equal(graph_trimmed(g, &t, &r), 0);
    assert_int_equal(g->n_sel, 2);
    assert_int_equal(r.orig_count, 5);
    assert_string_equal(graph_node_name(g, g->sel[0]), "main");
    assert_string_equal(graph_node_name(g, g->sel[1]), "alloc");
    graph_free(g);
    work_free(w);
    profile_free(p);
}

static void test_lines_and_addresses(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    char err[128];
    work_t *w;
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    filter_aggregate(w, true, true, true, true, false); /* lines */
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    assert_int_equal(graph_build(g, NULL), 0);
    assert_true(find(g, "alloc a.c:20") >= 0); /* ./src/../a.c cleaned */
    assert_true(find(g, "helper a.c:21") >= 0);
    graph_free(g);
    work_free(w);
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0); /* addresses */
    assert_int_equal(graph_new(w, &o, &g), 0);
    assert_int_equal(graph_build(g, NULL), 0);
    assert_true(find(g, "0000000000001300 leaf a.c:30") >= 0);
    assert_true(find(g, "0000000000001500 [prog]") >= 0);
    graph_free(g);
    work_free(w);
    profile_free(p);
}

static void test_filters(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    char err[128];
    work_t *w;
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    rx_t *focus = rx_compile("^lea", err, sizeof(err)), *hide = rx_compile("main", err, sizeof(err));
    name_match_t m;
    filter_by_name(w, focus, NULL, hide, NULL, &m);
    assert_true(m.fm);
    assert_true(m.hm);
    /* samples through leaf: [3 4 1] and [3 1]; main hidden from both */
    assert_int_equal(w->n_samples, 2);
    assert_int_equal(w->samples[0].n_locs, 2);
    assert_int_equal(w->samples[1].n_locs, 1);
    rx_free(focus);
    rx_free(hide);
    work_free(w);

    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    rx_t *sf = rx_compile("alloc", err, sizeof(err));
    assert_true(filter_show_from(w, sf));
    assert_int_equal(w->n_samples, 3); /* [2] [3 4] [4] */
    assert_int_equal(w->samples[1].n_locs, 2);
    rx_free(sf);
    work_free(w);

    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    rx_t *pf = rx_compile("^alloc$", err, sizeof(err));
    filter_prune_from(w, pf);
    assert_int_equal(w->samples[1].n_locs, 2); /* [4 1]: leaf pruned */
    assert_int_equal(w->locs[1].n_lines, 1);   /* helper line dropped */
    rx_free(pf);
    work_free(w);
    profile_free(p);
}

/* No filter at all keeps every sample with a location, in order, as a
 * filter that focuses on every location does, and drops those without
 * one (pprof's focusedAndNotIgnored of no locations is false). */
static void test_no_filters(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    int64_t v9 = 9;
    assert_non_null(profile_add_sample(p, NULL, 0, &v9));
    char err[128];
    work_t *w, *wa;
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    assert_int_equal(work_new(p, &wa, err, sizeof(err)), 0);
    assert_int_equal(w->n_samples, 6);
    name_match_t m, ma;
    filter_by_name(w, NULL, NULL, NULL, NULL, &m);
    rx_t *all = rx_compile("", err, sizeof(err));
    assert_non_null(all);
    filter_by_name(wa, all, NULL, NULL, NULL, &ma);
    assert_true(m.fm && ma.fm);
    assert_false(m.im || m.hm || m.hnm);
    assert_int_equal(w->n_samples, 5);
    assert_int_equal(wa->n_samples, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(w->samples[i].n_locs, wa->samples[i].n_locs);
        assert_memory_equal(w->samples[i].locs, wa->samples[i].locs,
                            w->samples[i].n_locs * sizeof(*w->samples[i].locs));
        assert_ptr_equal(w->samples[i].values, p->samples[i].values);
    }
    rx_free(all);
    work_free(w);
    work_free(wa);
    profile_free(p);

    /* no locations at all: no match, no sample */
    p = profile_new();
    assert_non_null(p);
    profile_add_sample_type(p, "space", "bytes");
    assert_non_null(profile_add_sample(p, NULL, 0, &v9));
    assert_int_equal(profile_index(p), 0);
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    filter_by_name(w, NULL, NULL, NULL, NULL, &m);
    assert_false(m.fm);
    assert_int_equal(w->n_samples, 0);
    work_free(w);
    profile_free(p);
}

static void test_rx_translation(void **state)
{
    (void)state;
    char err[128];
    rx_t *r = rx_compile("^main\\.\\w+\\d$", err, sizeof(err));
    assert_non_null(r);
    assert_true(rx_match(r, "main.alloc2"));
    assert_false(rx_match(r, "main.alloc"));
    rx_free(r);
    r = rx_compile("(?i)ALLOC(?:ate)?", err, sizeof(err));
    assert_non_null(r);
    assert_true(rx_match(r, "my_allocate"));
    rx_free(r);
    r = rx_compile("[\\w.]+", err, sizeof(err));
    assert_true(rx_match(r, "x"));
    rx_free(r);
    assert_null(rx_compile("(", err, sizeof(err)));
}

/* A random profile: nfn functions, one location each (every 5th with an
 * inlined second line), nsamples stacks of depth 20-60 with repeats
 * (recursion), values 1-1000. */
static profile_t *random_profile(size_t nfn, size_t nsamples)
{
    uint64_t x = 88172645463325252ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    profile_t *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_add_sample_type(p, "space", "bytes"), 0);
    for (size_t i = 1; i <= nfn; i++) {
        char name[32];
        snprintf(name, sizeof(name), "f%zu", i);
        profile_function_t *f = profile_add_function(p);
        assert_non_null(f);
        f->id = i;
        f->name = f->system_name = profile_intern(p, name);
        f->filename = profile_intern(p, "r.c");
    }
    for (size_t i = 1; i <= nfn; i++) {
        profile_line_t lines[2] = {{i % 5 == 0 ? (i % nfn) + 1 : i, (int64_t)i},
                                   {i, (int64_t)i + 1}};
        profile_location_t *l = profile_add_location(p, lines, i % 5 == 0 ? 2 : 1);
        assert_non_null(l);
        l->id = i;
        l->address = 0x1000 + i;
    }
    uint64_t stack[60];
    for (size_t s = 0; s < nsamples; s++) {
        size_t depth = 20 + RND() % 41;
        for (size_t d = 0; d < depth; d++)
            stack[d] = RND() % 3 == 0 && d ? stack[RND() % d] : 1 + RND() % nfn;
        int64_t v = (int64_t)(1 + RND() % 1000);
        assert_non_null(profile_add_sample(p, stack, depth, &v));
    }
#undef RND
    assert_int_equal(profile_index(p), 0);
    return p;
}

/* A visual graph's entropy order computed in parts (part_edges small) is
 * the one computed on the whole graph: same nodes, order, values, edges. */
static void test_entropy_in_parts(void **state)
{
    (void)state;
    profile_t *p = random_profile(400, 3000);
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1};
    trim_opts_t t = {.node_fraction = 0.005, .edge_fraction = 0.001, .node_count = 80,
                     .visual = true};
    /* cut 1: a node cutoff that drops nodes (the kept graph); node counts
     * from 4 to 80, as which nodes are kept is where a wrong score shows */
    for (int run = 0; run < 10; run++) {
        const int cut = run % 2;
        t.node_fraction = cut ? 0.02 : 0;
        t.node_count = 4 << (run / 2);
        if (t.node_count > 80)
            t.node_count = 80;
        graph_t *whole, *parts;
        trim_result_t rw, rp;
        assert_int_equal(graph_new(w, &o, &whole), 0);
        assert_int_equal(graph_new(w, &o, &parts), 0);
        parts->part_edges = 64;
        assert_int_equal(graph_trimmed(whole, &t, &rw), 0);
        assert_int_equal(graph_trimmed(parts, &t, &rp), 0);
        assert_true(rw.orig_count > t.node_count);
        assert_int_equal(rw.orig_count, rp.orig_count);
        assert_int_equal(rw.dropped_nodes, rp.dropped_nodes);
        assert_int_equal(rw.dropped_edges, rp.dropped_edges);
        assert_int_equal(whole->n_sel, parts->n_sel);
        for (size_t i = 0; i < whole->n_sel; i++) {
            const gnode_t *a = &whole->nodes[whole->sel[i]], *b = &parts->nodes[parts->sel[i]];
            assert_int_equal(whole->sel[i], parts->sel[i]);
            assert_int_equal(a->flat, b->flat);
            assert_int_equal(a->cum, b->cum);
        }
        assert_int_equal(whole->n_edges, parts->n_edges);
        for (size_t i = 0; i < whole->n_edges; i++) {
            const gedge_t *a = &whole->edges[i], *b = &parts->edges[i];
            assert_int_equal(a->src, b->src);
            assert_int_equal(a->dst, b->dst);
            assert_int_equal(a->weight, b->weight);
            assert_int_equal(a->removed, b->removed);
            assert_int_equal(a->residual, b->residual);
        }
        graph_free(whole);
        graph_free(parts);
    }
    work_free(w);
    profile_free(p);
}

/* work_take, which makes the view in the profile's own arrays, gives the
 * view work_new copies: every function, location (lines, mapping) and
 * sample's stack, on random profiles (sparse ids, inline frames, bare
 * addresses); the profile keeps its strings and mappings. */
static void test_take_equals_new(void **state)
{
    (void)state;
    char err[128];
    for (uint64_t seed = 1; seed <= 9; seed++) {
        profgen_opts_t o;
        profgen_defaults(&o, seed);
        o.sparse_ids = seed % 3 == 0;
        o.mappings = seed % 4;
        profile_t *a = profgen_make(&o), *b = profgen_make(&o);
        assert_non_null(a);
        assert_non_null(b);
        work_t *wn, *wt;
        assert_int_equal(work_new(a, &wn, err, sizeof(err)), 0);
        assert_int_equal(work_take(b, &wt, err, sizeof(err)), 0);
        assert_null(b->locations);
        assert_null(b->functions);
        assert_int_equal(wt->n_funcs, wn->n_funcs);
        for (size_t i = 0; i < wn->n_funcs; i++) {
            const wfunc_t *x = &wn->funcs[i], *y = &wt->funcs[i];
            assert_int_equal(x->id, y->id);
            assert_string_equal(work_str(wn, x->name), work_str(wt, y->name));
            assert_string_equal(work_str(wn, x->system_name), work_str(wt, y->system_name));
            assert_string_equal(work_str(wn, x->filename), work_str(wt, y->filename));
            assert_int_equal(x->start_line, y->start_line);
        }
        assert_int_equal(wt->n_locs, wn->n_locs);
        for (size_t i = 0; i < wn->n_locs; i++) {
            const wloc_t *x = &wn->locs[i], *y = &wt->locs[i];
            assert_int_equal(x->id, y->id);
            assert_int_equal(x->address, y->address);
            assert_int_equal(x->mapping, y->mapping);
            assert_int_equal(x->is_folded, y->is_folded);
            assert_string_equal(work_loc_objfile(wn, x), work_loc_objfile(wt, y));
            assert_int_equal(x->n_lines, y->n_lines);
            for (uint32_t j = 0; j < x->n_lines; j++) {
                assert_int_equal(x->lines[j].fn, y->lines[j].fn);
                assert_int_equal(x->lines[j].line, y->lines[j].line);
            }
        }
        assert_int_equal(wt->n_samples, wn->n_samples);
        for (size_t i = 0; i < wn->n_samples; i++) {
            const wsample_t *x = &wn->samples[i], *y = &wt->samples[i];
            assert_int_equal(x->n_locs, y->n_locs);
            if (x->n_locs)
                assert_memory_equal(x->locs, y->locs, x->n_locs * sizeof(*x->locs));
            assert_int_equal(x->values[0], y->values[0]);
        }
        work_free(wn);
        work_free(wt);
        profile_free(a);
        profile_free(b);
    }
}

/* work_label_key finds a label key by name among the samples' labels:
 * after more than its 16 remembered other keys, and a key present only
 * in the strings (no label has it) or nowhere is -1. */
static void test_label_key(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    int64_t unused = profile_intern(p, "pprof::base"); /* a string, no label's */
    assert_true(unused > 0);
    char k[16];
    for (size_t i = 0; i < p->n_samples; i++)
        for (int j = 0; j < 12; j++) {
            /* 40 distinct keys over the samples, "target" last of all */
            int n = (int)i * 8 + j;
            snprintf(k, sizeof(k), n == 40 ? "target" : "key%d", n % 41);
            profile_label_t l = {profile_intern(p, k), profile_intern(p, "v"), 0, 0};
            assert_int_equal(profile_sample_add_label(p, &p->samples[i], &l), 0);
        }
    work_t *w;
    char err[128];
    assert_int_equal(work_new(p, &w, err, sizeof(err)), 0);
    int64_t target = profile_intern(p, "target");
    assert_int_equal(work_label_key(w, "target"), target);
    assert_int_equal(work_label_key(w, "key3"), profile_intern(p, "key3"));
    assert_int_equal(work_label_key(w, "pprof::base"), -1);
    assert_int_equal(work_label_key(w, "nowhere"), -1);
    work_free(w);
    profile_free(p);
}

/* A profile of seed with labels and inline frames, for the tags tests. */
static profile_t *tagged_profile(uint64_t seed)
{
    profgen_opts_t po;
    profgen_defaults(&po, seed);
    po.samples = 3000;
    po.locations = 600;
    po.functions = 300;
    po.labels = 3;
    po.inline_pct = 40;
    profile_t *p = profgen_make(&po);
    assert_non_null(p);
    return p;
}

/* A visual graph trimmed to node_count computes tags only for the nodes
 * it may keep (add_tags), to count them as pprof's selectTopNodes does:
 * the nodes it keeps are those that the tags of the graph of every node
 * (node_count 0, the same order) select, with nodes dropped before
 * (residual stacks, inline frames) and samples that reach none of them. */
static void test_deferred_tags(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        profile_t *p = tagged_profile(seed);
        const int K = 30 + (int)seed * 5;
        int32_t want[64];
        size_t n_want = 0;
        for (int run = 0; run < 2; run++) {
            work_t *w;
            functions_view(&w, p);
            graph_opts_t o = {.value_index = 1, .mean_index = -1, .tags = true};
            graph_t *g;
            assert_int_equal(graph_new(w, &o, &g), 0);
            trim_opts_t t = {.node_fraction = 0.002, .edge_fraction = 0.001,
                             .node_count = run ? K : 0, .visual = true};
            trim_result_t r;
            assert_int_equal(graph_trimmed(g, &t, &r), 0);
            if (run == 0) {
                assert_true(r.dropped_nodes > 0);
                /* selectTopNodes over the tags of every node */
                size_t count = 0, max = g->n_sel;
                for (size_t i = 0; i < g->n_sel; i++) {
                    uint32_t n = g->sel[i];
                    int tags = 0;
                    for (uint32_t k = g->tag_first[n]; k < g->tag_first[n + 1]; k++)
                        tags += !g->tags[g->tag_refs[k]].removed && g->tags[g->tag_refs[k]].flat;
                    count += (size_t)(tags > 4 ? 4 : tags) + 1;
                    if (count >= (size_t)K) {
                        max = i + 1;
                        break;
                    }
                }
                assert_true(max < g->n_sel && max <= 64);
                for (size_t i = 0; i < max; i++)
                    want[n_want++] = g->nodes[g->sel[i]].info.name;
            } else {
                if (g->n_sel != n_want)
                    fail_msg("seed %llu: %zu nodes kept, want %zu", (unsigned long long)seed,
                             g->n_sel, n_want);
                for (size_t i = 0; i < n_want; i++) {
                    size_t j = 0;
                    while (j < g->n_sel && g->nodes[g->sel[j]].info.name != want[i])
                        j++;
                    assert_true(j < g->n_sel);
                }
            }
            graph_free(g);
            work_free(w);
        }
        profile_free(p);
    }
}

/* A visual graph trimmed to node_count keeps, of the tags add_tags made
 * for the nodes it may keep, those of the nodes it keeps: the same tags,
 * values and order as a build with those nodes makes. */
static void test_kept_tags_as_built(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        profile_t *p = tagged_profile(seed);
        work_t *w;
        functions_view(&w, p);
        graph_opts_t o = {.value_index = 1, .mean_index = -1, .tags = true};
        graph_t *g, *b;
        assert_int_equal(graph_new(w, &o, &g), 0);
        assert_int_equal(graph_new(w, &o, &b), 0);
        trim_opts_t t = {.node_fraction = 0.002, .edge_fraction = 0.001,
                         .node_count = 10 + (int)seed * 5, .visual = true};
        trim_result_t r;
        assert_int_equal(graph_trimmed(g, &t, &r), 0);
        assert_true(g->n_sel < (size_t)r.orig_count); /* kept fewer: built again */
        bool *kept = calloc(g->n_nodes + 1, sizeof(*kept));
        assert_non_null(kept);
        for (size_t i = 0; i < g->n_sel; i++)
            kept[g->sel[i]] = true;
        assert_int_equal(graph_build(b, kept), 0);
        assert_int_equal(g->n_tags, b->n_tags);
        assert_true(b->n_tags > 0);
        for (size_t i = 0; i < b->n_tags; i++) {
            const gtag_t *x = &g->tags[i], *y = &b->tags[i];
            assert_int_equal(x->node, y->node);
            assert_int_equal(x->numeric, y->numeric);
            assert_string_equal(graph_tag_str(g, x->group), graph_tag_str(b, y->group));
            assert_string_equal(graph_tag_str(g, x->name), graph_tag_str(b, y->name));
            assert_int_equal(x->value, y->value);
            assert_int_equal(x->flat, y->flat);
            assert_int_equal(x->cum, y->cum);
            assert_int_equal(x->flat_div, y->flat_div);
            assert_int_equal(x->cum_div, y->cum_div);
        }
        for (size_t n = 0; n <= g->n_nodes; n++)
            assert_int_equal(g->tag_first[n], b->tag_first[n]);
        for (size_t i = 0; i < b->n_tags; i++)
            assert_int_equal(g->tag_refs[i], b->tag_refs[i]);
        free(kept);
        graph_free(g);
        graph_free(b);
        work_free(w);
        profile_free(p);
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each sample's tag group is its string labels, "key:value" sorted and
 * joined by a literal \n (pprof::base left out), and its numeric tags the
 * names of its "bytes" values, however often the same lists (in any
 * order, up to six pairs; 200 that differ in one value) and values (300
 * of them; three that take turns in one slot of the memo) repeat. */
static void test_tag_groups(void **state)
{
    (void)state;
    profile_t *p = make_profile();
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "pprof::base"};
    int64_t kbytes = profile_intern(p, "bytes");
    /* more samples, all on the first stack */
    uint64_t stack[] = {2, 1};
    for (int i = 0; i < 600; i++) {
        int64_t v = i + 1;
        profile_sample_t *sm = profile_add_sample(p, stack, 2, &v);
        assert_non_null(sm);
        int nl = i % 7;
        for (int j = 0; j < nl; j++) {
            int k = (i / 7 + j * (i % 2 ? 1 : 3)) % 7; /* orders vary */
            char val[16];
            snprintf(val, sizeof(val), "v%d", (i / 3 + j) % 3);
            profile_label_t l = {profile_intern(p, keys[k]), profile_intern(p, val), 0, 0};
            assert_int_equal(profile_sample_add_label(p, sm, &l), 0);
        }
        profile_label_t n = {kbytes, 0, 8 * ((i * 7919) % 300 + 1), 0};
        assert_int_equal(profile_sample_add_label(p, sm, &n), 0);
    }
    /* values that share a slot of tags_prepare's memo (8, 152 and 296
     * all hash to slot 60), taking turns: found in either way, and one
     * put out for another */
    static const int64_t turns[] = {8, 152, 8, 152, 296, 8, 296, 152, 152, 8};
    for (int i = 0; i < 40; i++) {
        int64_t v = i + 1;
        profile_sample_t *sm = profile_add_sample(p, stack, 2, &v);
        assert_non_null(sm);
        profile_label_t n = {kbytes, 0, turns[i % 10], 0};
        assert_int_equal(profile_sample_add_label(p, sm, &n), 0);
    }
    /* lists alike but for one value: 200 of them, twice each */
    for (int i = 0; i < 400; i++) {
        int64_t v = i + 1;
        profile_sample_t *sm = profile_add_sample(p, stack, 2, &v);
        assert_non_null(sm);
        char val[16];
        snprintf(val, sizeof(val), "x%d", i % 200);
        profile_label_t l = {profile_intern(p, "a"), profile_intern(p, val), 0, 0};
        assert_int_equal(profile_sample_add_label(p, sm, &l), 0);
    }
    work_t *w;
    functions_view(&w, p);
    graph_opts_t o = {.value_index = 0, .mean_index = -1, .tags = true};
    graph_t *g;
    assert_int_equal(graph_new(w, &o, &g), 0);
    trim_opts_t t = {.node_fraction = 0, .edge_fraction = 0};
    trim_result_t r;
    assert_int_equal(graph_trimmed(g, &t, &r), 0);
    assert_non_null(g->s_group);
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *sm = &w->samples[i];
        char *parts[16], want[512] = "";
        size_t np = 0;
        for (uint32_t j = 0; j < sm->n_labels; j++) {
            const profile_label_t *l = &sm->labels[j];
            if (l->str == 0 || strcmp(work_str(w, l->key), "pprof::base") == 0)
                continue;
            char b[64];
            snprintf(b, sizeof(b), "%s:%s", work_str(w, l->key), work_str(w, l->str));
            parts[np++] = strdup(b);
        }
        qsort(parts, np, sizeof(*parts), str_cmp);
        for (size_t j = 0; j < np; j++) {
            if (j)
                strcat(want, "\\n");
            strcat(want, parts[j]);
            free(parts[j]);
        }
        assert_string_equal(graph_tag_str(g, g->s_group[i]), want);
        uint32_t k = g->s_num_first[i];
        for (uint32_t j = 0; j < sm->n_labels; j++) {
            const profile_label_t *l = &sm->labels[j];
            if (l->key != kbytes || l->str != 0)
                continue;
            char name[64];
            measure_scaled_label(name, sizeof(name), l->num, "bytes", "minimum");
            assert_true(k < g->s_num_first[i + 1]);
            assert_string_equal(graph_tag_str(g, g->s_num[k]), name);
            assert_int_equal(g->s_numv[k], l->num);
            k++;
        }
        assert_int_equal(k, g->s_num_first[i + 1]);
    }
    graph_free(g);
    work_free(w);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_edges),
        cmocka_unit_test(test_label_key),
        cmocka_unit_test(test_deferred_tags),
        cmocka_unit_test(test_kept_tags_as_built),
        cmocka_unit_test(test_tag_groups),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_kept_nodes_make_residual_edges),
        cmocka_unit_test(test_trimming),
        cmocka_unit_test(test_lines_and_addresses),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_no_filters),
        cmocka_unit_test(test_rx_translation),
        cmocka_unit_test(test_entropy_in_parts),
        cmocka_unit_test(test_take_equals_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
