// links: symbolize
/* test_rustdemangle.c — Rust symbol names, v0 and legacy.
 *
 * The symbols are real: taken with nm from a program built by rustc 1.95
 * (tests/progs/symbolize_rust.rs, legacy and -C symbol-mangling-version=v0),
 * its standard library and rustc's own librustc_driver; the expected names
 * are what Go 1.19's vendored ianlancetaylor/demangle (go tool pprof's
 * demangler) prints for them — except where noted, where c++filt agrees
 * with us. A few constructed ones cover punycode and const generics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tool/symbolize/demangle.h"
#include "tool/symbolize/rustdemangle.h"

static void expect(const char *sym, const char *want)
{
    char *d = rust_demangle(sym);
    if (!want) {
        if (d)
            fail_msg("%s: want no name, got %s", sym, d);
        return;
    }
    if (!d)
        fail_msg("%s: not demangled, want %s", sym, want);
    assert_string_equal(d, want);
    free(d);
}

static void test_v0(void **state)
{
    (void)state;
    expect("_RNvCs6GmmlP4bgsG_1r4main", "r::main");
    expect("_RNvMCs6GmmlP4bgsG_1rINtB2_6HolderyE4growB2_", "<r::Holder<u64>>::grow");
    expect("_RNvXs_Cs6GmmlP4bgsG_1rNtB4_1MNtB4_5Maker4make", "<r::M as r::Maker>::make");
    expect("_RINvNtCs6GmmlP4bgsG_1r5inner5boxedKj1000_EB4_", "r::inner::boxed::<4096>");
    expect("_RNCNvCs6GmmlP4bgsG_1r13closure_alloc0B3_", "r::closure_alloc::{closure#0}");
    /* An LLVM suffix is dropped. */
    expect("_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTllEE14reserve_rehashNCINvNtB8_"
           "3map11make_hasherllNtNtNtCsjrHSEGnQ3l9_3std4hash6random11RandomStateE0ECs6GmmlP4bgsG_"
           "1r.llvm.11613774612273707897",
           "<hashbrown::raw::RawTable<(i32, i32)>>::reserve_rehash::<hashbrown::map::make_hasher<"
           "i32, i32, std::hash::random::RandomState>::{closure#0}>");
    /* Shims, trait paths (Y), unit tuple arguments. */
    expect("_RNSNvYNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0INtNtNtCsgEmfK2I1SDS_4core3ops8"
           "function6FnOnceuE9call_once6vtableCs6GmmlP4bgsG_1r",
           "<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::"
           "{shim:vtable#0}");
    /* dyn with a binder, lifetimes, an associated type binding, markers. */
    expect("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_"
           "INtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6"
           "OutputuNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_",
           "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<"
           "(&'a std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + "
           "core::marker::Send>>");
    /* A fn pointer type with a binder and &mut. */
    expect("_RNvMs3_NtCsbEht8wFNRx7_5alloc7raw_vecINtB5_6RawVecFG1_QL2_INtNtCsaWJV4NmYLqe_18rustc_"
           "attr_parsing7context15FinalizeContextL1_L0_EEINtNtCs8NwYtU1Mohg_4core6option6Option"
           "NtNtNtCsdlM2EbGYIhh_9rustc_hir5attrs15data_structures13AttributeKindEE8grow_oneBZ_",
           "<alloc::raw_vec::RawVec<for<'a, 'b, 'c> fn(&'a mut rustc_attr_parsing::context::"
           "FinalizeContext<'b, 'c>) -> core::option::Option<rustc_hir::attrs::data_structures::"
           "AttributeKind>>>::grow_one");
    expect("_RINvNtCs8NwYtU1Mohg_4core9panicking13assert_failedNtCsaqPfKCrnYf6_13rustc_apfloat6"
           "StatusBM_ECs50vtQ9z3K53_16rustc_const_eval",
           "core::panicking::assert_failed::<rustc_apfloat::Status, rustc_apfloat::Status>");
    /* Constructed: a disambiguated crate, char constants, punycode. */
    expect("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
    expect("_RNvC6_123foo3bar", "123foo::bar");
    expect("_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKc2202_E",
           "<const_generic::Char<'\\u{2202}'>>");
    expect("_RNvC7mycrateu8gdel_5qa", "mycrate::g\xc3\xb6"
                                      "del");
}

