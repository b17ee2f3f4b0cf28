// links: report
/* test_dot.c — the DOT call graph of small profiles, compared with what
 * go tool pprof -dot prints for the same data (the expected texts below
 * are its output: set CPROF_TEST_WRITE=DIR to write the profiles there and
 * check them again), and the Graphviz rendering's error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool/report/commands.h"
#include "tool/report/dot.h"
#include "tool/report/report.h"
#include "unit/report_run.h"

/* A profile of one sample per stack; stacks are leaf-first function
 * indexes, -1 terminated; names[i] is function i+1 at location i+1. */
static profile_t *make(const char *const *names, size_t nn, const int *stacks,
                       const int64_t *values, size_t ns)
{
    profile_t *p = profile_new();
    profile_add_sample_type(p, "space", "bytes");
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->filename = profile_intern(p, "/usr/bin/prog");
    m->has_functions = true;
    for (size_t i = 0; i < nn; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = i + 1;
        f->name = f->system_name = profile_intern(p, names[i]);
        f->filename = profile_intern(p, "src/prog.c");
        profile_line_t l = {i + 1, (int64_t)(10 + i)};
        profile_location_t *loc = profile_add_location(p, &l, 1);
        loc->id = i + 1;
        loc->mapping_id = 1;
        loc->address = 0x1000 + i;
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

static void maybe_write(profile_t *p, const char *name)
{
    const char *dir = getenv("CPROF_TEST_WRITE");
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.pb.gz", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(profile_write_fd(p, fd), 0);
    close(fd);
}

static char *dot_of(profile_t *p, int nodecount)
{
    config_t cfg;
    config_default(&cfg);
    cfg.nodecount = nodecount;
    return report_run(p, "dot", report_dot, &cfg, 0, "space", "bytes", NULL);
}

/* Names as pprof shortens them for labels: Go package paths, C++ classes,
 * Java methods; dots and :: become line breaks. (The C++ names are as
 * pprof leaves them after loading: argument lists and templates gone.) */
static void test_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "main",
        "github.com/acme/v2/pkg.(*T).Method",
        "std::vector::push_back",
        "ns::Foo::bar",
        "::Widget::draw",
        "com.example.Foo.bar(int)",
    };
    static const int stacks[] = {1, 0, -1, 2, 0, -1, 3, 0, -1, 4, 0, -1, 5, 0, -1};
    static const int64_t values[] = {5000, 4000, 3000, 2000, 1000};
    profile_t *p = make(names, 6, stacks, values, 5);
    maybe_write(p, "names");
    char *out = dot_of(p, 80);
    const char *want =
        "digraph \"prog\" {\n"
        "node [style=filled fillcolor=\"#f8f8f8\"]\n"
        "subgraph cluster_L { \"File: prog\" [shape=box fontsize=16 label=\"File: prog\\lType"
        ": space\\lShowing nodes accounting for 15000B, 100% of 15000B total\\l\\lSee https:/"
        "/git.io/JfYMW for how to read the graph\\l\" tooltip=\"prog\"] }\n"
        "N1 [label=\"main\\n0 of 15000B (100%)\" id=\"node1\" fontsize=8 shape=box tooltip=\""
        "main (15000B)\" color=\"#b20000\" fillcolor=\"#edd5d5\"]\n"
        "N2 [label=\"pkg\\n(*T)\\nMethod\\n5000B (33.33%)\" id=\"node2\" fontsize=24 shape=bo"
        "x tooltip=\"github.com/acme/v2/pkg.(*T).Method (5000B)\" color=\"#b23200\" fillcolor"
        "=\"#eddcd5\"]\n"
        "N3 [label=\"std\\nvector\\npush_back\\n4000B (26.67%)\" id=\"node3\" fontsize=23 sha"
        "pe=box tooltip=\"std::vector::push_back (4000B)\" color=\"#b23a00\" fillcolor=\"#edd"
        "dd5\"]\n"
        "N4 [label=\"Foo\\nbar\\n3000B (20.00%)\" id=\"node4\" fontsize=21 shape=box tooltip="
        "\"ns::Foo::bar (3000B)\" color=\"#b24400\" fillcolor=\"#edded5\"]\n"
        "N5 [label=\"\\nWidget\\ndraw\\n2000B (13.33%)\" id=\"node5\" fontsize=19 shape=box t"
        "ooltip=\"::Widget::draw (2000B)\" color=\"#b2713b\" fillcolor=\"#ede4dd\"]\n"
        "N6 [label=\"Foo\\nbar\\n1000B (6.67%)\" id=\"node6\" fontsize=16 shape=box tooltip="
        "\"com.example.Foo.bar(int) (1000B)\" color=\"#b29877\" fillcolor=\"#ede9e5\"]\n"
        "N1 -> N2 [label=\" 5000B\" weight=34 penwidth=2 color=\"#b23200\" tooltip=\"main -> "
        "github.com/acme/v2/pkg.(*T).Method (5000B)\" labeltooltip=\"main -> github.com/acme/"
        "v2/pkg.(*T).Method (5000B)\"]\n"
        "N1 -> N3 [label=\" 4000B\" weight=27 penwidth=2 color=\"#b23a00\" tooltip=\"main -> "
        "std::vector::push_back (4000B)\" labeltooltip=\"main -> std::vector::push_back (4000"
        "B)\"]\n"
        "N1 -> N4 [label=\" 3000B\" weight=21 penwidth=2 color=\"#b24400\" tooltip=\"main -> "
        "ns::Foo::bar (3000B)\" labeltooltip=\"main -> ns::Foo::bar (3000B)\"]\n"
        "N1 -> N5 [label=\" 2000B\" weight=14 color=\"#b2713b\" tooltip=\"main -> ::Widget::d"
        "raw (2000B)\" labeltooltip=\"main -> ::Widget::draw (2000B)\"]\n"
        "N1 -> N6 [label=\" 1000B\" weight=7 color=\"#b29877\" tooltip=\"main -> com.example."
        "Foo.bar(int) (1000B)\" labeltooltip=\"main -> com.example.Foo.bar(int) (1000B)\"]\n"
        "}\n";
    assert_string_equal(out, want);
    free(out);
    profile_free(p);
}

