#!/usr/bin/env bash
# http_symbols.sh — what repeated GET /debug/pprof/heap cost on a program
# with a large .symtab (a big C++ server built with symbols, scraped every
# few seconds by a continuous profiler): each write names its frames from
# the objects' symbol tables (symtab.h), so the first, the second and the
# later fetches can cost differently.
#
#   bench/http_symbols.sh   BENCH_FUNCS (400000), BENCH_STACKS (32000),
#                           BENCH_FETCHES (10), BENCH_RUNS (5),
#                           BENCH_REF_LIB (another libcprof.so, with its
#                           libcprof-http.so beside it)
#
# The workload (bench/workloads/gen_bigsyms.py) has BENCH_FUNCS functions
# in its .symtab and makes BENCH_STACKS distinct stacks at CPROF_RATE=1
# from 400 allocating functions spread among them. Each run fetches the
# profile twice, then BENCH_FETCHES times more; it reports the latency of
# the first, the second and the median later fetch (curl), the process's
# CPU per later fetch (utime + stime from /proc/PID/stat, in clock ticks:
# 10 ms over BENCH_FETCHES fetches) and its RSS after them. Runs of the
# builds are interleaved; the figures are medians over BENCH_RUNS.
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
FUNCS=${BENCH_FUNCS:-400000}
STACKS=${BENCH_STACKS:-32000}
FETCHES=${BENCH_FETCHES:-10}
RUNS=${BENCH_RUNS:-5}
. "$TOP/bench/lib.sh"
bench_http_init http_symbols
LIBS="now=$TOP/build/libcprof.so"
if [ -n "${BENCH_REF_LIB:-}" ]; then
  [ -r "$(dirname "$BENCH_REF_LIB")/libcprof-http.so" ] ||
    die "BENCH_REF_LIB=$BENCH_REF_LIB: no libcprof-http.so beside it"
  LIBS="ref=$BENCH_REF_LIB $LIBS"
fi

say "generating $FUNCS functions..."
mkdir "$W/src"
python3 "$TOP/bench/workloads/gen_bigsyms.py" "$W/src" "$FUNCS" 40 80 400
objs="$W/src/main.o"
for k in $(seq 0 39); do objs="$objs $W/src/fill$k.o $W/src/alloc$k.o"; done
for k in $(seq 0 39); do
  echo "as -o $W/src/fill$k.o $W/src/fill$k.s && gcc -O1 -c -o $W/src/alloc$k.o $W/src/alloc$k.c"
done | xargs -P "$(nproc)" -I{} sh -c '{}' || die "cannot build the workload"
gcc -O1 -c -o "$W/src/main.o" "$W/src/main.c" && gcc -o "$W/bigsyms" $objs ||
  die "cannot link the workload"
rm -rf "$W/src"

# one NAME LIB: one run; appends "first second later cpu rss" (ms, ms, ms,
# ms per fetch, MB) to $W/NAME.
one() {
  CPROF_RATE=1 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$W/addr" LD_PRELOAD="$2" \
    "$W/bigsyms" "$STACKS" > "$W/out" 2> "$W/err" &
  pid=$!
  for _ in $(seq 600); do grep -q ready "$W/out" 2>/dev/null && [ -s "$W/addr" ] && break; sleep 0.1; done
  grep -q ready "$W/out" || { cat "$W/err"; die "the workload did not start"; }
  local url="http://$(cat "$W/addr")/debug/pprof/heap" first second c0 c1
  first=$(curl -sf -o /dev/null -w '%{time_total}' "$url")
  second=$(curl -sf -o /dev/null -w '%{time_total}' "$url")
  c0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  for _ in $(seq "$FETCHES"); do curl -sf -o /dev/null -w '%{time_total}\n' "$url"; done > "$W/lat"
  c1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  local rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; rm -f "$W/addr"
  echo "$first $second $(sort -n "$W/lat" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') \
$(( (c1 - c0) * 1000 / $(getconf CLK_TCK) )) $rss" |
    awk -v f="$FETCHES" '{ printf "%.1f %.1f %.1f %.1f %.1f\n", $1 * 1000, $2 * 1000, $3 * 1000, $4 / f, $5 / 1024 }' >> "$W/$1"
}
for r in $(seq "$RUNS"); do
  say "run $r of $RUNS"
  for l in $LIBS; do one "${l%%=*}" "${l#*=}"; done
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "$FUNCS functions in .symtab, $STACKS stacks, $FETCHES later fetches, medians of $RUNS runs"
printf '%-5s %10s %10s %10s %14s %8s\n' build "first ms" "second ms" "later ms" "CPU ms/later" "RSS MB"
for l in $LIBS; do
  n=${l%%=*}
  printf '%-5s' "$n"
  for c in 1 2 3 4 5; do printf ' %10s' "$(cut -d' ' -f$c "$W/$n" | med)"; done
  echo
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
