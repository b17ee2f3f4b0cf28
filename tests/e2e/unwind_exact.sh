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
# exit, after the report, are outside that part and not counted.) The cfi
# walk must have done most stacks itself and reused part of its last walk
# in many, and many heap samples must have found their bucket in the
# thread's memo (buckets.h), which the check compares with the table's at
# every sample (the cmp of the profiles with libunwind's, which has no
# memo, covers the totals, threads included). tests/progs/unwind_stacks then checks (cfi, exact, no crash) a
# library unloaded and another loaded at its address, through dlclose
# (and 70000 dlcloses more) and through the C library's own dlclose, which
# cprof does not see; and stacks the walk must leave to libunwind: a
# makecontext stack, a handler on a sigaltstack, a pthread_attr_setstack
# thread, a forked child.
# timeout: 600
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

gcc -std=gnu11 -g -O1 -fno-omit-frame-pointer -c -o "$T/a.o" "$PROGS/unwind_deep.c" &&
  gcc -std=gnu11 -g -O1 -fomit-frame-pointer -c -o "$T/b.o" "$PROGS/unwind_deep_nofp.c" &&
  g++ -g -O1 -c -o "$T/c.o" "$PROGS/unwind_deep_cxx.cc" &&
  g++ -o "$T/deep" "$T/a.o" "$T/b.o" "$T/c.o" -lpthread || fail "cannot build unwind_deep"
"$T/deep" all 2 || fail "plain run failed"

# run NAME MIN_COMPARED ENV...: one checked run of $PROG $ARGS. The
# report's fields: $4 compared, $7 mismatches, $11 cfi walks, $14
# fallbacks, $16 reused, $18 buckets from the memo.
PROG=$T/deep
run() {
  name=$1; min=$2; shift 2
  set -- CPROF_RATE=1 CPROF_UNWIND_CHECK=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" "$@"
  env "$@" LD_PRELOAD="$LIB" timeout 300 "$PROG" $ARGS > "$T/$name.out" 2> "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name: exit status $?"; }
  line=$(grep '^cprof: unwind check: [0-9]' "$T/$name.err") || { cat "$T/$name.err"; fail "$name: no check report"; }
  note "$name: $line"
  set -- $line
  [ "$7" = 0 ] || { head -20 "$T/$name.err"; fail "$name: $7 stacks differ from the full unwind"; }
  [ "$4" -ge "$min" ] || fail "$name: only $4 stacks compared (want $min)"
  # Also what is allocated after the report, at exit, and in a child
  # (not the fp walk's: outside its part of the program).
  [ "$name" = fp ] || ! grep -q 'differs from the full unwind' "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name: a stack differs"; }
  walks=${11} fallbacks=${14} reused=${16} memo=${18}
}

# cfi_share NAME MIN_WALKED_PERCENT MIN_REUSED_PERCENT MIN_MEMO_PERCENT: after a
# cfi run, the share of stacks cfi walked itself, of those that reused a last
# walk, and of those whose bucket came from the memo.
cfi_share() {
  total=$((walks + fallbacks))
  [ "$total" -gt 0 ] || fail "$1: no stack went through cfi"
  [ $((walks * 100)) -ge $(($2 * total)) ] ||
    fail "$1: cfi walked only $walks of $total stacks (want $2%)"
  [ $((reused * 100)) -ge $(($3 * total)) ] ||
    fail "$1: only $reused of $total stacks reused a last walk (want $3%)"
  [ $((memo * 100)) -ge $(($4 * total)) ] ||
    fail "$1: only $memo of $total buckets came from the memo (want $4%)"
}

# Each exact mode at the default depth and at a depth the recursion
# exceeds (walks cut at the maximum). At depth 12 nearly every stack is
# cut: their buckets come from the memo too, by the stack (buckets.c).
# Shares over 30 runs (the memo's conflicts move with ASLR): 64%-79% at
# depth 64, 83%-93% at depth 12.
ARGS="all 150"
for depth in 64 12; do
  for mode in libunwind cfi; do
    run $mode-$depth 40000 CPROF_UNWIND=$mode CPROF_DEPTH=$depth
    [ $mode = cfi ] && cfi_share $mode-$depth 95 50 $([ $depth = 12 ] && echo 70 || echo 25)
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
grep -q ' 0 truncated, ' "$T/fp.err" && fail "fp: no stack cut short at the start code?"

gcc -shared -fPIC -o "$T/liba.so" "$PROGS/unwind_reload.S" &&
  gcc -shared -fPIC -DLIB_B -o "$T/libb.so" "$PROGS/unwind_reload.S" &&
  gcc -std=gnu11 -g -O1 -o "$T/stacks" "$PROGS/unwind_stacks.c" -ldl -lpthread ||
  fail "cannot build unwind_stacks"
PROG=$T/stacks
# The memo is direct-mapped and keyed by addresses (buckets.c), so under
# ASLR some layouts put stacks the program alternates between in one
# entry, where they evict each other. The shares asked of these short
# runs are what every layout gives, not the usual one. reload: of 434
# stacks, 410 came from the memo in most of 1,500 runs, 372 in the worst
# seen here, 334 in a CI run; the 300 stacks of its loop, one stack, do
# whatever the layout (69%). stacks: 1,037-1,049 of 1,950 in most of 760
# runs, 669 (34%) in the worst.
for how in dlclose bypass; do
  ARGS="reload $T/liba.so $T/libb.so $how"
  run reload-$how 400 CPROF_UNWIND=cfi
  cfi_share reload-$how 95 50 65
  grep -q '^same address: yes$' "$T/reload-$how.out" ||
    { cat "$T/reload-$how.out"; fail "reload-$how: libb.so not loaded where liba.so was"; }
done
ARGS=stacks
run stacks 1500 CPROF_UNWIND=cfi
# The coroutine's and the handler's stacks are libunwind's, the rest cfi's.
cfi_share stacks 40 40 20
[ "$fallbacks" -ge 200 ] || fail "stacks: only $fallbacks fallbacks (the other stacks)"
exit 0
