// links: ui
/* test_web.c — the web UI without a server: escaping (HTML, URL, JSON,
 * regexps), -http's host:port, URL parameters to configuration, links,
 * the views of a hand-built profile (status, rows, messages), the
 * memory-over-time series (time order, thinning, growth, stacks), and
 * which sources answer time windows. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/ui/memtime.h"
#include "tool/ui/web.h"
#include "tool/ui/webpage.h"
#include "tool/ui/webviews.h"
#include "tool/ui/webwindow.h"

static char *esc(void (*f)(sbuf_t *, const char *), const char *s)
{
    sbuf_t b = {0};
    f(&b, s);
    return sb_steal(&b);
}

static void test_escaping(void **state)
{
    (void)state;
    char *s = esc(web_html, "a<b>&\"c'd");
    assert_string_equal(s, "a&lt;b&gt;&amp;&#34;c&#39;d");
    free(s);
    sbuf_t b = {0};
    web_html_n(&b, "x\0y", 3);
    assert_string_equal(sb_cstr(&b), "x\xef\xbf\xbdy");
    sb_free(&b);
    s = esc(web_url_escape, "^a b(c|$)/é");
    assert_string_equal(s, "%5Ea%20b%28c%7C%24%29%2F%C3%A9");
    free(s);
    s = esc(web_json, "</script>\"\\\n\x01\xe2\x80\xa8ok");
    assert_string_equal(s, "\"\\u003c/script\\u003e\\\"\\\\\\n\\u0001\\u2028ok\"");
    free(s);
    sbuf_t q = {0};
    web_quotemeta(&q, "operator()<int>.x", true);
    assert_string_equal(sb_cstr(&q), "^operator\\(\\)<int>\\.x( |$)");
    sb_free(&q);
}

static void test_hostport(void **state)
{
    (void)state;
    char host[64], err[256];
    int port;
    assert_int_equal(web_split_hostport(":8080", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "localhost");
    assert_int_equal(port, 8080);
    assert_int_equal(web_split_hostport("127.0.0.1:0", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 0);
    assert_int_equal(web_split_hostport("[::1]:9", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9);
    assert_int_equal(web_split_hostport("h:", host, sizeof(host), &port, err, sizeof(err)), 0);
    assert_int_equal(port, 0);
    assert_int_equal(web_split_hostport("127.0.0.1", host, sizeof(host), &port, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "missing port in address"));
    assert_int_equal(web_split_hostport("a:b:1", host, sizeof(host), &port, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "too many colons"));
    assert_int_equal(web_split_hostport("h:70000", host, sizeof(host), &port, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "invalid port number"));
    assert_int_equal(web_split_hostport("[::1", host, sizeof(host), &port, err, sizeof(err)), -1);
}

/* --- a profile: main -> grow -> leaf, main -> other; values per snapshot ---------- */
/* (grow's sample has the label class=mmap, other's class=heap, the third none) */

static profile_t *make_profile(int64_t grow, int64_t other, int64_t time)
{
    profile_t *p = profile_new();
    assert_non_null(p);
    profile_add_sample_type(p, "alloc_space", "bytes");
    profile_add_sample_type(p, "inuse_space", "bytes");
    p->time_nanos = time;
    const char *names[] = {"main", "grow", "other", "a<b>"};
    for (int i = 0; i < 4; i++) {
        profile_function_t *f = profile_add_function(p);
        f->id = (uint64_t)i + 1;
        f->name = f->system_name = profile_intern(p, names[i]);
        f->filename = profile_intern(p, "x.c");
    }
    for (int i = 0; i < 4; i++) {
        profile_line_t l = {(uint64_t)i + 1, 10 * (i + 1)};
        profile_location_t *loc = profile_add_location(p, &l, 1);
        loc->id = (uint64_t)i + 1;
        loc->address = 0x1000 + (uint64_t)i * 16;
    }
    uint64_t s1[] = {2, 1}, s2[] = {3, 1}, s3[] = {4, 1};
    int64_t v1[] = {grow * 2, grow}, v2[] = {other * 2, other}, v3[] = {50, 50};
    profile_sample_t *sg = profile_add_sample(p, s1, 2, v1);
    assert_non_null(sg);
    profile_label_t lm = {.key = profile_intern(p, "class"), .str = profile_intern(p, "mmap")};
    assert_int_equal(profile_sample_add_label(p, sg, &lm), 0);
    profile_sample_t *so = profile_add_sample(p, s2, 2, v2);
    assert_non_null(so);
    profile_label_t lh = {.key = profile_intern(p, "class"), .str = profile_intern(p, "heap")};
    assert_int_equal(profile_sample_add_label(p, so, &lh), 0);
    assert_non_null(profile_add_sample(p, s3, 2, v3));
    assert_int_equal(profile_index(p), 0);
    return p;
}

