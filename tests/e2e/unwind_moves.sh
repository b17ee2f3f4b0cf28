#!/bin/sh
# A thread cprof did not see start (tests/progs/stack_moves.c) first
# allocates on a makecontext stack, which is then unmapped and a smaller
# one mapped at its address, with a frame chain leading into the old
# range: the walks must not take the first coroutine's mapping for the
# thread's stack (reading the unmapped range killed the program). Every
# unwinder, at rate 1: no crash, the program's output, and each site's
# bytes exact; under CPROF_UNWIND_CHECK the cfi stacks match libunwind's.
# And a child forked from such a thread before it allocated: its thread
# is not the main one (its tid is its pid), its stack is the forking
# thread's, and its allocations are there, exactly.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

cc_prog "$T/prog" "$PROGS/stack_moves.c" -fno-omit-frame-pointer -ldl # for the fp walk
"$T/prog" > "$T/want" || fail "plain run failed"
grep -qx 'stack_moves: done' "$T/want" || fail "plain run: unexpected output"
"$T/prog" fork > "$T/want.fork" || fail "plain run (fork) failed"
grep -qx 'stack_moves fork: done' "$T/want.fork" || fail "plain run (fork): unexpected output"

for u in fp cfi libunwind; do
  check=0; [ $u = cfi ] && check=1
  timeout 60 env CPROF_RATE=1 CPROF_UNWIND=$u CPROF_UNWIND_CHECK=$check \
    CPROF_HEAP_PROFILE="$T/$u.pb.gz" LD_PRELOAD="$LIB" "$T/prog" > "$T/$u.out" 2> "$T/$u.err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/$u.err"; fail "$u: exit status $rc"; }
  cmp -s "$T/want" "$T/$u.out" || fail "$u: output differs"
  pprof_flat alloc_space "$T/$u.pb.gz" "$T/prog" > "$T/$u.flat"
  # 1000 blocks each: 100, 200 and 300 bytes.
  for want in 'on_first 100000' 'on_second 200000' 'on_thread 300000'; do
    grep -qx "$want" "$T/$u.flat" || { cat "$T/$u.flat"; fail "$u: want $want"; }
  done
  if [ $u = cfi ]; then
    grep -q 'unwind check: [0-9]* stacks compared, 0 mismatches' "$T/$u.err" ||
      { cat "$T/$u.err"; fail "cfi: stacks differ from libunwind's"; }
  fi
  mkdir "$T/fork.$u"
  timeout 60 env CPROF_RATE=1 CPROF_UNWIND=$u CPROF_HEAP_PROFILE="$T/fork.$u/%p.pb.gz" LD_PRELOAD="$LIB" \
    "$T/prog" fork > "$T/fork.$u.out" 2> "$T/fork.$u.err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/fork.$u.err"; fail "$u fork: exit status $rc"; }
  cmp -s "$T/want.fork" "$T/fork.$u.out" || fail "$u fork: output differs"
  set -- "$T/fork.$u"/*.pb.gz
  [ $# = 2 ] || fail "$u fork: $# profiles, want the parent's and the child's"
  n=0
  for f; do
    pprof_flat alloc_space "$f" "$T/prog" | grep -qx 'on_child 400000' && n=$((n + 1))
  done
  [ $n = 1 ] || { pprof_flat alloc_space "$1" "$T/prog"; pprof_flat alloc_space "$2" "$T/prog"
    fail "$u fork: the child's 400000 B in $n profiles, want 1"; }
  note "$u: ok"
done
exit 0
