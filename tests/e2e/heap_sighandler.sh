#!/bin/sh
# A program that mallocs and frees in SIGALRM and SIGPROF handlers (5 kHz
# interval timers) while its main loop mallocs, reallocs and frees
# (tests/progs/sigalloc.c), at CPROF_RATE=1 and the default rate: it must
# end (a handler that interrupted a free holding a live-map stripe used to
# wait on it forever), print what a plain run prints, exit 0, and leave a
# heap profile that loads. At rate 1 the samples a handler could not record
# show in cprof_stats' dropped_samples.
# timeout: 400
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/sigalloc" "$PROGS/sigalloc.c" -I"$TOP/include" -ldl
"$T/sigalloc" > "$T/plain.out" 2> "$T/plain.err" || { cat "$T/plain.err"; fail "plain run failed"; }
note "plain: $(cat "$T/plain.err")"

for rate in 1 default; do
  set -- CPROF_HEAP_PROFILE="$T/$rate.pb.gz"
  [ $rate = default ] || set -- "$@" CPROF_RATE=$rate
  env "$@" LD_PRELOAD="$LIB" timeout 150 "$T/sigalloc" > "$T/out" 2> "$T/err"
  rc=$?
  [ $rc = 124 ] && fail "rate $rate: the program hung (deadlock in a hook)"
  [ $rc = 0 ] || { cat "$T/err"; fail "rate $rate: exit status $rc"; }
  cmp -s "$T/plain.out" "$T/out" || { cat "$T/out"; fail "rate $rate: stdout differs from a plain run"; }
  grep -q '^cprof: mallocs' "$T/err" || { cat "$T/err"; fail "rate $rate: no counters"; }
  grep -v -e '^rounds ' -e '^cprof: mallocs' "$T/err" | grep . && fail "rate $rate: unexpected stderr"
  "$BUILD/cprof" -raw "$T/$rate.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "rate $rate: the profile does not load"; }
  note "rate $rate: $(tr '\n' ' ' < "$T/err")"
done
exit 0