static void render(web_req_t *q, web_view_t view, web_resp_t *r)
{
    q->view = view;
    memset(r, 0, sizeof(*r));
    webviews_render(q, r);
    assert_false(r->body.oom);
}

static void set_param(web_req_t *q, const char *name, const char *value)
{
    size_t n;
    const web_param_t *ps = web_params(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ps[i].param, name) == 0) {
            q->vals[i] = value;
            return;
        }
    fail_msg("no parameter %s", name);
}

static void test_config_and_links(void **state)
{
    (void)state;
    config_t base;
    config_default(&base);
    web_req_t q = {0};
    q.base_cfg = &base;
    set_param(&q, "f", "a b");
    set_param(&q, "si", "alloc_space");
    set_param(&q, "g", "lines");
    set_param(&q, "n", "7");
    config_t c;
    char err[512];
    assert_int_equal(web_config(&q, &c, err, sizeof(err)), 0);
    assert_string_equal(c.focus, "a b");
    assert_string_equal(c.sample_index, "alloc_space");
    assert_string_equal(c.granularity, "lines");
    assert_int_equal(c.nodecount, 7);
    config_free(&c);
    sbuf_t b = {0};
    web_query(&b, &q, "f", NULL);
    assert_string_equal(sb_cstr(&b), "?si=alloc_space&n=7&g=lines");
    sb_reset(&b);
    web_query(&b, &q, "i", "x|y");
    assert_string_equal(sb_cstr(&b), "?si=alloc_space&n=7&f=a%20b&i=x%7Cy&g=lines");
    sb_free(&b);
    set_param(&q, "n", "many");
    assert_int_equal(web_config(&q, &c, err, sizeof(err)), -1);
    assert_string_equal(err, "error setting config field nodecount: strconv.Atoi: parsing \"many\": "
                             "invalid syntax");
    set_param(&q, "n", NULL);
    set_param(&q, "nf", "nan");
    assert_int_equal(web_config(&q, &c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "nodefraction"));
    config_free(&base);
}

