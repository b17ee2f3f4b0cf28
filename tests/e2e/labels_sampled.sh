#!/bin/sh
# Profiler labels at the default heap rate, with a CPU profile and a
# sampled mutex profile (CPROF_MUTEX_RATE=5): tests/progs/labels_server.c's
# kind=a requests do 3 times the work of kind=b (CPU time, allocations,
# contended locks). go tool pprof -tagfocus=kind=K gives each kind:
#  - heap alloc_space, inuse_space and leaked bytes within 4 standard
#    errors of the truth (sigma = truth / sqrt(truth / rate), objects much
#    smaller than the rate: docs TESTING);
#  - mutex contentions within 4 sigma of the truth (each event kept with
#    probability 1/5 and counted 5 times: sigma = sqrt(4 N));
#  - CPU: kind a's share of the labeled samples 3/4 within 4 sigma
#    (sqrt(p (1 - p) / n) for n samples: every unit's work is the same
#    for both kinds, in CPU time);
#  - and the labels stay on their own threads' samples (-traces);
#  - with Go 1.19 and the newest Go installed.
# timeout: 300
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/labels_common.inc"

reqs=300
run_server s $reqs 400 CPROF_MUTEX_RATE=5 CPROF_CPU_HZ=500
rate=524288

# within NAME EST TRUTH SIGMA: |EST - TRUTH| <= 4 SIGMA
within() {
  awk -v e="$2" -v t="$3" -v s="$4" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(d <= 4 * s) }' ||
    fail "$1: $2, truth $3, more than 4 sigma ($4) off"
  note "$1: $2 (truth $3, sigma $4)"
}

for go in $GOS; do
  for kind in a b; do
    for idx in alloc_space:alloc_space:heap inuse_space:inuse_space:heap inuse_space:leak_space:leak; do
      set -- $(echo "$idx" | tr : ' ')
      est=$(tagtotal "$go" $1 kind=$kind "$T/s.$3"); t=$(truth s $kind $2)
      within "$3 $2 kind=$kind ($go)" "$est" "$t" "$(awk -v t="$t" -v r=$rate 'BEGIN { print t / sqrt(t / r) }')"
    done
    est=$(tagtotal "$go" contentions kind=$kind "$T/s.mutex"); t=$(truth s $kind contentions)
    within "mutex contentions kind=$kind ($go)" "$est" "$t" "$(awk -v n="$t" 'BEGIN { print sqrt(4 * n) }')"
  done
  a=$(tagtotal "$go" samples kind=a "$T/s.cpu"); b=$(tagtotal "$go" samples kind=b "$T/s.cpu")
  [ "$((a + b))" -ge 200 ] || fail "cpu: only $((a + b)) labeled samples ($go)"
  within "cpu share of kind=a ($go)" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / (a + b) }')" 0.75 \
    "$(awk -v n="$((a + b))" 'BEGIN { print sqrt(0.75 * 0.25 / n) }')"
  check_isolation "$go" "$T/s.cpu"
  check_isolation "$go" "$T/s.heap" alloc_space
done
note "default rate: every kind's estimate within 4 sigma; CPU share of a 3/4"
