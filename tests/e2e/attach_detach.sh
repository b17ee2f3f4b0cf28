#!/bin/sh
# cprof attach, detach, attach again, on one running program
# (tests/progs/attach_prog.c):
# - CPROF_HTTP_TOKEN of cprof attach guards the endpoints;
# - detach stops the server and restores the calls: the work the program
#   does while detached shows nowhere once it is attached again;
# - what was sampled before a detach stays exact after the next attach,
#   at the same rate or another;
# - -cpu=FILE writes the CPU profile at the detach;
# - the program ends with its usual output and exits 0.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/attach_prog.c" -ldl
plain_run plain "$T/prog"
grep TRUTH "$T/plain.out" > "$T/truth"

detach() {
  "$CPROF" detach "$1" 2> "$T/detach.err" || { cat "$T/detach.err"; fail "detach failed"; }
  grep -q "profiling of process $1 stopped" "$T/detach.err" || fail "detach said '$(cat "$T/detach.err")'"
}

# 1. attach, detach, work while detached, attach: the work is not seen.
start_prog a "$T/prog"
export CPROF_HTTP_TOKEN=s3cret
attach_to "$PID" -rate=1
unset CPROF_HTTP_TOKEN
url1=$URL
code=$(curl -s -o /dev/null -w "%{http_code}" "$url1/heap")
[ "$code" = 401 ] || fail "attached with a token: $code without it, want 401"
curl -sf -H "Authorization: Bearer s3cret" "$url1/heap" > /dev/null || fail "attached with a token: refused with it"
detach "$PID"
curl -sf "$url1/heap?debug=1" > /dev/null && fail "the server still answers after detach"
step a go phase2
attach_to "$PID" -rate=1
for fn in site_keep site_churn grow_old; do
  printf 'TRUTH %s 0 0 0 0\n' $fn
done > "$T/none"
heap_truth a "$T/none" "$T/prog"
detach "$PID"
finish a
cmp "$T/plain.out" "$T/a.out" || fail "output differs (a)"

# 2. attach, work, detach, attach: the samples are still exact.
start_prog b "$T/prog"
attach_to "$PID" -rate=1 -cpu="$T/cpu.pb.gz"
step b go phase2
detach "$PID"
go tool pprof -top "$T/cpu.pb.gz" 2> /dev/null | grep -q "^Type: cpu" || fail "-cpu: no CPU profile at detach"
attach_to "$PID" -rate=1
heap_truth b "$T/truth" "$T/prog"
finish b
cmp "$T/plain.out" "$T/b.out" || fail "output differs (b)"
[ -s "$T/b.err" ] && { cat "$T/b.err"; fail "unexpected stderr (b)"; }

# 3. attach at rate 1, work, detach, attach at the default rate: each
#    sample keeps the rate it was taken at, so the rate-1 samples stay
#    exact (scaled by the new rate, 2048-byte objects came out 256 times
#    larger).
start_prog c "$T/prog"
attach_to "$PID" -rate=1
step c go phase2
detach "$PID"
attach_to "$PID"
heap_truth c "$T/truth" "$T/prog"
finish c
cmp "$T/plain.out" "$T/c.out" || fail "output differs (c)"
[ -s "$T/c.err" ] && { cat "$T/c.err"; fail "unexpected stderr (c)"; }
exit 0
