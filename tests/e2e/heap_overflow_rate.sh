#!/bin/sh
# The overflow bucket (cprof_stack_table_full: samples past a full table,
# of any rate) is scaled by the last sampling rate other than 0: after
# cprof_set_rate(0) its estimate stays what it was (it was left unscaled:
# at CPROF_RATE=64 with 64-byte blocks, 0.63 of it). tests/progs/
# overflowrate.c fills the table under a small CPROF_MEMORY_LIMIT and
# writes the profile before and after cprof_set_rate(0).
# timeout: 300
. "$(dirname "$0")/../lib.sh"

command -v go >/dev/null 2>&1 || skip "go (golang-go) not installed"
cc_prog "$T/ovf" "$PROGS/overflowrate.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
CPROF_RATE=64 CPROF_MEMORY_LIMIT=4M "$T/ovf" "$T/a.pb.gz" "$T/b.pb.gz" > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "program failed"; }
[ "$(cat "$T/out")" = ok ] || fail "output: $(cat "$T/out")"
# The only complaint a 4 MiB limit may bring: the CFI tables do not fit.
grep -v "^cprof: cannot map .* for the cfi unwinder's tables" "$T/err" && fail "unexpected stderr"
for idx in alloc_objects alloc_space; do
  a=$(pprof_flat $idx "$T/a.pb.gz" | grep '^cprof_stack_table_full ')
  b=$(pprof_flat $idx "$T/b.pb.gz" | grep '^cprof_stack_table_full ')
  [ -n "$a" ] || fail "$idx: the table never filled"
  [ "$a" = "$b" ] || fail "$idx: overflow bucket '$a' at rate 64, '$b' after cprof_set_rate(0)"
  note "$idx: $a"
done
exit 0
