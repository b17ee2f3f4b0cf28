#!/usr/bin/env bash
# dump_pause.sh — what a dump (docs/triggers.md) costs the program it is
# written from: bench/workloads/dumppause.c holds BENCH_LIVE_MIB (256) MiB
# of live heap and runs BENCH_THREADS (2) threads that allocate and free in
# a loop, timing each iteration; the flight recorder is on
# (CPROF_RECORD=10m), and CPROF_DUMP_SIGNAL=USR2 writes the heap, peak and
# window profiles. Each round runs it twice, in turn: "quiet", no signal,
# and "dumps", BENCH_DUMPS (5) kill -USR2 a 1.2 s apart (dumps are
# rate-limited to one a second). Prints the medians over BENCH_RUNS (3)
# rounds of the longest gap between two iterations of any thread and of
# the 99.9th percentile gap, for both, and how long a dump takes from the
# kill to its announcement on stderr (polled every 2 ms: the time to write
# the three files, on the dump thread, while the program runs on), and
# whether the longest gap of a "dumps" run fell inside a dump.
#
#   bench/dump_pause.sh   BENCH_RUNS BENCH_LIVE_MIB BENCH_THREADS BENCH_DUMPS
#                         BENCH_KINDS ("heap peak window": the CPROF_*_PROFILE set)
#
# The "quiet" run is the noise floor of a loaded machine: the scheduler's
# own gaps. A dump that stopped the program would show as "dumps" above it.
set -euo pipefail
export LC_ALL=C
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
bench_init dump_pause
RUNS=${BENCH_RUNS:-3}
MIB=${BENCH_LIVE_MIB:-256}
THREADS=${BENCH_THREADS:-2}
DUMPS=${BENCH_DUMPS:-5}
KINDS=${BENCH_KINDS:-heap peak window}
${CC:-cc} -O2 -pthread -o "$W/dumppause" "$TOP/bench/workloads/dumppause.c" ||
  die "cannot build dumppause.c"
mkdir -p "$W/res"

ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'; }

# run CONFIG: one run; appends "iterations max_us p999_us" to res/CONFIG,
# and each dump's kill-to-announcement ms to res/latency.
run() {
  local d=$W/run pid i n t0 line
  rm -rf "$d" && mkdir -p "$d/p"
  local vars=() k
  for k in $KINDS; do
    vars+=("CPROF_${k^^}_PROFILE=$d/p/$k.pb.gz")
  done
  env LD_PRELOAD="$LIB" CPROF_RECORD=10m CPROF_DUMP_SIGNAL=USR2 "${vars[@]}" \
    "$W/dumppause" "$d" "$MIB" "$THREADS" > "$d/out" 2> "$d/err" &
  pid=$!
  until [ -e "$d/ready" ]; do
    kill -0 "$pid" 2>/dev/null || die "dumppause died: $(cat "$d/err")"
    sleep 0.01
  done
  sleep 0.5 # the threads run
  for ((i = 1; i <= DUMPS; i++)); do
    t0=$EPOCHREALTIME
    if [ "$1" = dumps ]; then
      kill -USR2 "$pid"
      until [ "$(grep -c '^cprof: dump ' "$d/err")" -ge "$i" ]; do
        kill -0 "$pid" 2>/dev/null || die "dumppause died: $(cat "$d/err")"
        sleep 0.002
      done
      ms "$t0" "$EPOCHREALTIME" >> "$W/res/latency"
      echo "$t0 $EPOCHREALTIME" >> "$d/dumps"
    fi
    sleep "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { d = 1.2 - (b - a); print (d > 0 ? d : 0) }')"
  done
  touch "$d/stop"
  wait "$pid" || die "dumppause exited $?: $(cat "$d/err")"
  n=$(grep -c '^cprof: dump ' "$d/err" || true)
  if [ "$1" = dumps ]; then
    [ "$n" = "$DUMPS" ] || die "$n dumps for $DUMPS signals: $(cat "$d/err")"
    line=$(grep '^cprof: dump ' "$d/err" | tail -n 1)
    for k in $KINDS; do
      case $line in *" $k "*) ;; *) die "the dump wrote no $k: $line" ;; esac
    done
    # shellcheck disable=SC2046
    du -k $(echo "$line" | grep -o '/[^ ,]*\.pb\.gz') | awk '{ s += $1 } END { print s }' >> "$W/res/kib"
  else
    [ "$n" = 0 ] || die "dumps without a signal: $(cat "$d/err")"
  fi
  cat "$d/out" >> "$W/res/$1"
  # did the longest gap overlap a dump (from the kill to its announcement)?
  if [ "$1" = dumps ]; then
    awk 'NR == FNR { w = $2 / 1e6; e = $4; next }
         { if (e - w <= $2 && e >= $1) hit = 1 }
         END { print hit ? "yes" : "no" }' "$d/out" "$d/dumps" >> "$W/res/overlap"
  fi
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= RUNS; r++)); do
  run quiet
  run dumps
  say "round $r/$RUNS done"
done
echo "a dump's pause: $MIB MiB live, $THREADS allocating threads, CPROF_RECORD=10m, profiles per dump: $KINDS;"
echo "median of $RUNS rounds; $(nproc) CPUs; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
for c in quiet dumps; do
  printf '  %-6s longest gap %8.1f ms   99.9th percentile gap <= %6.1f ms   (%s iterations of 64 malloc+free)\n' \
    "$c" "$(echo "$(median "$W/res/$c" 2) / 1000" | bc -l)" "$(echo "$(median "$W/res/$c" 3) / 1000" | bc -l)" \
    "$(median "$W/res/$c" 1)"
done
echo "  the longest gap of the dumps runs overlapped a dump in $(grep -c yes "$W/res/overlap" || true) of $RUNS"
printf '  a dump: %s ms from kill to its announcement (median of %d; min %s, max %s); %s KiB of files\n' \
  "$(median "$W/res/latency" 1)" "$(wc -l < "$W/res/latency")" "$(sort -g "$W/res/latency" | head -n 1)" \
  "$(sort -g "$W/res/latency" | tail -n 1)" "$(median "$W/res/kib" 1)"
