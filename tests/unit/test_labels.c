// links: src/runtime/labels.c src/runtime/arena.c src/runtime/rt.c profile
/* test_labels.c — the label sets of cprof_labels_push/pop: nesting, a key
 * pushed again replacing its value, one set id for the same pairs pushed
 * in any order, interning, the bounds (and the pop that still undoes a
 * push past them), per-thread sets, concurrent interning, and the pprof
 * labels written from a set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cprof.h"
#include "runtime/labels.h"

/* "k=v,k=v" of the set id, sorted as stored. */
static const char *pairs_of(uint32_t id)
{
    static char buf[4096];
    const labelset_t *s = labels_get(id);
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; s && i < s->n; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", i ? "," : "", s->pairs[i].key,
                              s->pairs[i].value);
    return buf;
}

static void test_nesting(void **state)
{
    (void)state;
    assert_int_equal(labels_now(), 0);
    assert_int_equal(cprof_labels_pop(), -ENOENT);
    /* A failed push changes nothing and is undone by its pop. */
    assert_int_equal(cprof_labels_push("worker", "1"), 0);
    uint32_t w = labels_now();
    assert_int_equal(cprof_labels_push(NULL, "v"), -EINVAL);
    assert_int_equal(cprof_labels_push("k", NULL), -EINVAL);
    assert_int_equal(labels_now(), w);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), w);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), 0);
    assert_int_equal(cprof_labels_push("worker", "1"), 0);
    uint32_t outer = labels_now();
    assert_int_not_equal(outer, 0);
    assert_string_equal(pairs_of(outer), "worker=1");
    assert_int_equal(cprof_labels_push("kind", "a"), 0);
    assert_string_equal(pairs_of(labels_now()), "kind=a,worker=1");
    assert_int_equal(cprof_labels_push("kind", "b"), 0); /* replaces, as Go's WithLabels */
    assert_string_equal(pairs_of(labels_now()), "kind=b,worker=1");
    assert_int_equal(cprof_labels_pop(), 0);
    assert_string_equal(pairs_of(labels_now()), "kind=a,worker=1");
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), outer);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), 0);
    assert_int_equal(cprof_labels_pop(), -ENOENT);
}

static void test_interning(void **state)
{
    (void)state;
    /* The same pushes find the same nodes: the table does not grow. */
    cprof_labels_push("x", "1");
    cprof_labels_push("y", "2");
    uint32_t xy = labels_now(), n = labels_count();
    cprof_labels_pop();
    cprof_labels_pop();
    cprof_labels_push("x", "1");
    cprof_labels_push("y", "2");
    assert_int_equal(labels_now(), xy);
    assert_int_equal(labels_count(), n);
    cprof_labels_pop();
    cprof_labels_pop();
    /* The same pairs in another order: new nodes, the same set. */
    cprof_labels_push("y", "2");
    cprof_labels_push("x", "1");
    assert_int_equal(labels_now(), xy);
    assert_int_equal(labels_count(), n + 2);
    cprof_labels_pop();
    cprof_labels_pop();
    /* A prefix of a key is another key; sorting is by bytes. */
    cprof_labels_push("ab", "1");
    cprof_labels_push("a", "2");
    cprof_labels_push("abc", "3");
    cprof_labels_push("b", "4");
    assert_string_equal(pairs_of(labels_now()), "a=2,ab=1,abc=3,b=4");
    for (int i = 0; i < 4; i++)
        cprof_labels_pop();
    assert_int_equal(labels_get(0), NULL);
    assert_int_equal(labels_get(LABELS_MAX_NODES + 5), NULL);
}

static void test_bounds(void **state)
{
    (void)state;
    char long_value[LABELS_MAX_LEN + 100];
    memset(long_value, 'v', sizeof(long_value) - 1);
    long_value[sizeof(long_value) - 1] = '\0';
    assert_int_equal(cprof_labels_push("long", long_value), 0);
    assert_int_equal(strlen(labels_get(labels_now())->pairs[0].value), LABELS_MAX_LEN);
    cprof_labels_pop();
    /* Too many pairs: the labels stay, the pops still match the pushes. */
    char key[16];
    for (int i = 0; i < LABELS_MAX_PAIRS; i++) {
        snprintf(key, sizeof(key), "k%02d", i);
        assert_int_equal(cprof_labels_push(key, "v"), 0);
    }
    uint32_t full = labels_now();
    assert_int_equal(labels_get(full)->n, LABELS_MAX_PAIRS);
    assert_int_equal(cprof_labels_push("one", "more"), -ENOSPC);
    assert_int_equal(cprof_labels_push("k00", "w"), -ENOSPC); /* under a failed push */
    assert_int_equal(labels_now(), full);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), full);
    for (int i = 0; i < LABELS_MAX_PAIRS; i++)
        assert_int_equal(cprof_labels_pop(), 0);
    assert_int_equal(labels_now(), 0);
}

