#!/bin/sh
# A refused cprof attach leaves the target's floating-point state as it
# was: a program that blocks every signal (tests/progs/attach_hostile.c
# sigblock) never stands at a safe point, so the attach gives up after its
# tries, and the clean-up must put back only the registers it read. The
# program keeps computing the same double (SSE) and long double (x87) sums
# through the attempt and after it, prints what a plain run prints, and
# exits 0 (a zeroed MXCSR killed it with SIGFPE).
# timeout: 300
. "$(dirname "$0")/attach_common.inc"

cc_prog "$T/hostile" "$PROGS/attach_hostile.c"
start_prog plain "$T/hostile" sigblock
finish plain
grep -q "differing rounds 0\$" "$T/plain.out" || fail "plain run: '$(cat "$T/plain.out")'"

for round in 1 2; do
  start_prog sig$round "$T/hostile" sigblock
  "$CPROF" attach "$PID" > "$T/r.out" 2> "$T/r.err" && fail "attach to a program blocking every signal succeeded"
  grep -q "never stood outside the C library" "$T/r.err" || { cat "$T/r.err"; fail "round $round: refusal says '$(cat "$T/r.err")'"; }
  [ "$(wc -l < "$T/r.err")" -le 1 ] || { cat "$T/r.err"; fail "round $round: more than one line"; }
  finish sig$round
  cmp "$T/plain.out" "$T/sig$round.out" || { cat "$T/sig$round.out"; fail "round $round: output differs after a refused attach"; }
  [ -s "$T/sig$round.err" ] && { cat "$T/sig$round.err"; fail "round $round: unexpected stderr"; }
done
exit 0
