#!/bin/sh
# A program that calls pthread_getattr_np on its own threads (Rust's
# runtime does at start-up) runs to its end under every unwinder at
# CPROF_RATE=1: glibc holds the thread's lock while it allocates there, so
# the sampled allocation must not ask glibc for the stack's bounds again
# (it hung for ever). The main thread's and a started thread's known
# allocations are in the profile with their callers: the bounds cprof
# learned instead hold the whole stack.
# timeout: 200
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

cc_prog "$T/prog" "$PROGS/unwind_getattr.c" -fno-omit-frame-pointer # for the fp walk
"$T/prog" > "$T/want.out" || fail "plain run failed"
grep -qx 'stacks known, sum 3' "$T/want.out" || fail "plain run: unexpected output"

for u in cfi fp libunwind; do
  timeout 60 env CPROF_RATE=1 CPROF_UNWIND=$u CPROF_HEAP_PROFILE="$T/$u.pb.gz" LD_PRELOAD="$LIB" \
    "$T/prog" > "$T/$u.out" 2> "$T/$u.err"
  rc=$?
  [ $rc = 124 ] && fail "$u: hung (killed after 60 s)"
  [ $rc = 0 ] || { cat "$T/$u.err"; fail "$u: exit status $rc"; }
  cmp -s "$T/want.out" "$T/$u.out" || fail "$u: output differs"
  pprof_flat inuse_space "$T/$u.pb.gz" "$T/prog" > "$T/$u.flat"
  grep -qx 'alloc_main 12345' "$T/$u.flat" || { cat "$T/$u.flat"; fail "$u: alloc_main's 12345 B missing"; }
  grep -qx 'alloc_thread 23456' "$T/$u.flat" || { cat "$T/$u.flat"; fail "$u: alloc_thread's 23456 B missing"; }
  # The callers: main's cumulative bytes hold alloc_main's, run's alloc_thread's.
  go tool pprof -top -cum -unit=byte -nodefraction=0 -sample_index=inuse_space "$T/prog" "$T/$u.pb.gz" \
    2>/dev/null > "$T/$u.cum"
  for f in main:12345 run:23456; do
    v=$(awk -v fn="${f%:*}" '$6 == fn { v=$4; sub(/B$/, "", v); print v }' "$T/$u.cum")
    [ "${v:-0}" -ge "${f#*:}" ] || { cat "$T/$u.cum"; fail "$u: ${f%:*} holds ${v:-0} B, not its callee's ${f#*:}"; }
  done
  note "$u: ok"
done
exit 0
