// links: fetch
/* test_fetch.c — the URL rules of go tool pprof's adjustURL (expected
 * values printed by Go 1.19's net/url running cmd/pprof's adjustURL),
 * Go's duration format, saved-profile names, and remote symbolization
 * (pprof's symbolz) against a canned symbol server. The HTTP transfers
 * themselves are tested end to end: tests/e2e/tool_fetch.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tool/fetch/fetch.h"
#include "tool/fetch/symbolz.h"

static const struct {
    const char *source;
    int seconds, timeout;
    const char *url; /* "" = not a URL */
    long timeout_ms;
} url_cases[] = {
    {"http://localhost:6060/debug/pprof/heap", -1, -1, "http://localhost:6060/debug/pprof/heap", 60000},
    {"localhost:6060/debug/pprof/heap", -1, -1, "http://localhost:6060/debug/pprof/heap", 60000},
    {"localhost:6060", 30, -1, "http://localhost:6060/debug/pprof/profile?seconds=30", 45000},
    {"http://host", -1, -1, "http://host/debug/pprof/profile", 60000},
    {"http://host/", 5, -1, "http://host/debug/pprof/profile?seconds=5", 7500},
    {"http://host/debug/pprof/heap?seconds=3", -1, -1, "http://host/debug/pprof/heap?seconds=3", 4500},
    {"http://host/debug/pprof/heap?seconds=3", 7, -1, "http://host/debug/pprof/heap?seconds=7", 10500},
    {"http://host/debug/pprof/heap?seconds=3&seconds=4&gc=1", 2, 9, "http://host/debug/pprof/heap?gc=1&seconds=2", 9000},
    {"http://host/x?b=2&a=1&a=0&c", -1, -1, "http://host/x?a=1&a=0&b=2&c=", 60000},
    {"http://host/x?q=a+b%20c&z=%41/?", -1, -1, "http://host/x?q=a+b+c&z=A%2F%3F", 60000},
    {"http://host/x?bad=%zz&ok=1&semi=1;x=2", -1, -1, "http://host/x?ok=1", 60000},
    {"http://host/x?seconds=abc", -1, -1, "http://host/x?seconds=abc", 60000},
    {"http://host/x?seconds=-5", -1, -1, "http://host/x?seconds=-5", 60000},
    {"http://host/x?seconds=1", -1, -1, "http://host/x?seconds=1", 1500},
    {"http://host/x?", -1, -1, "http://host/x?", 60000},
    {"http://host/x#frag", -1, -1, "http://host/x#frag", 60000},
    {"http://u:p@host:1/a%20b/c d", -1, -1, "http://u:p@host:1/a%20b/c%20d", 60000},
    {"https+insecure://host:443/debug/pprof/heap", -1, -1, "https+insecure://host:443/debug/pprof/heap", 60000},
    {"/tmp/heap.pb.gz", -1, -1, "", 0},
    {"heap.pb.gz", -1, -1, "", 0},
    {"file:///tmp/x", -1, -1, "", 0},
    {"file.pb.gz:1", -1, -1, "http://file.pb.gz:1/debug/pprof/profile", 60000},
    {"dir/a:b", -1, -1, "", 0},
    {"C:foo", -1, -1, "", 0},
    {"host:port/x", -1, -1, "", 0},
    {"[::1]:8080/debug/pprof/heap", -1, -1, "http://[::1]:8080/debug/pprof/heap", 60000},
    {"http://[::1]:8080", -1, -1, "http://[::1]:8080/debug/pprof/profile", 60000},
    {"1.2.3.4:80", -1, -1, "http://1.2.3.4:80/debug/pprof/profile", 60000},
    {"", -1, -1, "", 0},
    {"http:/x", -1, -1, "http://http:/x", 60000},
    {"http:///x", -1, -1, "http://http:///x", 60000},
    {"a b:1/x", -1, -1, "", 0},
    {"ftp://host/x", -1, -1, "ftp://host/x", 60000},
    {"//host/x", -1, -1, "//host/x", 60000},
};

static void test_adjust_url(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
        fetch_target_t t;
        bool is = fetch_adjust_url(url_cases[i].source, url_cases[i].seconds,
                                   url_cases[i].timeout, &t);
        const char *got = is ? t.url : "";
        if (strcmp(got, url_cases[i].url) != 0 ||
            (is && t.timeout_ms != url_cases[i].timeout_ms)) {
            print_error("%s: got \"%s\" %ld, want \"%s\" %ld\n", url_cases[i].source, got,
                        is ? t.timeout_ms : 0L, url_cases[i].url, url_cases[i].timeout_ms);
            bad++;
        }
        if (is)
            fetch_target_free(&t);
    }
    assert_int_equal(bad, 0);
}

