#!/bin/sh
# Under an address-space limit (ulimit -v 1 GiB and 4 GiB) the private heap
# reserves a share of what the limit allows (ownheap.h), so the heap, CPU and
# mutex profiles are still written and load; the program's output and exit
# status are those of a plain run under the same limit, cprof prints
# nothing, and the heap profile (CPROF_RATE=1) holds the exact truth. (The heap used to reserve 64 GiB with no fallback: no profile at
# all, and a CPU profile failing with "Resource temporarily unavailable".)
# timeout: 180
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/known" "$PROGS/heapknown.c"
for kib in 1048576 4194304; do
  sh -c "ulimit -v $kib && exec \"\$0\"" "$T/known" > "$T/plain.out" 2> "$T/plain.err" ||
    skip "the program does not run under ulimit -v $kib"
  rm -f "$T"/*.pb.gz
  sh -c "ulimit -v $kib && exec env LD_PRELOAD=\"$LIB\" CPROF_RATE=1 CPROF_HEAP_PROFILE=\"$T/heap.pb.gz\" \
      CPROF_CPU_PROFILE=\"$T/cpu.pb.gz\" CPROF_MUTEX_PROFILE=\"$T/mutex.pb.gz\" \"\$0\"" "$T/known" \
      > "$T/out" 2> "$T/err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/err"; fail "ulimit -v $kib: exit status $rc"; }
  cmp -s "$T/plain.out" "$T/out" || fail "ulimit -v $kib: stdout differs from a plain run"
  [ -s "$T/err" ] && { cat "$T/err"; fail "ulimit -v $kib: cprof printed something"; }
  for p in heap cpu mutex; do
    [ -s "$T/$p.pb.gz" ] || fail "ulimit -v $kib: no $p profile"
    "$BUILD/cprof" -raw "$T/$p.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "ulimit -v $kib: $p profile does not load"; }
  done
  check_truth "$T/out" "$T/heap.pb.gz" "$T/known"
  note "ulimit -v $kib: heap, cpu and mutex profiles written"
done
exit 0
