// links: src/runtime/lockprof.c src/runtime/profwriter.c src/runtime/outfile.c src/runtime/sitetab.c src/runtime/labels.c src/runtime/arena.c src/runtime/rt.c src/runtime/procmaps.c src/runtime/config.c src/runtime/symtab.c profile
/* test_lockprof.c — the mutex and block profiles' sampling (Go's 1-in-N
 * for contentions, blocksampled for delays) and their writers: the
 * protobuf (Go 1.19's types, period 1, mutex values times the rate) and the
 * "--- mutex:" / "--- contention:" texts, which the legacy parser (the one
 * the tool shares with pprof's rules) reads back into the same numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/parse.h"
#include "profile/profile.h"
#include "runtime/lockprof.h"

void cprof_stack_table_full(void)
{
}

__attribute__((noinline)) static void site_a(void)
{
    __asm__ volatile("");
}

__attribute__((noinline)) static void site_b(void)
{
    __asm__ volatile("");
}

static void test_mutex_sampling(void **state)
{
    (void)state;
    assert_false(lockprof_mutex_take(0));
    for (int i = 0; i < 1000; i++)
        assert_true(lockprof_mutex_take(1));
    int n = 0;
    for (int i = 0; i < 100000; i++)
        n += lockprof_mutex_take(10);
    /* binomial(100000, 0.1): sd ~ 95 */
    assert_in_range(n, 10000 - 600, 10000 + 600);
}

static void test_block_sampling(void **state)
{
    (void)state;
    assert_false(lockprof_block_take(1000000, 0));
    assert_true(lockprof_block_take(5000, 5000)); /* as long as the rate: always */
    assert_true(lockprof_block_take(1, 1));
    int n = 0;
    for (int i = 0; i < 100000; i++)
        n += lockprof_block_take(250, 1000); /* about a quarter */
    assert_in_range(n, 25000 - 1500, 25000 + 1500);
}

/* Reads what a writer wrote into fd (a temporary file) as a profile. */
static profile_t *read_back(FILE *f)
{
    fflush(f);
    long len = ftell(f);
    assert_true(len > 0);
    uint8_t *data = malloc((size_t)len);
    rewind(f);
    assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
    profile_t *p = NULL;
    char err[256] = "";
    int rc = profile_parse(data, (size_t)len, &p, err, sizeof(err));
    if (rc != 0)
        fail_msg("parse: %s", err);
    free(data);
    return p;
}

static const char *str(const profile_t *p, int64_t i)
{
    return p->strings[i];
}

static int64_t total(const profile_t *p, size_t col)
{
    int64_t t = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        t += p->samples[i].values[col];
    return t;
}

static void test_mutex_writer(void **state)
{
    (void)state;
    uintptr_t a[2] = {(uintptr_t)site_a + 1, (uintptr_t)site_b + 1};
    uintptr_t b[1] = {(uintptr_t)site_b + 1};
    lockprof_mutex_event(a, 2, 1000);
    lockprof_mutex_event(a, 2, 3000);
    lockprof_mutex_event(b, 1, 500);
    lockprof_set_mutex_rate(4);
    for (int debug = 0; debug <= 1; debug++) {
        FILE *f = tmpfile();
        assert_int_equal(lockprof_write_mutex(fileno(f), debug), 0);
        fseek(f, 0, SEEK_END);
        profile_t *p = read_back(f);
        assert_int_equal(p->n_sample_types, 2);
        assert_string_equal(str(p, p->sample_types[0].type), "contentions");
        assert_string_equal(str(p, p->sample_types[0].unit), "count");
        assert_string_equal(str(p, p->sample_types[1].type), "delay");
        assert_string_equal(str(p, p->sample_types[1].unit), "nanoseconds");
        assert_string_equal(str(p, p->period_type.type), "contentions");
        /* Go 1.19: period 1 in the protobuf and values times the rate; the
         * text says "sampling period=4" and the parser multiplies. */
        assert_int_equal(p->period, debug ? 4 : 1);
        assert_int_equal(p->n_samples, 2);
        assert_int_equal(total(p, 0), 3 * 4);
        assert_int_equal(total(p, 1), 4500 * 4);
        /* largest delay first */
        assert_int_equal(p->samples[0].values[1], 4000 * 4);
        assert_int_equal(p->samples[0].n_location_ids, 2);
        profile_free(p);
        fclose(f);
    }
    assert_int_equal(lockprof_count_mutex(), 2);
    lockprof_set_mutex_rate(0);
}

static void test_block_writer(void **state)
{
    (void)state;
    uintptr_t a[1] = {(uintptr_t)site_a + 1};
    lockprof_set_block_rate(1000);
    lockprof_block_event(a, 1, 20000);
    lockprof_block_event(a, 1, 700);
    for (int debug = 0; debug <= 1; debug++) {
        FILE *f = tmpfile();
        assert_int_equal(lockprof_write_block(fileno(f), debug), 0);
        fseek(f, 0, SEEK_END);
        profile_t *p = read_back(f);
        assert_int_equal(p->n_samples, 1);
        assert_int_equal(p->period, 1);
        assert_int_equal(p->samples[0].values[0], 2); /* not scaled */
        assert_int_equal(p->samples[0].values[1], 20700);
        profile_free(p);
        fclose(f);
    }
    FILE *f = tmpfile();
    lockprof_write_block(fileno(f), 1);
    rewind(f);
    char line[128];
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "--- contention:\n");
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "cycles/second=1000000000\n");
    assert_non_null(fgets(line, sizeof(line), f));
    assert_memory_equal(line, "20700 2 @ 0x", 12);
    fclose(f);
    lockprof_set_block_rate(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutex_sampling),
        cmocka_unit_test(test_block_sampling),
        cmocka_unit_test(test_mutex_writer),
        cmocka_unit_test(test_block_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
