#!/bin/sh
# At CPROF_RATE=1 a call site's sizes share one bucket (the scale is 1 for
# every size): tests/progs/ratesizes.c's site_many allocates 300,000
# distinct sizes, which took 300,000 buckets (1.1 million filled the table,
# and every later stack went to cprof_stack_table_full). The profile still
# counts every object and byte exactly.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/rs" "$PROGS/ratesizes.c" -I"$TOP/include" -ldl
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/rs" "$T/h.pb.gz" > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "program failed"; }
[ -s "$T/err" ] && { cat "$T/err"; fail "unexpected stderr"; }
[ "$(tail -n1 "$T/out")" = ok ] || fail "output: $(cat "$T/out")"
n=$(sed -n 's/^buckets \([0-9]*\)$/\1/p' "$T/out")
# The program's own stacks and the loader's: a few dozen, not 300,000.
[ -n "$n" ] && [ "$n" -lt 1000 ] || fail "$n buckets for 300,000 sizes of one stack"
pprof_flat alloc_objects "$T/h.pb.gz" "$T/rs" > "$T/ao"
pprof_flat alloc_space "$T/h.pb.gz" "$T/rs" > "$T/as"
pprof_flat inuse_space "$T/h.pb.gz" "$T/rs" > "$T/is"
grep -q '^site_many 300000$' "$T/ao" || { cat "$T/ao"; fail "site_many alloc_objects"; }
grep -q '^site_many 45000150000$' "$T/as" || { cat "$T/as"; fail "site_many alloc_space"; }
grep -q '^site_kept 599500$' "$T/is" || { cat "$T/is"; fail "site_kept inuse_space"; }
grep -q cprof_stack_table_full "$T/ao" && fail "the table filled"
note "$n buckets; site_many and site_kept exact"
exit 0