static void test_legacy(void **state)
{
    (void)state;
    expect("_ZN1r4main17h086b0cfd890a8ea9E", "r::main");
    expect("_ZN1r15Holder$LT$T$GT$4grow17hb746a14f02181e5aE", "r::Holder<T>::grow");
    expect("_ZN33_$LT$r..M$u20$as$u20$r..Maker$GT$4make17h565b5ca81593e9b6E",
           "<r::M as r::Maker>::make");
    expect("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17ha86af84d9cc65291E",
           "std::rt::lang_start::{{closure}}");
    expect("_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17h76111196bd863648E",
           "alloc::raw_vec::RawVec<T,A>::grow_one");
    expect("_ZN4core3ptr65drop_in_place$LT$alloc..vec..Vec$LT$alloc..string..String$GT$$GT$"
           "17h1aff18789bca12a8E",
           "core::ptr::drop_in_place<alloc::vec::Vec<alloc::string::String>>");
    expect("_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17h8cd7334c04bbbe77E.llvm."
           "7989666008379759713",
           "hashbrown::raw::RawTable<T,A>::reserve_rehash");
    /* go tool pprof drops one of the two underscores (it reads the first
     * for a separator); c++filt and rustc-demangle keep both. */
    expect("_ZN3std3sys9backtrace28__rust_begin_short_backtrace17hb8e0473d96dacc95E",
           "std::sys::backtrace::__rust_begin_short_backtrace");
    /* Not Rust: the hash part is missing, not hex, or too uniform. */
    assert_false(rust_is_legacy("_ZN2ns5Klass6methodEi"));
    expect("_ZN1r4main17h086b0cfd890a8eX9E", NULL);
    expect("_ZN3foo17h0000000000000000E", NULL);
}

/* Through demangle_symbol: Rust before C++, the same name in every mode
 * but none. */
static void test_modes(void **state)
{
    (void)state;
    static const char *const syms[][2] = {
        {"_ZN33_$LT$r..M$u20$as$u20$r..Maker$GT$4make17h565b5ca81593e9b6E",
         "<r::M as r::Maker>::make"},
        {"_RINvNtCs6GmmlP4bgsG_1r5inner5boxedKj1000_EB4_", "r::inner::boxed::<4096>"},
    };
    for (size_t i = 0; i < 2; i++) {
        for (int m = DEMANGLE_DEFAULT; m <= DEMANGLE_FULL; m++) {
            char *d = demangle_symbol(syms[i][0], (demangle_mode_t)m);
            assert_non_null(d);
            assert_string_equal(d, syms[i][1]);
            free(d);
        }
        assert_null(demangle_symbol(syms[i][0], DEMANGLE_NONE));
        assert_true(demangle_is_mangled(syms[i][0]));
    }
    /* A legacy-looking name whose hash is not one stays C++. */
    char *d = demangle_symbol("_ZN1r4main17h086b0cfd890a8eX9E", DEMANGLE_DEFAULT);
    assert_non_null(d);
    assert_string_equal(d, "r::main::h086b0cfd890a8eX9");
    free(d);
    assert_false(demangle_is_mangled("main"));
}

/* Malformed and hostile names fail cleanly, in bounded time and memory. */
static void test_hostile(void **state)
{
    (void)state;
    const char *full = "_RNvXs_Cs6GmmlP4bgsG_1rNtB4_1MNtB4_5Maker4make";
    char buf[128];
    for (size_t n = 2; n < strlen(full); n++) { /* every truncation */
        memcpy(buf, full, n);
        buf[n] = '\0';
        free(rust_demangle(buf));
    }
    expect("_R", NULL);
    expect("_R0NvC1a1b", NULL);     /* an encoding version */
    expect("_RINvC1a1bB99_E", NULL); /* a back reference forward */
    expect("_RCNvNtC3std3sys", NULL); /* an empty crate name */
    expect("_RNvC3abc3de$", NULL);  /* a byte no identifier has */
    /* Back references doubling the output 40 times: past the output cap. */
    char big[4096] = "_RINvC1a1fTuuE";
    size_t prev = 8; /* offset of "TuuE" after "_R" */
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (int i = 0; i < 40; i++) {
        size_t off = strlen(big) - 2;
        char ref[16];
        size_t v = prev - 1, k = 0;
        char rev[8];
        do
            rev[k++] = digits[v % 62];
        while ((v /= 62) != 0);
        size_t r = 0;
        while (k)
            ref[r++] = rev[--k];
        ref[r++] = '_';
        ref[r] = '\0';
        strcat(big, "TB");
        strcat(big, ref);
        strcat(big, "B");
        strcat(big, ref);
        strcat(big, "E");
        prev = off;
    }
    strcat(big, "E");
    expect(big, NULL);
    /* Nesting deeper than the recursion cap. */
    char deep[8192] = "_R";
    for (int i = 0; i < 2000; i++)
        strcat(deep, "N");
    strcat(deep, "C1a");
    for (int i = 0; i < 2000; i++)
        strcat(deep, "1b");
    expect(deep, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v0),
        cmocka_unit_test(test_legacy),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
