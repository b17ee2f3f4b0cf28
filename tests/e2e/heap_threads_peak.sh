#!/bin/sh
# Threads racing on one bucket at CPROF_RATE=1 (tests/progs/peak_threads.c):
# four threads allocate from one stack at once, setting new highs as the
# heap grows over 100 rounds, then free from it at once right after each
# round's high, so that the first frees of a round race to save the
# bucket's values for the peak (peak.h: a claim on the bucket's stamp, no
# lock). The peak profile holds exactly what the program says was live at
# its highest point, and the heap profile exactly its totals, in every run.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
command -v go > /dev/null 2>&1 || skip "go (golang-go) not installed"

cc_prog "$T/peak" "$PROGS/peak_threads.c"

for unwind in cfi fp; do
  for i in 1 2 3 4 5; do
    name=$unwind.$i
    timeout -k 5 60 env CPROF_RATE=1 CPROF_UNWIND=$unwind CPROF_PEAK_PROFILE="$T/$name.peak" \
      CPROF_HEAP_PROFILE="$T/$name.heap" LD_PRELOAD="$LIB" "$T/peak" > "$T/$name.out" 2> "$T/$name.err"
    rc=$?
    [ $rc = 0 ] || { cat "$T/$name.err"; fail "$name: exit status $rc"; }
    [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: unexpected stderr"; }
    # The program's own figures: the heap peaks in the first shrinking round.
    [ "$(head -1 "$T/$name.out")" = "rounds 140 peak_round 100" ] ||
      fail "$name: stdout '$(head -1 "$T/$name.out")'"
    [ "$(grep -c '^PEAK \|^TRUTH ' "$T/$name.out")" = 4 ] || fail "$name: PEAK and TRUTH lines missing"
    check_truth "$T/$name.out" "$T/$name.heap" "$T/peak"
    check_peak "$T/$name.out" "$T/$name.peak" "$name" "$T/peak"
  done
  note "$unwind: 5 runs, peak and totals exact ($(grep '^PEAK grab' "$T/$unwind.1.out"))"
done
exit 0
