#!/bin/sh
# Under an address-space limit (ulimit -v 1 GiB and 4 GiB) the private heap
# reserves a share of what the limit allows (ownheap.h), so the heap, CPU and
# mutex profiles are still written and load; the program's output and exit
# status are those of a plain run under the same limit, cprof prints
# nothing, and the heap profile (CPROF_RATE=1) holds the exact truth. Under
# a limit too low to reserve even 4 MiB, one clear line says so. (The heap used to reserve 64 GiB with no fallback: no profile at
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

# Limits so low that the private heap cannot be reserved at all (where that
# starts depends on the machine's libraries: a range is tried): the program
# still runs as plainly, and cprof says why (no private heap; below that,
# not even its tables), then that the profile is not written — or, above
# that, writes it.
said=0
for kib in 6000 7000 8000 9000 10000 12000 14000 16000; do
  sh -c "ulimit -v $kib && exec \"\$0\"" "$T/known" > "$T/plain.out" 2>/dev/null || continue
  rm -f "$T/low.pb.gz"
  sh -c "ulimit -v $kib && exec env LD_PRELOAD=\"$LIB\" CPROF_HEAP_PROFILE=\"$T/low.pb.gz\" \"\$0\"" \
      "$T/known" > "$T/out" 2> "$T/err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/err"; fail "ulimit -v $kib: exit status $rc"; }
  cmp -s "$T/plain.out" "$T/out" || fail "ulimit -v $kib: stdout differs from a plain run"
  if [ -s "$T/err" ]; then
    grep -v -e '^cprof: cannot reserve even 4 MiB of address space for its private heap (ulimit -v, RLIMIT_AS); profiles cannot be written$' \
         -e '^cprof: cannot map [0-9]* bytes for its tables (CPROF_MEMORY_LIMIT); heap profiling is off$' \
         -e "^cprof: cannot map [0-9]* bytes for the cfi unwinder's tables (CPROF_MEMORY_LIMIT); libunwind unwinds instead\$" \
         -e "^cprof: cannot write heap profile $T/low.pb.gz: Cannot allocate memory\$" "$T/err" | grep . &&
      { cat "$T/err"; fail "ulimit -v $kib: unclear message"; }
    grep -q 'cannot reserve even 4 MiB' "$T/err" && said=$((said+1))
  else
    [ -s "$T/low.pb.gz" ] || fail "ulimit -v $kib: no message and no profile"
  fi
done
note "too little address space for the private heap under $said of the low limits"
exit 0
