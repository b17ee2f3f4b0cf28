// links: tests/gen/gen.c profile
/* test_legacy.c — the legacy formats: Go's heap ?debug=1 text (unbiasing,
 * two vs four sample types, heap_v2, address - 1, bytes label), gperftools'
 * heapprofile with MAPPED_LIBRARIES (mapping merge, main binary first),
 * growthz, goroutine count profiles, mutex/contention text, the binary CPU
 * profile in four word formats, threadz, errors and hostile mutations.
 * (Byte-for-byte agreement with go tool pprof is checked by
 * tests/e2e/profile_legacy.sh on real profiles.) */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gen/gen.h"
#include "profile/decode.h"
#include "profile/legacy.h"
#include "profile/parse.h"

static profile_t *parse_ok(const void *d, size_t n)
{
    profile_t *p = NULL;
    char err[256] = "";
    if (profile_parse(d, n, &p, err, sizeof(err)) != 0)
        fail_msg("parse failed: %s", err);
    return p;
}

static profile_t *parse_str(const char *s)
{
    return parse_ok(s, strlen(s));
}

static void parse_fails(const char *s, const char *want)
{
    profile_t *p = (profile_t *)1;
    char err[256] = "";
    if (profile_parse((const uint8_t *)s, strlen(s), &p, err, sizeof(err)) >= 0)
        fail_msg("parse succeeded, wanted \"%s\"", want);
    assert_null(p);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
}

static const char *str(const profile_t *p, int64_t i)
{
    return p->strings[i];
}

