// links: ui
/* test_settings.c — pprof's settings.json: saving writes Go's layout
 * (omitempty, two-space indent, Go's string and float encodings), reading
 * takes any valid JSON (unknown fields, escapes, other spacing), deleting
 * says pprof's "config X not found". webui_config.sh compares the file with
 * the one go tool pprof writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpname.h"
#include "tool/ui/settings.h"

static char dir[256], path[512];

static int setup(void **state)
{
    (void)state;
    tmpname(dir, sizeof(dir), "cprof-settings");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/pprof/settings.json", dir);
    return 0; /* settings_save makes pprof/, as pprof does */
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/pprof", dir);
    rmdir(sub);
    rmdir(dir);
    return 0;
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_save_layout(void **state)
{
    (void)state;
    config_t c;
    config_default(&c);
    char err[256];
    assert_int_equal(config_set(&c, "focus", "a<b&\"c\"", err, sizeof(err)), 0);
    assert_int_equal(config_set(&c, "nodefraction", "0.0000001", err, sizeof(err)), 0);
    assert_int_equal(config_set(&c, "trim", "false", err, sizeof(err)), 0);
    assert_int_equal(config_set(&c, "sample_index", "alloc_space", err, sizeof(err)), 0);
    assert_int_equal(settings_save(path, "x", &c, err, sizeof(err)), 0);
    assert_string_equal(slurp(path), "{\n"
                                     "  \"configs\": [\n"
                                     "    {\n"
                                     "      \"name\": \"x\",\n"
                                     "      \"unit\": \"minimum\",\n"
                                     "      \"sort\": \"flat\",\n"
                                     "      \"nodecount\": -1,\n"
                                     "      \"nodefraction\": 1e-7,\n"
                                     "      \"edgefraction\": 0.001,\n"
                                     "      \"focus\": \"a\\u003cb\\u0026\\\"c\\\"\",\n"
                                     "      \"granularity\": \"functions\"\n"
                                     "    }\n"
                                     "  ]\n"
                                     "}");
    settings_t s;
    assert_int_equal(settings_read(path, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0].cfg.focus, "a<b&\"c\"");
    assert_false(s.v[0].cfg.trim);
    assert_true(s.v[0].cfg.nodefraction == 1e-7);
    settings_free(&s);
    assert_int_equal(settings_delete(path, "y", err, sizeof(err)), -ENOENT);
    assert_string_equal(err, "config y not found");
    assert_int_equal(settings_delete(path, "x", err, sizeof(err)), 0);
    assert_string_equal(slurp(path), "{\n  \"configs\": []\n}");
    assert_int_equal(settings_save(path, "", &c, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "invalid config name");
    config_free(&c);
}

static void test_read_any_json(void **state)
{
    (void)state;
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/pprof", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"other\": {\"a\": [1, {\"b\": \"]}\"}]}, \"configs\":[{\"unknown\":[true,null],"
          "\"name\":\"\\u00e9\\ud83d\\ude00\",\"hide\":\"x\\ty\",\"call_tree\":true,"
          "\"nodecount\":12,\"edgefraction\":2.5E-3}, {\"name\":\"z\"}]}", f);
    fclose(f);
    settings_t s;
    char err[256];
    assert_int_equal(settings_read(path, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0].name, "\xc3\xa9\xf0\x9f\x98\x80");
    assert_string_equal(s.v[0].cfg.hide, "x\ty");
    assert_true(s.v[0].cfg.call_tree);
    assert_int_equal(s.v[0].cfg.nodecount, 12);
    assert_true(s.v[0].cfg.edgefraction == 0.0025);
    assert_false(s.v[1].cfg.trim); /* absent: zero, as Go decodes it */
    settings_free(&s);
    f = fopen(path, "w");
    fputs("{\"configs\": [", f);
    fclose(f);
    assert_int_equal(settings_read(path, &s, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "could not parse settings: invalid JSON");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_save_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_any_json, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
