// links: src/runtime/symtab.c -ldl
/* test_http_symtab.c — /debug/pprof/symbol's in-process symbol tables:
 * static functions of the main program (only in .symtab), exported ones,
 * functions of libc (its .dynsym), addresses inside a function, addresses
 * outside any, the preferred name among aliases, the same names looked
 * up many at once, and staleness after a dlopen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/symtab.h"

__attribute__((noinline)) static int local_function(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 3 + 1;
}

__attribute__((noinline)) int exported_function(int x)
{
    __asm__ volatile("" : "+r"(x));
    return local_function(x) + 2;
}

/* Two names for 64 bytes of code: alias_a, the name chosen, declares 4
 * bytes; the function reaches as far as its widest alias says. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl alias_a\n.type alias_a, @function\n"
        ".globl alias_b\n.type alias_b, @function\n"
        "alias_a:\nalias_b:\n"
        ".fill 64, 1, 0xc3\n"
        ".size alias_a, 4\n.size alias_b, 64\n");
extern char alias_a[];

static symtab_t *table;

static int setup(void **state)
{
    (void)state;
    table = symtab_build();
    return table ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    symtab_free(table);
    return 0;
}

static void expect_name(uint64_t addr, const char *want)
{
    const char *got = symtab_lookup(table, addr);
    assert_non_null(got);
    assert_string_equal(got, want);
}

static void test_main_program(void **state)
{
    (void)state;
    expect_name((uint64_t)(uintptr_t)local_function, "local_function");
    expect_name((uint64_t)(uintptr_t)local_function + 1, "local_function");
    expect_name((uint64_t)(uintptr_t)exported_function, "exported_function");
    expect_name((uint64_t)(uintptr_t)alias_a + 32, "alias_a");
}

static void test_libc(void **state)
{
    (void)state;
    /* The names a reader expects win over their aliases: getpid (weak)
     * over __getpid, free over its compat alias cfree. */
    expect_name((uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), "getpid");
    expect_name((uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "free"), "free");
    expect_name((uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "qsort") + 4, "qsort");
}

static void test_outside(void **state)
{
    (void)state;
    static char data[16];
    assert_null(symtab_lookup(table, (uint64_t)(uintptr_t)data));
    assert_null(symtab_lookup(table, 0));
    assert_null(symtab_lookup(table, 16));
    assert_null(symtab_lookup(table, UINT64_MAX));
}

typedef struct {
    uint64_t *addrs;
    size_t n, cap;
} addrs_t;

static void push(addrs_t *a, uint64_t addr)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 4096;
        a->addrs = realloc(a->addrs, a->cap * sizeof(*a->addrs));
        assert_non_null(a->addrs);
    }
    a->addrs[a->n++] = addr;
}

typedef struct {
    addrs_t a;
    uint64_t stride;
} sweep_t;

/* Every stride-th byte of each object's code (the main program's, libc's,
 * the vDSO's, whose symbols come from its loaded image) and 64 bytes
 * around it. 16: function starts, aliases, the padding after a sized
 * function, the space below an object's first symbol; a wide stride: many
 * symbols between two addresses. */
static int code_addrs(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    sweep_t *sw = arg;
    const char *name = info->dlpi_name;
    if (name[0] && !strstr(name, "libc.so") && !strstr(name, "vdso"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        for (uint64_t a = lo - 64; a < hi + 64; a += sw->stride)
            push(&sw->a, a);
    }
    return 0;
}

/* symtab_lookup_many finds what symtab_lookup_sym finds, in any order,
 * with repeats, in objects read or not; the second batch reads them. */
static void lookup_many(uint64_t stride)
{
    sweep_t sw = {{0}, stride};
    dl_iterate_phdr(code_addrs, &sw);
    addrs_t a = sw.a;
    assert_true(a.n > 100);
    push(&a, 0);
    push(&a, UINT64_MAX);
    push(&a, (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
    push(&a, (uint64_t)(uintptr_t)local_function + 1);
    for (size_t i = 0; i < a.n; i += 7) /* out of order */
        push(&a, a.addrs[a.n - 1 - i]);
    const char **names = calloc(a.n, sizeof(*names)), **wants = calloc(a.n, sizeof(*wants));
    uint64_t *starts = calloc(a.n, sizeof(*starts)), *want_starts = calloc(a.n, sizeof(*starts));
    assert_true(names && wants && starts && want_starts);
    symtab_t *fresh = symtab_build();
    assert_non_null(fresh);
    /* Round 0: objects unread, the batch passes over their symbols (the
     * single lookups go to the other table). Round 1: batched a second
     * time, they are read into fresh, so the names are the table's own,
     * the very strings the single lookups after the batch return. Round 2:
     * read before the batch. */
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < a.n && round != 1; i++)
            wants[i] = symtab_lookup_sym(round ? fresh : table, a.addrs[i], &want_starts[i]);
        assert_int_equal(symtab_lookup_many(fresh, a.addrs, a.n, names, starts), 0);
        for (size_t i = 0; i < a.n && round == 1; i++) {
            wants[i] = symtab_lookup_sym(fresh, a.addrs[i], &want_starts[i]);
            assert_ptr_equal(names[i], wants[i]);
        }
        size_t named = 0;
        for (size_t i = 0; i < a.n; i++) {
            if (!wants[i]) {
                assert_null(names[i]);
                continue;
            }
            assert_non_null(names[i]);
            assert_string_equal(names[i], wants[i]);
            assert_int_equal(starts[i], want_starts[i]);
            named++;
        }
        assert_true(named > a.n / 4);
    }
    symtab_free(fresh);
    free(names);
    free(wants);
    free(starts);
    free(want_starts);
    free(a.addrs);
}

static void test_lookup_many(void **state)
{
    (void)state;
    lookup_many(16);
    lookup_many(1009);
}

static void test_stale_after_dlopen(void **state)
{
    (void)state;
    assert_false(symtab_stale(table));
    /* A library this test has not loaded yet, and one of its functions. */
    static const char *const libs[][2] = {{"libbz2.so.1.0", "BZ2_bzlibVersion"},
                                          {"libz.so.1", "zlibVersion"},
                                          {"libresolv.so.2", "ns_initparse"}};
    void *h = NULL;
    const char *fn_name = NULL;
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !h; i++) {
        if (dlopen(libs[i][0], RTLD_NOW | RTLD_NOLOAD))
            continue;
        h = dlopen(libs[i][0], RTLD_NOW | RTLD_LOCAL);
        fn_name = libs[i][1];
    }
    if (!h)
        skip();
    assert_true(symtab_stale(table));
    symtab_t *fresh = symtab_build();
    assert_non_null(fresh);
    assert_false(symtab_stale(fresh));
    void *fn = dlsym(h, fn_name);
    assert_non_null(fn);
    assert_string_equal(symtab_lookup(fresh, (uint64_t)(uintptr_t)fn), fn_name);
    symtab_free(fresh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_program),
        cmocka_unit_test(test_libc),
        cmocka_unit_test(test_outside),
        cmocka_unit_test(test_lookup_many),
        cmocka_unit_test(test_stale_after_dlopen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
