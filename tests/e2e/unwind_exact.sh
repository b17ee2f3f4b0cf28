#!/bin/sh
# Stacks stay exact under every unwinder: tests/progs/unwind_deep (deep and
# mutual recursion, function pointers, alloca, parts with and without frame
# pointers, libstdc++ containers, a signal handler, threads) runs at
# CPROF_RATE=1 with CPROF_UNWIND_CHECK=1, which compares every captured
# stack with libunwind's slow step-by-step unwind of the same allocation.
# Each exact mode must show no mismatch over many stacks, and the profiles
# they write must have the same stacks (go tool pprof -traces). The
# frame-pointer walk runs the program's frame-pointer part only, where its
# stacks must be the full unwind's, cut short at most where the C library's
# start code (no frame pointers) begins. (The C library's own allocations at
# exit, after the report, are outside that part and not counted.)
# timeout: 600
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

gcc -std=gnu11 -g -O1 -fno-omit-frame-pointer -c -o "$T/a.o" "$PROGS/unwind_deep.c" &&
  gcc -std=gnu11 -g -O1 -fomit-frame-pointer -c -o "$T/b.o" "$PROGS/unwind_deep_nofp.c" &&
  g++ -g -O1 -c -o "$T/c.o" "$PROGS/unwind_deep_cxx.cc" &&
  g++ -o "$T/deep" "$T/a.o" "$T/b.o" "$T/c.o" -lpthread || fail "cannot build unwind_deep"
"$T/deep" all 2 || fail "plain run failed"

# run NAME MIN_COMPARED ENV... -- ARGS...: one checked run.
run() {
  name=$1; min=$2; shift 2
  set -- CPROF_RATE=1 CPROF_UNWIND_CHECK=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" "$@"
  env "$@" LD_PRELOAD="$LIB" timeout 300 "$T/deep" $ARGS 2> "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name: exit status $?"; }
  line=$(grep '^cprof: unwind check: [0-9]' "$T/$name.err") || { cat "$T/$name.err"; fail "$name: no check report"; }
  note "$name: $line"
  set -- $line
  [ "$7" = 0 ] || { head -20 "$T/$name.err"; fail "$name: $7 stacks differ from the full unwind"; }
  [ "$4" -ge "$min" ] || fail "$name: only $4 stacks compared (want $min)"
}

# Each exact mode at the default depth and at a depth the recursion
# exceeds (walks cut at the maximum).
ARGS="all 150"
for depth in 64 12; do
  for mode in libunwind cfi; do
    run $mode-$depth 40000 CPROF_UNWIND=$mode CPROF_DEPTH=$depth
    # Also what is allocated after the report, at exit.
    grep -q 'differs from the full unwind' "$T/$mode-$depth.err" &&
      { cat "$T/$mode-$depth.err"; fail "$mode-$depth: a stack differs"; }
    go tool pprof -traces -sample_index=alloc_space "$T/deep" "$T/$mode-$depth.pb.gz" 2>/dev/null |
      grep -v -e '^File:' -e '^Type:' -e '^Time:' -e '^Duration:' > "$T/$mode-$depth.traces"
    [ -s "$T/$mode-$depth.traces" ] || fail "$mode-$depth: no traces"
    cmp -s "$T/libunwind-$depth.traces" "$T/$mode-$depth.traces" ||
      { diff "$T/libunwind-$depth.traces" "$T/$mode-$depth.traces" | head -40
        fail "$mode-$depth: stacks differ from libunwind's"; }
  done
done

ARGS="fp 400"
run fp 5000 CPROF_UNWIND=fp
grep -q ' 0 truncated$' "$T/fp.err" && fail "fp: no stack cut short at the start code?"
exit 0