static void assert_types(const profile_t *p, const char *const *names, size_t n)
{
    assert_int_equal(p->n_sample_types, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(str(p, p->sample_types[i].type), names[i]);
}

static uint64_t loc_addr(const profile_t *p, const profile_sample_t *s, size_t i)
{
    const profile_location_t *l = profile_location_by_id(p, s->location_ids[i]);
    assert_non_null(l);
    return l->address;
}

static int64_t label_num(const profile_t *p, const profile_sample_t *s, const char *key)
{
    for (uint32_t i = 0; i < s->n_labels; i++)
        if (strcmp(str(p, s->labels[i].key), key) == 0)
            return s->labels[i].num;
    fail_msg("no label %s", key);
    return 0;
}

/* pprof's unbiasing, written independently. */
static void unbias(int64_t *count, int64_t *size, int64_t rate)
{
    double avg = (double)*size / (double)*count;
    double scale = 1 / (1 - exp(-avg / (double)rate));
    *count = (int64_t)((double)*count * scale);
    *size = (int64_t)((double)*size * scale);
}

static const char go_heap[] =
    "heap profile: 3: 3145728 [70: 3153728] @ heap/1048576\n"
    "3: 3145728 [3: 3145728] @ 0x4b5427 0x4b591a 0x437452 0x461181\n"
    "#\t0x4b5426\tmain.allocLarge+0x66\theapgo/main.go:31\n"
    "#\t0x4b5919\tmain.main+0x39\theapgo/main.go:81\n"
    "\n"
    "0: 0 [67: 8000] @ 0x4b56a5 0x4b5925\n"
    "#\t0x4b56a4\tmain.allocSmall+0x44\theapgo/main.go:54\n"
    "\n"
    "\n"
    "# runtime.MemStats\n"
    "# Alloc = 90040\n"
    "# PauseNs = [0 0 0]\n";

static void test_go_heap_text(void **state)
{
    (void)state;
    profile_t *p = parse_str(go_heap);
    static const char *const t4[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                     "inuse_space"};
    assert_types(p, t4, 4);
    assert_string_equal(str(p, p->period_type.type), "space");
    assert_string_equal(str(p, p->period_type.unit), "bytes");
    assert_int_equal(p->period, 524288); /* heap/N is twice the rate */
    assert_int_equal(p->n_samples, 2);
    int64_t c = 3, s = 3145728;
    unbias(&c, &s, 524288);
    const profile_sample_t *s0 = &p->samples[0];
    assert_int_equal(s0->values[0], c);
    assert_int_equal(s0->values[1], s);
    assert_int_equal(s0->values[2], c);
    assert_int_equal(s0->values[3], s);
    assert_int_equal(label_num(p, s0, "bytes"), 1048576);
    assert_int_equal(s0->n_location_ids, 4);
    assert_int_equal(loc_addr(p, s0, 0), 0x4b5426); /* every address - 1 */
    assert_int_equal(loc_addr(p, s0, 3), 0x461180);
    const profile_sample_t *s1 = &p->samples[1];
    c = 67;
    s = 8000;
    unbias(&c, &s, 524288);
    assert_int_equal(s1->values[0], c);
    assert_int_equal(s1->values[1], s);
    assert_int_equal(s1->values[2], 0);
    assert_int_equal(s1->values[3], 0);
    assert_int_equal(label_num(p, s1, "bytes"), 8000 / 67);
    /* No memory map: one catch-all mapping. */
    assert_int_equal(p->n_mappings, 1);
    assert_int_equal(p->mappings[0].memory_start, 0);
    assert_true(p->mappings[0].memory_limit == UINT64_MAX);
    assert_int_equal(p->locations[0].mapping_id, 1);
    assert_non_null(strstr(str(p, p->drop_frames), "|malloc|"));
    assert_non_null(strstr(str(p, p->drop_frames), "runtime\\..*"));
    assert_string_equal(str(p, p->keep_frames),
                        "runtime\\.panic|runtime\\.reflectcall|runtime\\.call[0-9]*");
    profile_free(p);
}

static void test_two_types_and_v2(void **state)
{
    (void)state;
    /* alloc totals equal inuse totals -> objects/space only (trap 10). */
    profile_t *p = parse_str("heap profile: 2: 200 [2: 200] @ heap_v2/100\n"
                             "2: 200 [2: 200] @ 0x1001 0x2001\n");
    static const char *const t2[] = {"objects", "space"};
    assert_types(p, t2, 2);
    assert_int_equal(p->period, 100); /* heap_v2 states the rate itself */
    int64_t c = 2, s = 200;
    unbias(&c, &s, 100);
    assert_int_equal(p->samples[0].values[0], c);
    assert_int_equal(p->samples[0].values[1], s);
    profile_free(p);

    /* alloc "0" also means two types. */
    p = parse_str("heap profile: 2: 200 [0: 0] @ heapprofile\n2: 200 [0: 0] @ 0x1001\n");
    assert_types(p, t2, 2);
    assert_int_equal(p->period, 1);
    assert_int_equal(p->samples[0].values[1], 200); /* no scaling */
    profile_free(p);

    p = parse_str("heap profile: 1: 10 [2: 20] @ growthz\n1: 10 [2: 20] @ 0x10\n");
    assert_types(p, t2, 2);
    assert_int_equal(p->period, 1);
    assert_int_equal(p->samples[0].values[0], 1);
    profile_free(p);
}

static const char gperf_heap[] =
    "heap profile:    3:    40960 [    5:    50000] @ heapprofile\n"
    "     2:    32768 [     2:    32768] @ 0x555555555100 0x555555555200 0x7ffff7a00100\n"
    "     1:     8192 [     3:    17232] @ 0x555555555300 0x7ffff7a00100\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "555555554000-555555555000 r--p 00000000 08:01 100 /tmp/prog\n"
    "555555555000-555555556000 r-xp 00001000 08:01 100 /tmp/prog\n"
    "555555556000-555555557000 r-xp 00002000 08:01 100 /tmp/prog\n"
    "7ffff7a00000-7ffff7b00000 r-xp 00026000 08:01 200 /usr/lib/libc.so.6\n"
    "7ffff7c00000-7ffff7c01000 r-xp 00000000 00:00 0 [vdso]\n"
    "7ffff7d00000-7ffff7d20000 r-xp 00001000 08:01 300 /usr/lib/ld-linux-x86-64.so.2\n";

static void test_gperftools_heap(void **state)
{
    (void)state;
    profile_t *p = parse_str(gperf_heap);
    static const char *const t4[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                     "inuse_space"};
    assert_types(p, t4, 4);
    assert_int_equal(p->period, 1);
    assert_int_equal(p->samples[0].values[3], 32768);
    assert_int_equal(p->samples[1].values[1], 17232);
    assert_int_equal(p->samples[1].values[3], 8192);
    assert_int_equal(label_num(p, &p->samples[1], "bytes"), 8192);
    /* Executable lines only, the two pieces of /tmp/prog merged. */
    assert_int_equal(p->n_mappings, 4);
    const profile_mapping_t *m = &p->mappings[0];
    assert_string_equal(str(p, m->filename), "/tmp/prog");
    assert_int_equal(m->memory_start, 0x555555555000);
    assert_int_equal(m->memory_limit, 0x555555557000);
    assert_int_equal(m->file_offset, 0x1000);
    assert_string_equal(str(p, p->mappings[1].filename), "/usr/lib/libc.so.6");
    assert_string_equal(str(p, p->mappings[2].filename), "[vdso]");
    const profile_location_t *l = profile_location_by_id(p, p->samples[0].location_ids[0]);
    assert_int_equal(l->address, 0x5555555550ff);
    assert_int_equal(l->mapping_id, 1);
    l = profile_location_by_id(p, p->samples[0].location_ids[2]);
    assert_int_equal(l->mapping_id, 2);
    profile_free(p);
}

static void test_main_binary_first(void **state)
{
    (void)state;
    /* Libraries listed first: the first non-library, non-[...] file moves
     * to mapping[0]; "(deleted)" is ignored for the decision. */
    profile_t *p = parse_str("heap profile: 1: 8 [1: 8] @ heapprofile\n"
                             "1: 8 [1: 8] @ 0x401001 0x7f0000001001\n"
                             "MAPPED_LIBRARIES:\n"
                             "7f0000000000-7f0000100000 r-xp 00000000 08:01 1 /lib/libx.so.1\n"
                             "7f0000200000-7f0000300000 r-xp 00000000 08:01 1 [stack]\n"
                             "400000-500000 r-xp 00000000 08:01 2 /opt/app (deleted)\n");
    assert_string_equal(str(p, p->mappings[0].filename), "/opt/app");
    assert_int_equal(p->mappings[0].id, 1);
    assert_string_equal(str(p, p->mappings[2].filename), "/lib/libx.so.1");
    profile_free(p);

    /* Brief map lines with offset and build id; $name substitution. */
    p = parse_str("heap profile: 1: 8 [1: 8] @ heapprofile\n"
                  "1: 8 [1: 8] @ 0x401001\n"
                  "--- Memory map: ---\n"
                  "dir=/opt\n"
                  "0x400000-0x500000 $dir/app (@1000) abcdef12\n");
    assert_int_equal(p->n_mappings, 1);
    assert_string_equal(str(p, p->mappings[0].filename), "/opt/app");
    assert_string_equal(str(p, p->mappings[0].build_id), "abcdef12");
    assert_int_equal(p->mappings[0].file_offset, 0x1000);
    profile_free(p);
}

static void test_heap_errors(void **state)
{
    (void)state;
    parse_fails("heap profile: 1: 8 [1: 8] @ heap/2\n0: 8 [1: 8] @ 0x1\n",
                "inuse count was 0 but inuse bytes was 8");
    parse_fails("heap profile: 1: 8 [1: 8] @ heap/2\nbogus line\n", "line 2 is not a sample");
    parse_fails("heap profile: 1: 8 [1: 8] @ heap/2\n1: 8 [1: 8] @ 0x12345678901234567\n",
                "does not fit in 64 bits");
    parse_fails("heap profile: 1: 8 [1: 8] @ heap/2\n1: 99999999999999999999 [1: 8] @ 0x1\n",
                "malformed heap sample");
    /* Unknown tag: not a heap profile at all. */
    parse_fails("heap profile: 1: 8 [1: 8] @ heapfoo/2\n", "unrecognized profile format");
}

static void test_goroutine_count(void **state)
{
    (void)state;
    profile_t *p = parse_str("goroutine profile: total 5\n"
                             "3 @ 0x43a0f6 0x4051ac 0x404f98\n"
                             "#\t0x43a0f5\truntime.gopark+0xd5\n"
                             "\n"
                             "2 @ 0x43a0f6 0x46c2a1\n"
                             "---\n"
                             "--- Memory map: ---\n"
                             "00400000-00500000 r-xp 00000000 fd:01 1 /usr/bin/server\n");
    static const char *const t[] = {"goroutine"};
    assert_types(p, t, 1);
    assert_string_equal(str(p, p->sample_types[0].unit), "count");
    assert_string_equal(str(p, p->period_type.type), "goroutine");
    assert_int_equal(p->period, 1);
    assert_int_equal(p->n_samples, 2);
    assert_int_equal(p->samples[0].values[0], 3);
    assert_int_equal(p->samples[1].values[0], 2);
    assert_int_equal(loc_addr(p, &p->samples[0], 0), 0x43a0f5);
    assert_int_equal(p->samples[1].location_ids[0], p->samples[0].location_ids[0]);
    assert_string_equal(str(p, p->mappings[0].filename), "/usr/bin/server");
    assert_non_null(strstr(str(p, p->drop_frames), "ProfileData::Add"));
    profile_free(p);

    p = parse_str("threadcreate profile: total 1\n1 @ 0x10 0x20\n");
    assert_string_equal(str(p, p->sample_types[0].type), "threadcreate");
    profile_free(p);

    parse_fails("goroutine profile: total 1\nnot a record\n", "malformed line");
}

static void test_contention(void **state)
{
    (void)state;
    profile_t *p = parse_str("--- mutex:\n"
                             "cycles/second=2000000000\n"
                             "sampling period=5\n"
                             "1000 3 @ 0x1001 0x2001\n"
                             "# comment\n"
                             "500 1 @ 0x3001\n");
    static const char *const t[] = {"contentions", "delay"};
    assert_types(p, t, 2);
    assert_int_equal(p->period, 5);
    /* [count * period, cycles * period / GHz] */
    assert_int_equal(p->samples[0].values[0], 15);
    assert_int_equal(p->samples[0].values[1], 2500);
    assert_int_equal(p->samples[1].values[1], 1250);
    assert_int_equal(loc_addr(p, &p->samples[0], 1), 0x2000);
    assert_non_null(strstr(str(p, p->drop_frames), "RecordLockProfileData"));
    profile_free(p);

    p = parse_str("--- contention:\ncycles/second=1000000000\n10 2 @ 0x11\n");
    assert_int_equal(p->period, 1);
    assert_int_equal(p->samples[0].values[0], 2);
    assert_int_equal(p->samples[0].values[1], 10);
    profile_free(p);

    /* C++ contentionz attributes Go's reader refuses. */
    parse_fails("--- contentionz 1 ---\nformat = java\n", "unrecognized");
}

/* Writes one word of the given width and byte order. */
static size_t put_word(uint8_t *d, uint64_t v, unsigned width, bool big)
{
    for (unsigned i = 0; i < width; i++)
        d[i] = (uint8_t)(v >> (8 * (big ? width - 1 - i : i)));
    return width;
}

static void test_cpu_binary(void **state)
{
    (void)state;
    static const struct {
        unsigned width;
        bool big;
    } fmts[] = {{8, false}, {8, true}, {4, false}, {4, true}};
    for (size_t f = 0; f < 4; f++) {
        unsigned w = fmts[f].width;
        bool big = fmts[f].big;
        uint8_t buf[4096];
        size_t n = 0;
        uint64_t hdr[] = {0, 3, 0, 10000, 0};
        for (size_t i = 0; i < 5; i++)
            n += put_word(buf + n, hdr[i], w, big);
        /* 40 samples; all but one have 0x9999 as second frame (the signal
         * handler frame pprof strips); one sample repeats its leaf. */
        for (int i = 0; i < 40; i++) {
            uint64_t rec[] = {1 + (uint64_t)(i % 3), 3, 0x1000 + (uint64_t)(i % 4), 0x999a,
                              0x2001};
            if (i == 39)
                rec[3] = 0x3001;
            for (size_t k = 0; k < 5; k++)
                n += put_word(buf + n, rec[k], w, big);
        }
        uint64_t dup[] = {7, 3, 0x5000, 0x999a, 0x5000};
        for (size_t k = 0; k < 5; k++)
            n += put_word(buf + n, dup[k], w, big);
        uint64_t eod[] = {0, 1, 0};
        for (size_t k = 0; k < 3; k++)
            n += put_word(buf + n, eod[k], w, big);
        const char *maps = "0-10000 r-xp 00000000 08:01 1 /bin/cpuprog\n";
        memcpy(buf + n, maps, strlen(maps));
        n += strlen(maps);

        profile_t *p = parse_ok(buf, n);
        static const char *const t[] = {"samples", "cpu"};
        assert_types(p, t, 2);
        assert_int_equal(p->period, 10000000); /* us -> ns */
        assert_string_equal(str(p, p->period_type.type), "cpu");
        assert_int_equal(p->n_samples, 41);
        const profile_sample_t *s = &p->samples[0];
        assert_int_equal(s->values[0], 1);
        assert_int_equal(s->values[1], 10000000);
        /* leaf exact, 0x999a - 1 stripped, 0x2001 - 1 kept */
        assert_int_equal(s->n_location_ids, 2);
        assert_int_equal(loc_addr(p, s, 0), 0x1000);
        assert_int_equal(loc_addr(p, s, 1), 0x2000);
        assert_int_equal(p->samples[39].n_location_ids, 3);
        /* leaf 0x5000 then 0x5000 - 1 (after the strip): the signal
         * handler duplicated the leaf, which is removed. */
        s = &p->samples[40];
        assert_int_equal(s->n_location_ids, 1);
        assert_int_equal(loc_addr(p, s, 0), 0x5000);
        assert_string_equal(str(p, p->mappings[0].filename), "/bin/cpuprog");
        profile_free(p);
    }
}

static void test_threadz(void **state)
{
    (void)state;
    profile_t *p = parse_str("--- threadz 2 ---\n"
                             "\n"
                             "--- Thread 7f01 (name: main/123) stack: ---\n"
                             "  PC: 0x1000 0x2001\n"
                             "--- Thread 7f02 (name: worker/124) stack: ---\n"
                             "  same as previous thread\n"
                             "--- Thread 7f03 (name: worker/125) stack: ---\n"
                             "  PC: 0x3000\n"
                             "---- no stack trace for thread 9 ----\n");
    assert_int_equal(p->n_samples, 2);
    assert_int_equal(p->samples[0].values[0], 2);
    assert_int_equal(loc_addr(p, &p->samples[0], 0), 0x1000);
    assert_int_equal(loc_addr(p, &p->samples[0], 1), 0x2000);
    profile_free(p);
}

static void test_unrecognized(void **state)
{
    (void)state;
    profile_t *p = (profile_t *)1;
    char err[128];
    assert_int_equal(legacy_parse((const uint8_t *)"hello\n", 6, &p, err, sizeof(err)),
                     LEGACY_UNRECOGNIZED);
    assert_null(p);
    assert_int_equal(legacy_parse((const uint8_t *)"", 0, &p, err, sizeof(err)),
                     LEGACY_UNRECOGNIZED);
}

/* Mutations of every legacy input: never a crash (ASan run too). */
static void try_parse(const uint8_t *d, size_t n)
{
    profile_t *p = NULL;
    char err[256] = "";
    if (profile_parse(d, n, &p, err, sizeof(err)) == 0) {
        assert_int_equal(profile_validate(p, err, sizeof(err)), 0);
        profile_free(p);
    } else {
        assert_null(p);
        assert_true(err[0] != '\0');
    }
}

static void test_hostile(void **state)
{
    (void)state;
    const char *inputs[] = {go_heap, gperf_heap,
                            "goroutine profile: total 5\n3 @ 0x43a0f6 0x4051ac\n---\n",
                            "--- mutex:\ncycles/second=2000000000\n1000 3 @ 0x1001 0x2001\n",
                            "--- threadz 1 ---\n--- Thread 1 (name: a/1) stack: ---\n0x1 0x2\n"};
    uint64_t s = 99;
    for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
        size_t n = strlen(inputs[k]);
        uint8_t *c = malloc(n + 1);
        for (size_t cut = 0; cut <= n; cut++)
            try_parse((const uint8_t *)inputs[k], cut);
        for (int iter = 0; iter < 200; iter++) {
            memcpy(c, inputs[k], n);
            for (int m = 0; m < 1 + iter % 4; m++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                size_t at = (size_t)(s >> 33) % n;
                static const char alphabet[] = "0123456789abcdefx:[]@ -\n#";
                c[at] = (iter % 7 == 0) ? (uint8_t)(s >> 20)
                                        : (uint8_t)alphabet[(s >> 40) % (sizeof(alphabet) - 1)];
            }
            try_parse(c, n);
        }
        free(c);
    }
    /* Binary CPU headers with absurd depths and truncations. */
    uint8_t buf[256];
    for (int iter = 0; iter < 600; iter++) {
        size_t n = 0;
        uint64_t hdr[] = {0, 3, 0, 1 + (uint64_t)iter, 0};
        for (size_t i = 0; i < 5; i++)
            n += put_word(buf + n, hdr[i], 8, false);
        while (n < sizeof(buf) - 8) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = (s >> 61) == 0 ? s : (s >> 58);
            n += put_word(buf + n, v, 8, false);
        }
        try_parse(buf, (size_t)iter % sizeof(buf));
    }
}

