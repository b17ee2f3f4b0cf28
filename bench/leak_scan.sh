#!/usr/bin/env bash
# leak_scan.sh — what a leak scan (CPROF_LEAK_PROFILE, /debug/pprof/leaks)
# costs on a process with a large live heap: bench/workloads/leakscan.c
# keeps BENCH_LEAK_MIB (default 1024) MiB live in blocks of each size of
# BENCH_LEAK_SIZES, chained by pointers from a global, with 4 idle threads,
# and takes the leak profile BENCH_RUNS (default 5) times through the API.
# Prints, per configuration, the medians of: the call's wall time, the
# pause (the other threads stopped) and the scan as the profile's comment
# reports them, and what the scan found.
#
#   bench/leak_scan.sh
set -euo pipefail
export LC_ALL=C
TOP=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-5}
MIB=${BENCH_LEAK_MIB:-1024}
SIZES=${BENCH_LEAK_SIZES:-"64 4096"}
say() { echo "leak_scan: $*" >&2; }
command -v go >/dev/null || { say "go (golang-go) is needed to read the profiles"; exit 1; }
make -C "$TOP" -s build/libcprof.so >&2
W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-leakscan.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp "$TOP/build/libcprof.so" "$W/libcprof.so"
gcc -O2 -o "$W/leakscan" "$TOP/bench/workloads/leakscan.c" -ldl -lpthread

med() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo "?")
echo "leak scan on $MIB MiB live, 4 idle threads; median of $RUNS scans; libcprof.so at $rev"
echo "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs; load average $load0 before"
printf '%-28s %9s %9s %9s  %s\n' "configuration" "call ms" "pause ms" "scan ms" "found (last scan)"
for size in $SIZES; do
  for rate in 524288 1; do
    # Rate 1 with small blocks would record tens of millions of objects.
    if [ "$rate" = 1 ] && [ "$size" -lt 4096 ]; then continue; fi
    name="${size} B blocks, rate $rate"
    say "$name"
    env LD_PRELOAD="$W/libcprof.so" CPROF_RATE=$rate CPROF_MEMORY_LIMIT=4G \
      "$W/leakscan" "$MIB" "$size" 4 "$RUNS" "$W/leak" > "$W/calls"
    : > "$W/pause"; : > "$W/scan"
    for ((r = 0; r < RUNS; r++)); do
      c=$(go tool pprof -raw "$W/leak.$r" 2>/dev/null | sed -n 's/^Comment: //p')
      echo "$c" | sed -n 's/.*paused \([0-9.]*\) ms.*/\1/p' >> "$W/pause"
      echo "$c" | sed -n 's/.*scan \([0-9.]*\) ms.*/\1/p' >> "$W/scan"
    done
    found=$(echo "$c" | sed -n 's/^cprof leaks: \([0-9]* unreachable sampled objects\).*reachable: \([0-9]* sampled objects\).*; \([0-9]* threads stopped, [0-9]* missed\).*/\1, \2 reachable, \3/p')
    printf '%-28s %9s %9s %9s  %s\n' "$name" "$(med < "$W/calls")" "$(med < "$W/pause")" "$(med < "$W/scan")" "$found"
  done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after"
