#!/usr/bin/env bash
# http_latency.sh — what serving /debug/pprof/heap costs: the request's
# latency on a process with many distinct sampled stacks, and how long the
# process's own allocating threads are held up meanwhile.
#
#   bench/http_latency.sh          BENCH_STACKS (100000), BENCH_REQUESTS (10)
#
# The workload (bench/workloads/http_stacks.c, at CPROF_RATE=1) makes
# BENCH_STACKS distinct stacks, then a thread times every malloc+free it
# makes and logs the longest one per 100 ms window. The script measures a
# few idle seconds first (the machine's own noise), then fetches
# /debug/pprof/heap BENCH_REQUESTS times with curl, half a second apart,
# and reports: request latency (median, max), profile size, and the longest
# malloc+free in the windows that overlap a request against the idle ones
# ("waiting": the longest during which the thread blocked, e.g. on a lock,
# as opposed to being preempted; on a loaded machine the latter dominates).
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
STACKS=${BENCH_STACKS:-100000}
REQUESTS=${BENCH_REQUESTS:-10}
say() { echo "http_latency: $*" >&2; }
die() { say "$*"; exit 1; }
command -v curl >/dev/null || die "curl is needed"

make -C "$TOP" -s build/libcprof.so build/libcprof-http.so >&2 || die "cannot build"
W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$W"' EXIT
unset http_proxy HTTP_PROXY all_proxy ALL_PROXY

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
say "$buckets stacks in the profile; idle for 3 s..."
sleep 3
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
awk -v idle_end="$idle_end" -v stacks="$buckets" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
  FILENAME == ARGV[1] { s[++n] = $1; next }
  FILENAME == ARGV[2] { t0[++r] = $1; t1[r] = $2; size = $4; next }
  {
    # window ($1 - 100, $1]: overlapping a request, or idle before them
    busy = 0
    for (i = 1; i <= r; i++) if ($1 > t0[i] && $1 - 100 < t1[i]) busy = 1
    if (busy) { if ($2 > bmax) bmax = $2; if ($4 > bblk) bblk = $4; bw++; bsum += $3 }
    else if ($1 <= idle_end) { if ($2 > imax) imax = $2; if ($4 > iblk) iblk = $4; iw++; isum += $3 }
  }
  END {
    med = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
    printf "stacks in the profile      %s\n", stacks
    printf "profile size               %.1f KB (gzipped profile.proto)\n", size / 1024
    printf "GET /debug/pprof/heap      median %.1f ms, min %.1f ms, max %.1f ms (%d requests)\n", med, s[1], s[n], n
    printf "longest malloc+free        %.3f ms (%.3f ms waiting) in the %d windows of 100 ms overlapping a request, %d rounds\n", bmax / 1e6, bblk / 1e6, bw, bsum
    printf "                           %.3f ms (%.3f ms waiting) in the %d idle windows before, %d rounds\n", imax / 1e6, iblk / 1e6, iw, isum
    printf "load average               %s\n", load
  }' "$W/lat" "$W/requests" "$W/pauses"
