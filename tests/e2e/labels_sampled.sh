#!/bin/sh
# Profiler labels on a sampled heap (CPROF_RATE=16384), with a CPU profile
# and a sampled mutex profile (CPROF_MUTEX_RATE=5): tests/progs/labels_
# server.c's kind=a requests do 3 times the work of kind=b (CPU time,
# allocations, contended locks). go tool pprof -tagfocus=kind=K gives each
# kind:
#  - heap alloc_space, inuse_space and leaked bytes within 6 sigma of the
#    truth (sigma = truth / sqrt(truth / rate), objects much smaller than
#    the rate: docs TESTING; normal odds 2e-9 a check).
#    Not at the default rate: kind b's 600 leaked blocks of 3000 bytes
#    (1.8 MB) were 3.4 samples there, and 4 sigma failed by chance with
#    odds 8e-4 (inuse and leaks of both kinds: 1.5e-3 a run, from the
#    binomial counts of each size class). At 16384 that leak is ~100
#    samples, and 6 sigma (57% of it) odds 2e-9;
#  - mutex contentions within 6 sigma of the truth (each event kept with
#    probability 1/5 and counted 5 times: sigma = sqrt(4 N); binomial
#    odds 7e-9; at 4 sigma they were 6e-5);
#  - CPU: each kind's samples what the kernel delivered to that kind: a
#    bare timer on each worker's CPU clock at cprof's period, credited to
#    the request running (tests/progs/ktimer.h). Not the 3/4 of CPU time
#    that kind a uses: the kernel notices a CPU timer's expiry only at a
#    tick that finds the thread running, and on a loaded machine a thread
#    that runs in short bursts is found rarely, so that one signal stands
#    for tens of periods, all credited to the request running then (beside
#    two busy loops, kind a's share of the delivered periods ranged from
#    0.55 to 0.996 over 14 runs, where its share of CPU time is 0.75).
#    Both timers count expiries of the same clock at the same ticks, so at
#    each tick their totals differ by one period at most: a kind's
#    difference is a sum of +-2 over the runs of its signals, zero on
#    average; within 4 sigma (sigma = sqrt(2 s) for its s signals), plus
#    one period per thread for the timers' phases (beside two busy loops,
#    at load 11-17, 0.58 sigma at most in 17 runs);
#  - and the labels stay on their own threads' samples (-traces);
#  - with Go 1.19 and the newest Go installed.
# timeout: 300
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/labels_common.inc"

reqs=300
run_server s $reqs 400 CPROF_RATE=16384 CPROF_MUTEX_RATE=5 CPROF_CPU_HZ=500
rate=16384

# within NAME EST TRUTH SIGMA: |EST - TRUTH| <= 6 SIGMA
within() {
  awk -v e="$2" -v t="$3" -v s="$4" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(d <= 6 * s) }' ||
    fail "$1: $2, truth $3, more than 6 sigma ($4) off"
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
  [ "$((a + b))" -gt 0 ] || fail "cpu: no labeled samples ($go)"
  for kind in a b; do
    set -- $(awk -v k=$kind '$1 == "KERNEL" && $2 == k { print $3, $4 }' "$T/s.out")
    got=$a; [ $kind = a ] || got=$b
    awk -v g="$got" -v p="$1" -v s="$2" 'BEGIN { d = g - p; if (d < 0) d = -d; exit !(d <= 4 * sqrt(2 * s) + 2) }' ||
      fail "cpu samples kind=$kind: $got, the kernel delivered $1 periods in $2 signals ($go)"
    note "cpu samples kind=$kind: $got, the kernel delivered $1 periods in $2 signals ($go)"
  done
  check_isolation "$go" "$T/s.cpu"
  check_isolation "$go" "$T/s.heap" alloc_space
done
note "rate 16384: every kind's estimate within 6 sigma; CPU samples per kind as the kernel delivered"