/* Trimming to 3 nodes: the dropped middle node leaves a dotted residual
 * edge, and the legend says what was dropped. */
static void test_trim_residual(void **state)
{
    (void)state;
    static const char *const names[] = {"main", "mid", "leaf", "other"};
    static const int stacks[] = {2, 1, 0, -1, 3, 0, -1};
    static const int64_t values[] = {900, 100};
    profile_t *p = make(names, 4, stacks, values, 2);
    maybe_write(p, "trim");
    char *out = dot_of(p, 3);
    assert_non_null(strstr(out, "Showing top 3 nodes out of 4\\l"));
    assert_non_null(strstr(out, "style=\"dotted\""));
    assert_non_null(strstr(out, "tooltip=\"main ... leaf (900B)\""));
    assert_null(strstr(out, "\"mid"));
    free(out);
    profile_free(p);
}

static void test_render_errors(void **state)
{
    (void)state;
    char err[512];
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    /* not DOT: Graphviz fails, and says why in one message */
    int rc = dot_render("this is not dot", 15, "svg", true, f, err, sizeof(err));
    fclose(f);
    if (rc == -ENOENT) {
        free(buf);
        skip(); /* no Graphviz here */
    }
    assert_true(rc < 0);
    assert_non_null(strstr(err, "failed to execute dot"));
    assert_null(strchr(err, '\n'));
    free(buf);
    /* "dot" is the DOT text itself */
    f = open_memstream(&buf, &len);
    assert_int_equal(dot_render("digraph{}\n", 10, "dot", false, f, err, sizeof(err)), 0);
    fclose(f);
    assert_string_equal(buf, "digraph{}\n");
    free(buf);
    dot_command_t dc;
    assert_true(dot_command("web", &dc));
    assert_string_equal(dc.format, "svg");
    assert_true(dc.pan);
    assert_string_equal(dc.viewer, "browser");
    assert_true(dot_command("evince", &dc));
    assert_string_equal(dc.format, "pdf");
    assert_false(dot_command("top", &dc));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_trim_residual),
        cmocka_unit_test(test_render_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
