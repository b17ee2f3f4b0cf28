#!/bin/sh
# A fork child draws its own first sample point: it did keep the parent's
# countdown, so its first sample fell exactly where the parent's next one
# did (tests/progs/forkgap.c: the same 1000-byte blocks allocated in both
# after each of 4 forks, the first a warm-up whose indices differ anyway).
# Now the two first indices are independent: forks 1 to 3 all equal by
# chance has odds near (1000/524288)^3.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/fg" "$PROGS/forkgap.c" -I"$TOP/include" -ldl
LD_PRELOAD="$LIB" "$T/fg" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "program failed"; }
[ -s "$T/err" ] && { cat "$T/err"; fail "unexpected stderr"; }
[ "$(tail -n1 "$T/out")" = ok ] || fail "output: $(cat "$T/out")"
[ "$(grep -c '^fork [0-9]: parent [0-9][0-9]* child [0-9][0-9]*$' "$T/out")" = 4 ] ||
  { cat "$T/out"; fail "a run without a sample"; }
awk '/^fork/ && $2 != "0:" && $4 != $6 { d++ } END { exit d ? 0 : 1 }' "$T/out" ||
  { cat "$T/out"; fail "each child sampled first where its parent did"; }
note "$(grep '^fork' "$T/out" | tr '\n' ' ')"
exit 0
