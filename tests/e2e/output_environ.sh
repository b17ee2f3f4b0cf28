#!/bin/sh
# A program that sets its process title as redis-server, nginx and
# PostgreSQL do (tests/progs/proctitle.c: environ moved to the heap, the
# original environment strings overwritten) still gets every file its
# CPROF_* variables name, absolute or relative, written at exit: cprof
# keeps copies of the paths, not pointers into the environment.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go > /dev/null 2>&1 || skip "skip: go (golang-go) not installed"

cc_prog "$T/proctitle" "$PROGS/proctitle.c"
"$T/proctitle" some args > "$T/plain.out" 2> "$T/plain.err" || fail "plain run failed"
grep -q '^title set, sum [0-9]*, kept yes$' "$T/plain.out" || fail "plain run: unexpected output"

# check DIR PREFIX: runs the program from DIR with every output variable set
# to PREFIX.KIND; each file must be there and load.
check() {
  dir=$1 pre=$2
  ( cd "$dir" && env LD_PRELOAD="$LIB" CPROF_RATE=1 CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 \
      CPROF_HEAP_PROFILE="$pre.heap" CPROF_PEAK_PROFILE="$pre.peak" CPROF_LEAK_PROFILE="$pre.leak" \
      CPROF_MUTEX_PROFILE="$pre.mutex" CPROF_BLOCK_PROFILE="$pre.block" \
      CPROF_CPU_PROFILE="$pre.cpu" CPROF_TRACE="$pre.trace" \
      "$T/proctitle" some args > "$T/out" 2> "$T/err" ) || { cat "$T/err"; fail "$pre: exit status $?"; }
  cmp -s "$T/plain.out" "$T/out" || fail "$pre: stdout differs from a plain run"
  [ -s "$T/err" ] && { cat "$T/err"; fail "$pre: cprof complained"; }
  case $pre in /*) f=$pre ;; *) f=$dir/$pre ;; esac
  for k in heap peak leak mutex block cpu; do
    [ -s "$f.$k" ] || fail "$f.$k: not written"
    go tool pprof -raw "$f.$k" > /dev/null 2>&1 || fail "$f.$k: go tool pprof cannot load it"
  done
  go tool trace -d "$f.trace" > /dev/null 2>&1 || fail "$f.trace: go tool trace -d cannot read it"
  # Every allocation of the title-setting main is in the heap profile.
  n=$(pprof_flat alloc_objects "$f.heap" | awk '$1 == "main" { print $2 }')
  [ "${n:-0}" -ge 1000 ] || fail "$f.heap: main made ${n:-0} allocations, not 1000 or more"
  note "$pre: every profile written, main $n allocations"
}

check "$T" "$T/abs"
mkdir "$T/sub" || fail "mkdir"
check "$T/sub" rel
exit 0