static void test_go_duration(void **state)
{
    (void)state;
    static const struct {
        long long ms;
        const char *want;
    } c[] = {{0, "0s"},         {500, "500ms"},      {1000, "1s"},       {1500, "1.5s"},
             {30000, "30s"},    {45000, "45s"},      {60000, "1m0s"},    {90000, "1m30s"},
             {3600000, "1h0m0s"}, {3723500, "1h2m3.5s"}, {-2000, "-2s"}};
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char b[32];
        fetch_go_duration(b, sizeof(b), c[i].ms);
        assert_string_equal(b, c[i].want);
    }
}

static profile_t *addr_profile(const char *file, const char *bid, uint64_t start)
{
    profile_t *p = profile_new();
    assert_int_equal(profile_add_sample_type(p, "inuse_space", "bytes"), 0);
    profile_mapping_t *m = profile_add_mapping(p);
    m->id = 1;
    m->memory_start = start;
    m->memory_limit = start + 0x10000;
    m->filename = profile_intern(p, file);
    m->build_id = profile_intern(p, bid);
    for (uint64_t i = 1; i <= 3; i++) {
        profile_location_t *l = profile_add_location(p, NULL, 0);
        l->id = i;
        l->mapping_id = 1;
        l->address = start + 0x100 * i;
    }
    uint64_t locs[] = {1, 2, 3};
    int64_t v = 100;
    assert_non_null(profile_add_sample(p, locs, 3, &v));
    assert_int_equal(profile_index(p), 0);
    return p;
}

static void test_save_prefix(void **state)
{
    (void)state;
    profile_t *p = addr_profile("/usr/local/bin/server", "", 0x1000);
    char b[256];
    fetch_save_prefix(p, b, sizeof(b));
    assert_string_equal(b, "pprof.server.inuse_space.");
    p->mappings[0].filename = 0;
    fetch_save_prefix(p, b, sizeof(b));
    assert_string_equal(b, "pprof.inuse_space.");
    profile_free(p);
}

