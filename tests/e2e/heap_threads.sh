#!/bin/sh
# Threads coming and going. A storm of 4000 short threads (8 at a time,
# some detached), each allocating 20 objects and leaving one for main to
# free: it finishes, at rate 1 the counts are exact, and the profiler's own
# memory (cprof_stats profiler_bytes) is the same after 4000 threads as
# after the first 400, give or take one arena chunk. Then exit during
# allocation: main calls exit() while 4 threads allocate, realloc and free
# in tight loops (sampled, so unwinding and table inserts are in flight
# while the profile is written): status 0 and a loadable profile, every
# time, with libunwind and the frame-pointer walk.
# timeout: 180
. "$(dirname "$0")/../lib.sh"

# Frame pointers: the CPROF_UNWIND=fp runs need them (without, the walk
# past the leaf reads whatever the registers held: a new stack per thread).
cc_prog "$T/threads" "$PROGS/stress_threads.c" -ldl -fno-omit-frame-pointer
cc_prog "$T/exiter" "$PROGS/stress_exit.c" -fno-omit-frame-pointer

for unwind in libunwind fp; do
  for rate in 1 524288; do
    name=storm.$unwind.$rate
    timeout -k 5 60 env CPROF_UNWIND=$unwind CPROF_RATE=$rate CPROF_HEAP_PROFILE="$T/$name.pb.gz" \
      LD_PRELOAD="$LIB" "$T/threads" 4000 > "$T/$name.out" 2> "$T/$name.err"
    rc=$?
    case $rc in
      0) ;;
      124|137) fail "$name: still running after 60 s" ;;
      *) cat "$T/$name.err"; fail "$name: exit status $rc" ;;
    esac
    [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: unexpected stderr"; }
    [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
    go tool pprof -raw -symbolize=none "$T/$name.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$name: profile does not load"; }
    set -- $(awk '$1 == "MEM"' "$T/$name.out")
    [ $# = 4 ] || fail "$name: no MEM line (cprof_stats not found)"
    early=$2 late=$3 buckets=$4
    [ "$late" -le $((early + 1048576)) ] ||
      fail "$name: profiler_bytes grew from $early to $late over 3600 threads"
    [ "$buckets" -le 64 ] || fail "$name: $buckets stack buckets for a handful of call sites"
    [ "$rate" = 1 ] && check_truth "$T/$name.out" "$T/$name.pb.gz"
    note "$name: profiler_bytes $early after 400 threads, $late after 4000; $buckets buckets"
  done
done

for i in 1 2 3; do
  for unwind in libunwind fp; do
    for rate in 1 524288; do
      name=exit.$i.$unwind.$rate
      timeout -k 5 30 env CPROF_UNWIND=$unwind CPROF_RATE=$rate CPROF_HEAP_PROFILE="$T/$name.pb.gz" \
        LD_PRELOAD="$LIB" "$T/exiter" $((40 * i)) > "$T/$name.out" 2> "$T/$name.err"
      rc=$?
      [ $rc = 0 ] || { cat "$T/$name.err"; fail "$name: exit status $rc"; }
      [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: unexpected stderr"; }
      [ "$(cat "$T/$name.out")" = exiting ] || fail "$name: stdout '$(cat "$T/$name.out")'"
      [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
      go tool pprof -raw -symbolize=none "$T/$name.pb.gz" > "$T/raw" 2>&1 ||
        { cat "$T/raw"; fail "$name: profile does not load"; }
      grep -q '^ *[1-9][0-9]* ' "$T/raw" || fail "$name: profile has no samples"
    done
  done
done
ls "$T" | grep '\.tmp\.' && fail "temporary profile files left behind"
note "exit during allocation: 12 runs, status 0, profiles load"
exit 0
