// links: src/runtime/symtab.c -ldl
/* test_http_symtab.c — /debug/pprof/symbol's in-process symbol tables:
 * static functions of the main program (only in .symtab), exported ones,
 * functions of libc (its .dynsym), addresses inside a function, addresses
 * outside any, the preferred name among aliases, and staleness after a
 * dlopen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
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
        cmocka_unit_test(test_stale_after_dlopen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
