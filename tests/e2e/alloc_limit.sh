#!/bin/sh
# cprof.h's CPROF_ALLOC_LIMIT block (tests/progs/alloc_limit.c), exact: a
# block at its limits passes, one object or one byte over fails (the handler
# runs once, with the counts), another thread's allocations never count;
# the same preloaded and linked with -lcprof; with no handler a failure
# aborts after its line on stderr; and built without cprof the program links,
# runs every block's code and checks nothing.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/plain" "$PROGS/alloc_limit.c" -I"$TOP/include"
cc_prog "$T/linked" "$PROGS/alloc_limit.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"

# expect OUT FAILURES...: each case ran once, with these handler calls.
expect() {
  out=$1; shift
  u=$(sed -n 's/^cprof: [a-z]*, usable(100)=\([0-9]*\)$/\1/p' "$out")
  [ -n "$u" ] || fail "no first line: $(cat "$out")"
  cat > "$T/want" <<EOW
three at their limit: ran=1 failures=$1
three, limit two objects: ran=1 failures=$2
three, one byte short: ran=1 failures=$3
none allocated, limit 0: ran=1 failures=$4
other thread's 100, limit 0: ran=1 failures=$5
calloc and realloc, limit 1: ran=1 failures=$6
EOW
  sed '1d; s/ allocation limit.*//' "$out" > "$T/got"
  diff "$T/want" "$T/got" > "$T/d" || fail "$out: wrong verdicts: $(cat "$T/d")"
}

for mode in preload linked; do
  if [ $mode = preload ]; then
    LD_PRELOAD="$LIB" "$T/plain" > "$T/$mode.out" 2> "$T/$mode.err" || fail "$mode: program failed"
  else
    "$T/linked" > "$T/$mode.out" 2> "$T/$mode.err" || fail "$mode: program failed"
  fi
  grep -q '^cprof: present,' "$T/$mode.out" || fail "$mode: cprof not found: $(cat "$T/$mode.out")"
  expect "$T/$mode.out" 0 1 1 0 0 1
  u=$(sed -n 's/.*usable(100)=//p' "$T/$mode.out")
  grep -qx "three, limit two objects: ran=1 failures=1 allocation limit exceeded: 3 objects, $((3 * u)) bytes (limit 2 objects, 1048576 bytes)" "$T/$mode.out" ||
    fail "$mode: the failure does not give the exact counts: $(cat "$T/$mode.out")"
  [ "$(grep -c 'alloc_limit.c:[0-9]*: allocation limit exceeded' "$T/$mode.err")" -eq 3 ] ||
    fail "$mode: not three lines on stderr: $(cat "$T/$mode.err")"
  note "$mode: exact verdicts"
done

# No handler: the failure aborts, after its line.
rc=0
"$T/linked" abort > "$T/abort.out" 2> "$T/abort.err" || rc=$?
[ $rc -eq 134 ] || fail "abort: status $rc, not 134 (SIGABRT)"
grep -q 'alloc_limit.c:[0-9]*: allocation limit exceeded: 1 objects, [0-9]* bytes (limit 0 objects, 0 bytes)' "$T/abort.err" ||
  fail "abort: no message: $(cat "$T/abort.err")"
grep -q 'no abort' "$T/abort.out" && fail "abort: the program went on"
note "no handler: abort"

# Without cprof: weak symbols, every block runs and nothing is checked.
"$T/plain" > "$T/plain.out" 2> "$T/plain.err" || fail "plain: program failed: $(cat "$T/plain.err")"
grep -q '^cprof: absent,' "$T/plain.out" || fail "plain: $(cat "$T/plain.out")"
expect "$T/plain.out" 0 0 0 0 0 0
"$T/plain" abort > "$T/plain_abort.out" || fail "plain abort: the unchecked block failed"
grep -q 'no abort' "$T/plain_abort.out" || fail "plain abort: $(cat "$T/plain_abort.out")"
note "without cprof: links, runs, checks nothing"
exit 0
