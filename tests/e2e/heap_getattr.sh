#!/bin/sh
# The main thread calls pthread_getattr_np on itself (as Rust's runtime
# does before main: every Rust program) with every allocation sampled
# (tests/progs/stack_getattr.c). glibc mallocs inside it (fopen of
# /proc/self/maps) under the thread's lock; the unwinder's stack bounds
# must not ask pthread_getattr_np again there, or the program hangs.
# The profile's allocations must hold that malloc's sample (the path was taken) and the
# allocation after it.
# timeout: 60
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/getattr" "$PROGS/stack_getattr.c"
"$T/getattr" > "$T/plain.out" || fail "plain run failed"
timeout 30 env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/p.pb.gz" LD_PRELOAD="$LIB" "$T/getattr" > "$T/out"
rc=$?
[ $rc = 124 ] && fail "the program hung (a hook waited on pthread_getattr_np's lock)"
[ $rc = 0 ] || fail "exit status $rc"
cmp -s "$T/plain.out" "$T/out" || { cat "$T/out"; fail "stdout differs from a plain run"; }
[ "$(cat "$T/out")" = "stack known, allocated yes" ] || { cat "$T/out"; fail "the program's output"; }
"$BUILD/cprof" -top -nodefraction=0 -sample_index=alloc_space "$T/p.pb.gz" > "$T/top" 2>&1 || { cat "$T/top"; fail "the profile does not load"; }
grep -q " _*pthread_getattr_np\$" "$T/top" || { cat "$T/top"; fail "no sample inside pthread_getattr_np"; }
grep -q "^ *1024kB .* after_getattr\$" "$T/top" || { cat "$T/top"; fail "after_getattr's 1MB"; }
