#!/bin/sh
# Rust programs under the runtime, named by cprof as go tool pprof's
# demangler names them (tests/progs/symbolize_rust.rs, built with rustc's
# legacy and v0 symbol manglings): legacy names with their escapes decoded
# and no "::h<hash>", v0 names ("_R...") demangled, with their generic
# arguments, in every demangling mode but none (linker names). The sizes
# tie names to the functions: make allocates 1 MiB, boxed::<4096> 32 KiB.
# (go tool pprof 1.19 itself names almost nothing in these binaries: lld's
# layout and Rust's DWARF; its names are compared in test_rustdemangle.)
# timeout: 240
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || skip "no $CPROF (run make)"
[ -f "$LIB" ] || skip "no $LIB (run make)"
RUSTC=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
[ -x "$RUSTC" ] || skip "skip: rustc not installed"

SRC=$PROGS/symbolize_rust.rs
# top MODE PROFILE [FLAGS]: "cum name" lines of cprof -top, cum in bytes.
top() {
  p=$1; shift
  "$CPROF" -top -nodefraction=0 -nodecount=100000 -unit=byte -sample_index=alloc_space "$@" "$p" \
    2>"$T/err" | awk 'started { v=$4; sub(/B$/, "", v); n=$6; for (i=7;i<=NF;i++) n=n" "$i; print v, n }
                     /^ *flat  flat%/ { started=1 }'
}
expect() { # FILE CUM NAME: a node named NAME (exactly) with cumulative CUM bytes ("-": any)
  awk -v c="$2" -v n="$3" '{ v=$1; $1=""; sub(/^ /, "") } $0 == n && (c == "-" || v == c) { ok=1 }
    END { exit !ok }' "$1" || { cat "$1" "$T/err"; fail "$(basename "$1"): no node '$3' with $2 bytes"; }
}

for mangling in legacy v0; do
  # legacy is stable rustc's default (asking for it needs -Z).
  set -- -g -O -C force-frame-pointers=yes --crate-name r -o "$T/$mangling"
  [ $mangling = v0 ] && set -- "$@" -C symbol-mangling-version=v0
  "$RUSTC" "$@" "$SRC" 2> "$T/build.err" || { cat "$T/build.err"; fail "rustc ($mangling)"; }
  "$T/$mangling" > "$T/plain.out" || fail "$mangling: plain run failed"
  timeout 60 env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$mangling.pb.gz" LD_PRELOAD="$LIB" \
    "$T/$mangling" > "$T/out"
  rc=$?
  [ $rc = 0 ] || fail "$mangling: exit status $rc under the preload"
  cmp -s "$T/plain.out" "$T/out" || { cat "$T/out"; fail "$mangling: output differs from a plain run"; }
  [ "$(cat "$T/out")" = "100000 1048576 4096 1000 1000" ] || fail "$mangling: the program's output"

  for mode in "" demangle=templates demangle=full; do
    top "$T/$mangling.pb.gz" ${mode:+-symbolize=$mode} > "$T/$mangling.top"
    expect "$T/$mangling.top" 1048576 "<r::M as r::Maker>::make"
    expect "$T/$mangling.top" - "r::main"
    if [ $mangling = legacy ]; then
      expect "$T/$mangling.top" 32768 "r::inner::boxed"
      expect "$T/$mangling.top" - "r::Holder<T>::grow"
    else
      expect "$T/$mangling.top" 32768 "r::inner::boxed::<4096>"
      expect "$T/$mangling.top" - "<r::Holder<u64>>::grow"
    fi
    # Nothing left mangled or half-decoded anywhere in the stacks.
    if grep -E '\$(LT|GT|u[0-9a-f]{2}|C)\$|::h[0-9a-f]{16}( |$)|(^| )_(ZN|R[A-Z])' "$T/$mangling.top"; then
      fail "$mangling ${mode:-default}: names left mangled"
    fi
  done
  top "$T/$mangling.pb.gz" -symbolize=demangle=none > "$T/$mangling.none"
  if [ $mangling = legacy ]; then
    grep -q ' _ZN1r4main17h[0-9a-f]\{16\}E$' "$T/$mangling.none" || { cat "$T/$mangling.none"; fail "none: legacy linker name"; }
  else
    grep -q ' _RNvCs[0-9A-Za-z]*_1r4main$' "$T/$mangling.none" || { cat "$T/$mangling.none"; fail "none: v0 linker name"; }
  fi
  note "$mangling: $(grep -c . "$T/$mangling.top") nodes"
done