/* Hostile long lines: every matcher must stay linear (a POSIX regexec of
 * an unanchored pattern took minutes on 200 KB of digits). */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * n + tl + 1);
    memcpy(s, head, hl);
    for (size_t i = 0; i < n; i++)
        memcpy(s + hl + i * ul, unit, ul);
    memcpy(s + hl + ul * n, tail, tl + 1);
    return s;
}

static void test_long_lines(void **state)
{
    (void)state;
    const char *H = "heap profile: 1: 1 [1: 1] @ heap/2\n";
    struct {
        const char *head, *unit, *tail;
    } cases[] = {
        {H, "1", "\n"},
        {H, "1: ", "\n"},
        {H, "-1", "\n"},
        {H, "1: 1 [", "\n"},
        {H, "heap profile: 1: 1 [1: 1] @ ", "\n"},
        {"", "heap profile: ", "\n"},
        {"", "heap profile: 1: 1 [1: 1] ", "\n"},
        {H, "1: 1 [1: 1] @ 0x1 ", "\n"},
        {"--- mutex:\n", "1", "\n"},
        {"--- mutex:\n", "1 1 ", "\n"},
        {"--- mutex:\n", "1 ", " @\n"},
        {"goroutine profile: total 1\n1 @", " 0x1", "\n"},
        {"goroutine profile: total 1\n", "1", " @ 0x1\n"},
        {"", "--- Thread ", "\n"},
        {"", "--- Thread 1 (name: ", "/1) stack: ---\n"},
        {"--- threadz 1 ---\n--- Thread 1 (name: a/1) stack: ---\n", "0x1 ", "\n---\n"},
        {"", "--- threadz ", "\n"},
        {"heap profile: 1: 1 [1: 1] @ heap/2\n1: 1 [1: 1] @ 0x1\nMAPPED_LIBRARIES:\n",
         "1-2 r-xp 0 ", "\n"},
        {"heap profile: 1: 1 [1: 1] @ heap/2\n1: 1 [1: 1] @ 0x1\nMAPPED_LIBRARIES:\n",
         "0x1-0x2 /f (@1) ", "\n"},
        {"heap profile: 1: 1 [1: 1] @ heap/2\n1: 1 [1: 1] @ 0x1\nMAPPED_LIBRARIES:\n", "a:1] ",
         "\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = repeat(cases[i].head, cases[i].unit, 300000 / strlen(cases[i].unit),
                         cases[i].tail);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        try_parse((const uint8_t *)s, strlen(s));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (getenv("CPROF_TEST_VERBOSE"))
            fprintf(stderr, "case %zu: %.3fs\n", i,
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        free(s);
    }
}

/* Matching follows Go's leftmost-first, greedy regexps. */
static void test_match_semantics(void **state)
{
    (void)state;
    /* Unanchored: junk before the record; the leftmost '-' belongs to the
     * number. */
    profile_t *p = parse_str("heap profile: 1: 8 [1: 8] @ heapprofile\n"
                             "junk x-3: -8 [1: 8] @ 0x11 junk 0x22\n");
    assert_int_equal(p->n_sample_types, 2);
    assert_int_equal(p->samples[0].values[0], -3);
    assert_int_equal(p->samples[0].values[1], -8);
    assert_int_equal(p->samples[0].n_location_ids, 1); /* hex only from the @ list */
    profile_free(p);
    /* "12345 @": backtracking splits the digits as 1234 and 5. */
    p = parse_str("--- contention:\n12345 @ 0x11\n");
    assert_int_equal(p->samples[0].values[0], 5);
    assert_int_equal(p->samples[0].values[1], 1234);
    profile_free(p);
    /* heap tag is greedy over [_a-z0-9]: "heap1024" is an unknown tag. */
    parse_fails("heap profile: 1: 8 [1: 8] @ heap1024\n", "unrecognized profile format");
}

/* Many mappings (the bisection path) give the same assignment as pprof's
 * scan in order; overlapping ones fall back to the scan. */
static void test_many_mappings(void **state)
{
    (void)state;
    for (int overlap = 0; overlap < 2; overlap++) {
        char *s = malloc(1 << 16);
        size_t n = (size_t)sprintf(s, "heap profile: 1: 8 [1: 8] @ heapprofile\n1: 8 [1: 8] @");
        for (int i = 0; i < 40; i++) /* addresses in mappings 0, 3, 6, ... and one outside */
            n += (size_t)sprintf(s + n, " 0x%x", 0x100000 * (i * 3 % 40) + 0x101);
        n += (size_t)sprintf(s + n, " 0x7fffffff\nMAPPED_LIBRARIES:\n");
        for (int i = 39; i >= 0; i--) /* listed in reverse address order */
            n += (size_t)sprintf(s + n, "%x-%x r-xp 00000000 08:01 1 /lib/l%d.so\n",
                                 0x100000 * i, 0x100000 * (i + 1) + (overlap && i == 7 ? 0x200000 : 0),
                                 i);
        profile_t *p = parse_ok(s, n);
        assert_int_equal(p->n_mappings, 41); /* + catch-all */
        const profile_sample_t *sm = &p->samples[0];
        for (uint32_t i = 0; i < sm->n_location_ids; i++) {
            const profile_location_t *l = profile_location_by_id(p, sm->location_ids[i]);
            const profile_mapping_t *m = profile_mapping_by_id(p, l->mapping_id);
            assert_non_null(m);
            if (i == 40) {
                assert_int_equal(m->id, 41);
                continue;
            }
            /* The first listed mapping containing the address. */
            const profile_mapping_t *want = NULL;
            for (size_t k = 0; k < 40 && !want; k++)
                if (p->mappings[k].memory_start <= l->address &&
                    l->address < p->mappings[k].memory_limit)
                    want = &p->mappings[k];
            assert_ptr_equal(m, want);
        }
        profile_free(p);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_heap_text),
        cmocka_unit_test(test_two_types_and_v2),
        cmocka_unit_test(test_gperftools_heap),
        cmocka_unit_test(test_main_binary_first),
        cmocka_unit_test(test_heap_errors),
        cmocka_unit_test(test_goroutine_count),
        cmocka_unit_test(test_contention),
        cmocka_unit_test(test_cpu_binary),
        cmocka_unit_test(test_threadz),
        cmocka_unit_test(test_unrecognized),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_match_semantics),
        cmocka_unit_test(test_many_mappings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