static uint32_t seen[4];

static void *pusher(void *arg)
{
    intptr_t k = (intptr_t)arg;
    assert_int_equal(labels_now(), 0); /* nothing from the main thread */
    uint32_t first = 0;
    char v[16];
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 50; i++) {
            snprintf(v, sizeof(v), "%d", i);
            cprof_labels_push("shared", v);
            cprof_labels_push("thread", k % 2 ? "odd" : "even");
            if (i == 7 && !first)
                first = labels_now();
            assert_int_equal(labels_now() == first, i == 7);
            cprof_labels_pop();
            cprof_labels_pop();
        }
    }
    seen[k] = first;
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    cprof_labels_push("main", "only");
    uint32_t mine = labels_now();
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pusher, (void *)i), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(labels_now(), mine);
    cprof_labels_pop();
    /* Threads that pushed the same pairs share the set. */
    assert_int_equal(seen[0], seen[2]);
    assert_int_equal(seen[1], seen[3]);
    assert_int_not_equal(seen[0], seen[1]);
    assert_string_equal(pairs_of(seen[1]), "shared=7,thread=odd");
}

static void test_profile(void **state)
{
    (void)state;
    cprof_labels_push("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736");
    cprof_labels_push("span_id", "00f067aa0ba902b7");
    profile_t *p = profile_new();
    assert_non_null(p);
    profile_label_t l[LABELS_MAX_PAIRS];
    assert_int_equal(labels_to_profile(p, labels_now(), l, LABELS_MAX_PAIRS), 2);
    assert_string_equal(p->strings[l[0].key], "span_id");
    assert_string_equal(p->strings[l[0].str], "00f067aa0ba902b7");
    assert_string_equal(p->strings[l[1].key], "trace_id");
    assert_int_equal(l[1].num, 0);
    assert_int_equal(labels_to_profile(p, 0, l, LABELS_MAX_PAIRS), 0);
    assert_int_equal(labels_to_profile(p, labels_now(), l, 1), 1); /* room for one */
    char text[128];
    assert_int_equal(labels_format(labels_now(), text, sizeof(text)), 66);
    assert_string_equal(text, "span_id=00f067aa0ba902b7 trace_id=4bf92f3577b34da6a3ce929d0e0e4736");
    assert_int_equal(labels_format(labels_now(), text, 16), 15); /* cut */
    assert_string_equal(text, "span_id=00f067a");
    assert_int_equal(labels_format(0, text, sizeof(text)), 0);
    assert_string_equal(text, "");
    profile_free(p);
    cprof_labels_pop();
    cprof_labels_pop();
}

/* Last: fills the table. Each push past the bound fails and is undone by
 * its pop; the sets made before keep working. */
static void test_table_full(void **state)
{
    (void)state;
    char v[16];
    int made = 0, refused = 0;
    for (unsigned i = 0; i < LABELS_MAX_NODES + 10; i++) {
        snprintf(v, sizeof(v), "%u", i);
        int rc = cprof_labels_push("fill", v);
        if (rc == 0)
            made++;
        else if (rc == -ENOSPC)
            refused++;
        assert_int_equal(cprof_labels_pop(), 0);
    }
    assert_int_equal(labels_now(), 0);
    assert_true(refused >= 10);
    assert_int_equal(labels_count(), LABELS_MAX_NODES - 1);
    assert_int_equal(cprof_labels_push("fill", "0"), 0); /* interned before */
    assert_string_equal(pairs_of(labels_now()), "fill=0");
    cprof_labels_pop();
    (void)made;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting),  cmocka_unit_test(test_interning),
        cmocka_unit_test(test_bounds),   cmocka_unit_test(test_threads),
        cmocka_unit_test(test_profile),  cmocka_unit_test(test_table_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
