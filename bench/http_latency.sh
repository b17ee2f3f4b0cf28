#!/usr/bin/env bash
# http_latency.sh — what serving /debug/pprof/heap costs: the request's
# latency on a process with many distinct sampled stacks, and how long the
# process's own allocating threads are held up meanwhile.
#
#   bench/http_latency.sh          BENCH_STACKS (100000), BENCH_REQUESTS (10)
#
# The workload (bench/workloads/http_stacks.c, at CPROF_RATE=1) makes
# BENCH_STACKS distinct stacks, then a thread times every malloc+free it
# makes and logs the longest one per 100 ms window. The script measures the
# idle process first (the machine's own noise), then fetches
# /debug/pprof/heap BENCH_REQUESTS times with curl, half a second apart,
# and reports the request latency (median, min, max), the profile size, and
# the longest malloc+free per window (p50, p99, max) in the windows that
# overlap a request against the idle ones. "blocked" counts only the rounds
# in which the allocating thread gave up the CPU itself (a lock, a page
# fault on a busy mmap lock): what serving could cause. The rest is
# preemption, which on a loaded machine dominates.
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
STACKS=${BENCH_STACKS:-100000}
REQUESTS=${BENCH_REQUESTS:-10}
. "$TOP/bench/lib.sh"
bench_http_init http_latency

gcc -std=gnu11 -O1 -g -o "$W/http_stacks" "$TOP/bench/workloads/http_stacks.c" -lpthread ||
  die "cannot build the workload"
say "making $STACKS stacks (CPROF_RATE=1)..."
CPROF_RATE=1 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$W/addr" \
  LD_PRELOAD="$TOP/build/libcprof.so" "$W/http_stacks" "$STACKS" "$W/pauses" > "$W/out" 2> "$W/err" &
pid=$!
for _ in $(seq 600); do grep -q ready "$W/out" 2>/dev/null && [ -s "$W/addr" ] && break; sleep 0.1; done
grep -q ready "$W/out" || { cat "$W/err"; die "the workload did not start"; }
url="http://$(cat "$W/addr")/debug/pprof"
buckets=$(curl -s "$url/" | sed -n "s|^<tr><td>\([0-9]*\)</td><td><a href='heap?debug=1'>.*|\1|p")
idle=$(( REQUESTS * 3 / 4 + 1 ))
[ "$idle" -lt 3 ] && idle=3
say "$buckets stacks in the profile; idle for $idle s..."
sleep "$idle"
idle_end=$(date +%s%3N)

: > "$W/requests"
for i in $(seq "$REQUESTS"); do
  t0=$(date +%s%3N)
  r=$(curl -s -o "$W/heap.pb.gz" -w '%{time_total} %{size_download}' "$url/heap")
  t1=$(date +%s%3N)
  echo "$t0 $t1 $r" >> "$W/requests"
  sleep 0.5
done
sleep 0.3
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

awk '{ print $3 * 1000 }' "$W/requests" | sort -n > "$W/lat"
# Each 100 ms window ($1 - 100, $1] overlaps a request (busy) or lies in
# the idle phase before them.
awk -v idle_end="$idle_end" -v dir="$W" '
  FILENAME == ARGV[1] { t0[++r] = $1; t1[r] = $2; next }
  {
    busy = 0
    for (i = 1; i <= r; i++) if ($1 > t0[i] && $1 - 100 < t1[i]) busy = 1
    f = busy ? "busy" : ($1 <= idle_end ? "idle" : "")
    if (f != "") { print $2 > (dir "/" f ".max"); print $4 > (dir "/" f ".wait"); print $3 > (dir "/" f ".rounds") }
  }' "$W/requests" "$W/pauses"
# stat FILE: "p50 p99 max" in ms of the numbers (ns) in FILE.
stat() {
  sort -n "$1" | awk '{ v[NR] = $1 } END {
    if (!NR) { print "- - -"; exit }
    p50 = v[int((NR + 1) / 2)]; p99 = v[int(NR * 0.99 + 0.999)]
    printf "%.3f %.3f %.3f", p50 / 1e6, p99 / 1e6, v[NR] / 1e6 }'
}
read -r lmin lmed lmax n <<EOF2
$(awk '{ v[NR] = $1 } END { print v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR], NR }' "$W/lat")
EOF2
size=$(awk '{ s = $4 } END { printf "%.1f", s / 1024 }' "$W/requests")
for f in busy idle; do
  read -r p50 p99 max <<EOF2
$(stat "$W/$f.max")
EOF2
  read -r _ _ wmax <<EOF2
$(stat "$W/$f.wait")
EOF2
  eval "${f}_line=\"p50 \$p50 ms, p99 \$p99 ms, max \$max ms; blocked (waiting, not preempted): max \$wmax ms; \$(grep -c . "\$W/\$f.max") windows, \$(awk '{ s += \$1 } END { print s }' "\$W/\$f.rounds") rounds\""
done
echo "stacks in the profile        $buckets"
echo "profile size                 $size KB (gzipped profile.proto)"
echo "GET /debug/pprof/heap        median $lmed ms, min $lmin ms, max $lmax ms ($n requests)"
echo "malloc+free, longest per 100 ms window:"
echo "  windows overlapping a request   $busy_line"
echo "  idle windows before             $idle_line"
echo "load average                 $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