static void test_symbolz_url(void **state)
{
    (void)state;
    static const char *const c[][2] = {
        {"http://h:1/debug/pprof/heap?seconds=5", "http://h:1/debug/pprof/symbol"},
        {"http://h/debug/pprof/profile", "http://h/debug/pprof/symbol"},
        {"http://h/x/debug/pprof/allocs#f", "http://h/x/debug/pprof/symbol#f"},
        {"http://h/pprof/heap", "http://h/pprof/symbol"},
        {"http://h/other/path", "http://h/symbolz"},
        {"https://u@h:443/a/pprof/contention", "https://u@h:443/a/pprof/symbol"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char *u = symbolz_url(c[i][0]);
        assert_non_null(u);
        assert_string_equal(u, c[i][1]);
        free(u);
    }
    assert_null(symbolz_url("/tmp/file"));
}

/* A symbol server: names every address it is asked about fn_<hex>, with
 * noise lines; remembers the last request. */
static char last_url[256], last_body[1024];
static int post_calls;

static int fake_post(const char *url, const char *body, size_t len, long timeout_ms, char **resp,
                     size_t *resplen, char *err, size_t errlen)
{
    (void)timeout_ms;
    (void)err;
    (void)errlen;
    post_calls++;
    snprintf(last_url, sizeof(last_url), "%s", url);
    snprintf(last_body, sizeof(last_body), "%.*s", (int)len, body);
    char *out = malloc(4096);
    size_t o = (size_t)sprintf(out, "num_symbols: 1\nnot a symbol line\n");
    char *copy = strndup(body, len), *save = NULL;
    for (char *w = strtok_r(copy, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
        unsigned long long a = strtoull(w, NULL, 16);
        o += (size_t)sprintf(out + o, "%#llx fn_%llx\n", a, a);
    }
    /* a last line without newline is not read (as pprof) */
    o += (size_t)sprintf(out + o, "0x1 unterminated");
    free(copy);
    *resp = out;
    *resplen = o;
    return 0;
}

static int failing_post(const char *url, const char *body, size_t len, long timeout_ms,
                        char **resp, size_t *resplen, char *err, size_t errlen)
{
    (void)body;
    (void)len;
    (void)timeout_ms;
    (void)resp;
    (void)resplen;
    snprintf(err, errlen, "http post %s: server response: 404 Not Found", url);
    return -EIO;
}

static const char *loc_name(const profile_t *p, uint64_t id)
{
    const profile_location_t *l = profile_location_by_id(p, id);
    if (!l || l->n_lines == 0)
        return NULL;
    const profile_function_t *f = profile_function_by_id(p, l->lines[0].function_id);
    return f ? p->strings[f->name] : NULL;
}

static void test_symbolz(void **state)
{
    (void)state;
    profile_t *p = addr_profile("/gone/prog", "abcd", 0x400000);
    symbolz_sources_t s = {0};
    assert_int_equal(symbolz_collect(p, "http://h:1/debug/pprof/heap?seconds=1", 1000, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0].key, "abcd");
    char err[256];
    post_calls = 0;
    assert_int_equal(symbolz_profile(p, NULL, &s, fake_post, err, sizeof(err)), 0);
    assert_int_equal(post_calls, 1);
    assert_string_equal(last_url, "http://h:1/debug/pprof/symbol");
    assert_string_equal(last_body, "0x400100+0x400200+0x400300");
    assert_string_equal(loc_name(p, 1), "fn_400100");
    assert_string_equal(loc_name(p, 3), "fn_400300");
    assert_true(p->mappings[0].has_functions);
    /* done: not asked again, unless forced */
    assert_int_equal(symbolz_profile(p, NULL, &s, fake_post, err, sizeof(err)), 0);
    assert_int_equal(post_calls, 1);
    /* local modes do not ask */
    p->mappings[0].has_functions = false;
    assert_int_equal(symbolz_profile(p, "local", &s, fake_post, err, sizeof(err)), 0);
    assert_int_equal(symbolz_profile(p, "none", &s, fake_post, err, sizeof(err)), 0);
    assert_int_equal(post_calls, 1);
    symbolz_sources_free(&s);
    profile_free(p);

    /* Merged at another address: the request uses the fetched profile's
     * addresses, the answer is moved back. */
    p = addr_profile("/gone/prog", "", 0x500000);
    assert_int_equal(symbolz_collect(p, "http://h/debug/pprof/heap", 1000, &s), 0);
    s.v[0].start = 0x600000;
    assert_int_equal(symbolz_profile(p, "remote", &s, fake_post, err, sizeof(err)), 0);
    assert_string_equal(last_body, "0x600100+0x600200+0x600300");
    assert_string_equal(loc_name(p, 2), "fn_600200");
    symbolz_sources_free(&s);
    profile_free(p);

    /* A mapping without file or build id is keyed by the URL, which is its
     * file until symbolz_unsource. */
    p = addr_profile("", "", 0x1000);
    assert_int_equal(symbolz_collect(p, "http://h/debug/pprof/heap", 1000, &s), 0);
    assert_string_equal(p->strings[p->mappings[0].filename], "http://h/debug/pprof/heap");
    assert_int_equal(symbolz_profile(p, NULL, &s, fake_post, err, sizeof(err)), 0);
    assert_string_equal(loc_name(p, 1), "fn_1100");
    symbolz_unsource(p);
    assert_int_equal(p->mappings[0].filename, 0);
    symbolz_sources_free(&s);
    profile_free(p);

    /* A failing symbol server fails the whole thing, with its message. */
    p = addr_profile("/gone/prog", "", 0x1000);
    assert_int_equal(symbolz_collect(p, "http://h/debug/pprof/heap", 1000, &s), 0);
    assert_int_equal(symbolz_profile(p, NULL, &s, failing_post, err, sizeof(err)), -EIO);
    assert_string_equal(err, "http post http://h/debug/pprof/symbol: server response: 404 Not Found");
    symbolz_sources_free(&s);
    profile_free(p);

    /* [vdso] and friends are never asked about. */
    p = addr_profile("[vdso]", "", 0x1000);
    post_calls = 0;
    assert_int_equal(symbolz_collect(p, "http://h/debug/pprof/heap", 1000, &s), 0);
    assert_int_equal(symbolz_profile(p, NULL, &s, fake_post, err, sizeof(err)), 0);
    assert_int_equal(post_calls, 0);
    symbolz_sources_free(&s);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adjust_url), cmocka_unit_test(test_go_duration),
        cmocka_unit_test(test_save_prefix), cmocka_unit_test(test_symbolz_url),
        cmocka_unit_test(test_symbolz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