static void test_views(void **state)
{
    (void)state;
    config_t base;
    config_default(&base);
    profile_t *p = make_profile(1000, 300, 1);
    web_req_t q = {0};
    q.base_cfg = &base;
    q.p = p;
    web_resp_t r;

    render(&q, VIEW_TOP, &r);
    assert_int_equal(r.status, 200);
    const char *body = sb_cstr(&r.body);
    /* inuse_space (the last type) by default: grow first, then other */
    const char *g = strstr(body, "<tr data-name=\"grow\"");
    const char *o = strstr(body, "<tr data-name=\"other\"");
    assert_non_null(g);
    assert_non_null(o);
    assert_true(g < o);
    assert_non_null(strstr(body, "data-name=\"a&lt;b&gt;\""));
    assert_null(strstr(body, "<b>"));
    assert_non_null(strstr(body, "class=\"si current\" href=\"?si=inuse_space\""));
    sb_free(&r.body);

    set_param(&q, "si", "nope");
    render(&q, VIEW_TOP, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(sb_cstr(&r.body), "sample_index &#34;nope&#34; must be one of"));
    sb_free(&r.body);
    set_param(&q, "si", NULL);

    set_param(&q, "f", "(");
    render(&q, VIEW_TOP, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(sb_cstr(&r.body), "parsing focus regexp"));
    sb_free(&r.body);

    set_param(&q, "f", "zzz");
    render(&q, VIEW_TOP, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(sb_cstr(&r.body), "Focus expression matched no samples"));
    sb_free(&r.body);

    set_param(&q, "f", "grow");
    render(&q, VIEW_PEEK, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(sb_cstr(&r.body), "<pre id=\"text\" class=\"peek\">"));
    sb_free(&r.body);
    set_param(&q, "f", NULL);

    render(&q, VIEW_FLAME, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(sb_cstr(&r.body), "<script type=\"application/json\" id=\"page-data\">"));
    assert_null(strstr(sb_cstr(&r.body), "\"a<b>\""));
    sb_free(&r.body);

    render(&q, VIEW_MEMORY, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(sb_cstr(&r.body), "several heap profiles"));
    sb_free(&r.body);

    /* the breakdown: each class's share, linked to its anchored tagfocus */
    set_param(&q, "si", "inuse_space");
    render(&q, VIEW_BREAKDOWN, &r);
    assert_int_equal(r.status, 200);
    const char *bd = sb_cstr(&r.body);
    assert_non_null(strstr(bd, "<tr data-class=\"mmap\" data-value=\"1000\">"));
    assert_non_null(strstr(bd, "<tr data-class=\"heap\" data-value=\"300\">"));
    assert_non_null(strstr(bd, "<tr data-class=\"\" data-value=\"50\">"));
    assert_non_null(strstr(bd, "href=\"./flamegraph?si=inuse_space&tf=class%3D%5Emmap%28%20%7C%24%29\""));
    sb_free(&r.body);
    set_param(&q, "by", "thread");
    render(&q, VIEW_BREAKDOWN, &r);
    assert_non_null(strstr(sb_cstr(&r.body), "No sample has the label <code>thread</code>"));
    sb_free(&r.body);
    set_param(&q, "by", NULL);
    set_param(&q, "si", NULL);
    assert_int_equal(web_view_of("breakdown"), VIEW_BREAKDOWN);

    render(&q, VIEW_DOWNLOAD, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/vnd.google.protobuf+gzip");
    assert_true(r.body.len > 20 && (unsigned char)r.body.s[0] == 0x1f);
    sb_free(&r.body);

    render(&q, VIEW_NONE, &r);
    assert_int_equal(r.status, 404);
    sb_free(&r.body);
    assert_int_equal(web_view_of(""), VIEW_GRAPH);
    assert_int_equal(web_view_of("top"), VIEW_TOP);
    assert_int_equal(web_view_of("flamegraph"), VIEW_FLAME);
    assert_int_equal(web_view_of("top/"), VIEW_NONE);
    profile_free(p);
    config_free(&base);
}

static void test_series(void **state)
{
    (void)state;
    memseries_t s = {0};
    /* out of order; equal times keep arrival order */
    assert_int_equal(memseries_add(&s, make_profile(300, 10, 30), "c", false), 0);
    assert_int_equal(memseries_add(&s, make_profile(100, 10, 10), "a", false), 0);
    assert_int_equal(memseries_add(&s, make_profile(200, 10, 20), "b1", false), 0);
    assert_int_equal(memseries_add(&s, make_profile(200, 10, 20), "b2", false), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.snaps[0].name, "a");
    assert_string_equal(s.snaps[1].name, "b1");
    assert_string_equal(s.snaps[2].name, "b2");
    assert_string_equal(s.snaps[3].name, "c");

    config_t cfg;
    config_default(&cfg);
    config_set_str(&cfg.sample_index, "inuse_space");
    memtable_t t;
    FILE *msgs = fopen("/dev/null", "w");
    assert_int_equal(memtime_compute(&s, &cfg, "grow", NULL, msgs, &t), 0);
    assert_int_equal(t.n_snaps, 4);
    assert_string_equal(t.sample_type, "inuse_space");
    assert_true(t.n_sites >= 2);
    assert_string_equal(t.sites[0].name, "grow");
    assert_int_equal(t.sites[0].v[0], 100);
    assert_int_equal(t.sites[0].v[3], 300);
    assert_int_equal(t.sites[0].growth, 200);
    assert_int_equal(t.total[0], 100 + 10 + 50);
    assert_int_equal(t.n_stacks, 1);
    assert_string_equal(t.stacks[0].frames, "main\ngrow");
    assert_int_equal(t.stacks[0].growth, 200);
    memtable_free(&t);
    /* by a label: its values are the rows, the unlabelled samples one more */
    assert_int_equal(memtime_compute(&s, &cfg, NULL, "class", msgs, &t), 0);
    assert_int_equal(t.n_sites, 3);
    assert_string_equal(t.sites[0].name, "mmap");
    assert_int_equal(t.sites[0].v[0], 100);
    assert_int_equal(t.sites[0].v[3], 300);
    assert_int_equal(t.n_stacks, 0);
    for (size_t i = 1; i < 3; i++)
        assert_int_equal(t.sites[i].v[0], strcmp(t.sites[i].name, "heap") == 0 ? 10 : 50);
    assert_int_equal(t.total[3], 300 + 10 + 50);
    memtable_free(&t);
    /* the configuration's filters apply */
    config_set_str(&cfg.ignore, "grow");
    assert_int_equal(memtime_compute(&s, &cfg, NULL, NULL, msgs, &t), 0);
    for (size_t i = 0; i < t.n_sites; i++)
        assert_string_not_equal(t.sites[i].name, "grow");
    memtable_free(&t);
    config_set_str(&cfg.ignore, "(");
    assert_int_equal(memtime_compute(&s, &cfg, NULL, NULL, msgs, &t), -1);
    memtable_free(&t);
    fclose(msgs);
    config_free(&cfg);
    memseries_free(&s);

    /* thinning: past MEMSERIES_MAX, every other one goes; the first, the
     * last and the newest arrival stay */
    for (int i = 0; i <= MEMSERIES_MAX; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        assert_int_equal(memseries_add(&s, make_profile(i, 0, 1000 + i), name, false), 0);
    }
    assert_true(s.n <= MEMSERIES_MAX / 2 + 2);
    assert_string_equal(s.snaps[0].name, "s0");
    char last[16];
    snprintf(last, sizeof(last), "s%d", MEMSERIES_MAX);
    assert_string_equal(s.snaps[s.n - 1].name, last);
    for (size_t i = 1; i < s.n; i++)
        assert_true(s.snaps[i - 1].time_nanos < s.snaps[i].time_nanos);
    memseries_free(&s);
}

/* Windows come from a polled heap URL only; a spec cannot change the URL;
 * neither case reaches the network. */
static void test_windows(void **state)
{
    (void)state;
    char *url[] = {"http://127.0.0.1:1/debug/pprof/heap"};
    char *allocs[] = {"127.0.0.1:1/debug/pprof/allocs?gc=1"};
    char *file[] = {"heap.pb.gz"};
    source_opts_t s = {.sources = url, .n_sources = 1, .poll = 1};
    assert_true(webwindow_possible(&s));
    s.poll = 0;
    assert_false(webwindow_possible(&s));
    s.poll = 1;
    s.sources = allocs;
    assert_false(webwindow_possible(&s));
    s.sources = file;
    assert_false(webwindow_possible(&s));
    char msg[512];
    profile_t *p = (profile_t *)1;
    assert_int_equal(webwindow_get(&s, "1,2", &p, msg, sizeof(msg)), -ENODATA);
    assert_null(p);
    assert_non_null(strstr(msg, "these profiles come from files"));
    s.sources = url;
    assert_int_equal(webwindow_get(&s, "1,2&seconds=3", &p, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(webwindow_get(&s, "1,2,3", &p, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(webwindow_get(&s, "", &p, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "invalid window"));
    webwindow_free();

    /* the lifetime view of a profile without the label says so */
    config_t base;
    config_default(&base);
    web_req_t q = {0};
    q.base_cfg = &base;
    q.p = make_profile(1000, 300, 1);
    web_resp_t r;
    render(&q, VIEW_LIFETIMES, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(sb_cstr(&r.body), "No sample with a lifetime here"));
    sb_free(&r.body);
    render(&q, VIEW_TOP, &r); /* not offered in the menu */
    assert_null(strstr(sb_cstr(&r.body), "id=\"lifetimesbtn\""));
    sb_free(&r.body);
    assert_int_equal(web_view_of("lifetimes"), VIEW_LIFETIMES);
    profile_free(q.p);
    config_free(&base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),  cmocka_unit_test(test_hostport),
        cmocka_unit_test(test_config_and_links), cmocka_unit_test(test_views),
        cmocka_unit_test(test_series),    cmocka_unit_test(test_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
