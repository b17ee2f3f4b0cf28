#!/bin/sh
# The peak at CPROF_RATE=1 with one thread left counting
# (tests/progs/peak_exited.c): a thread's blocks, allocated before it
# exited, are in the peak's bytes (read from the shared sum and main's own
# counters, counters.h) and in its profile, saved when main frees them
# after a run of highs that never wrote the epoch (peak.h). The peak's
# bytes equal cprof_stats' full sum at the program's highest point, and
# its profile what the program says was live then, in every run.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go > /dev/null 2>&1 || skip "go (golang-go) not installed"

cc_prog "$T/peak" "$PROGS/peak_exited.c" -ldl

for i in 1 2 3; do
  timeout -k 5 60 env CPROF_RATE=1 CPROF_PEAK_PROFILE="$T/$i.peak" LD_PRELOAD="$LIB" \
    "$T/peak" > "$T/$i.out" 2> "$T/$i.err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/$i.out" "$T/$i.err"; fail "run $i: exit status $rc"; }
  [ -s "$T/$i.err" ] && { cat "$T/$i.err"; fail "run $i: unexpected stderr"; }
  [ "$(grep -c '^PEAK ' "$T/$i.out")" = 3 ] || { cat "$T/$i.out"; fail "run $i: PEAK lines missing"; }
  live=$(sed -n 's/^LIVE //p' "$T/$i.out")
  "$BUILD/cprof" -comments "$T/$i.peak" > "$T/$i.comments" 2>&1 || { cat "$T/$i.comments"; fail "cprof -comments"; }
  peak=$(sed -n 's/.*cprof peak: \([0-9]*\) bytes live.*/\1/p' "$T/$i.comments" | head -1)
  [ -n "$live" ] && [ "$peak" = "$live" ] ||
    fail "run $i: the peak's bytes '$peak', cprof_stats at the highest point '$live'"
  check_peak "$T/$i.out" "$T/$i.peak" "run $i" "$T/peak"
done
note "3 runs: peak $peak bytes, as cprof_stats said; held 200, grow 150 objects at the peak"
exit 0
