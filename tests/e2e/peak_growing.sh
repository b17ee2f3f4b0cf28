#!/bin/sh
# Threads growing the heap at once at CPROF_RATE=1 (tests/progs/
# peak_growing.c): two threads allocate from one stack, meeting every 4
# blocks, so that both set new highs while the other allocates; then main,
# holding almost none of the heap, sets the highest point with both
# parked (parked, so peak.h's allocation racing a new high cannot occur).
# The peak profile holds exactly every block, and the heap profile exactly
# the totals, in every run.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go > /dev/null 2>&1 || skip "go (golang-go) not installed"

cc_prog "$T/grow" "$PROGS/peak_growing.c"

for run in 1 2 3 4 5 6 7 8; do
  timeout -k 5 60 env CPROF_RATE=1 CPROF_PEAK_PROFILE="$T/$run.peak" CPROF_HEAP_PROFILE="$T/$run.heap" \
    LD_PRELOAD="$LIB" "$T/grow" > "$T/$run.out" 2> "$T/$run.err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/$run.err"; fail "run $run: exit status $rc"; }
  [ -s "$T/$run.err" ] && { cat "$T/$run.err"; fail "run $run: unexpected stderr"; }
  check_truth "$T/$run.out" "$T/$run.heap" "$T/grow"
  check_peak "$T/$run.out" "$T/$run.peak" "run $run" "$T/grow"
done
note "8 runs, peak and totals exact ($(grep '^PEAK' "$T/1.out"))"
exit 0
