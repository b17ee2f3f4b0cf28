/* rustdemangle.h — Rust symbol names made readable, as go tool pprof shows
 * them (its demangler, ianlancetaylor/demangle, rust.go as Go 1.19 vendors
 * it):
 *   v0 names (RFC 2603, "_R...": rustc -C symbol-mangling-version=v0, and
 *   the standard library's own symbols in current toolchains): the full
 *   path with generic arguments, "<r::M as r::Maker>::make",
 *   "r::inner::boxed::<4096>"; a ".llvm.N" suffix dropped;
 *   legacy names ("_ZN" <length-prefixed parts> "17h" <16 hex digits> "E",
 *   rustc's default): the parts joined by "::", the "$LT$"-style escapes
 *   decoded, the hash dropped: "<r::M as r::Maker>::make".
 * Anything else (C++ names, malformed input) is not this module's.
 *
 * Bounded: recursion depth and output length are capped, so a hostile
 * name (back references that expand exponentially) fails instead of
 * exhausting the stack or memory.
 *
 * Threads: no state; safe from any thread. */
#ifndef CPROF_TOOL_RUSTDEMANGLE_H
#define CPROF_TOOL_RUSTDEMANGLE_H

#include <stdbool.h>

/* Whether sym has the legacy Rust form (a "_ZN" name ending in the
 * "17h<hash>E" part) that pprof tries as Rust before C++. */
bool rust_is_legacy(const char *sym);

/* The demangled name of a v0 or legacy Rust symbol: a new malloc'd string,
 * or NULL when sym is neither, is malformed, or memory ran out. */
char *rust_demangle(const char *sym);

#endif
