#!/usr/bin/env bash
# malloc_pair.sh — what cprof adds to one unsampled malloc/free pair: the
# common path of the default rate, measured alone. A small C program
# (bench/workloads/mallocpair.c) makes millions of pairs of a few sizes in
# three orders (lifo: the same block again and again; fifo: a queue of
# 1024 blocks; random: a pool of 16384 blocks replaced at random, so frees
# land all over the heap), on 1 and 2 threads, run
#   plain        glibc alone
#   cprof rate 0 LD_PRELOAD=libcprof.so CPROF_RATE=0: interposing and
#                counting, no sampling
#   cprof        LD_PRELOAD=libcprof.so at the default rate (512 KiB)
#   ref, ref 0   the same two with BENCH_REF_LIB (another libcprof.so, say
#                main's build), side by side
# and prints the median CPU time per pair (the threads' own CPU clocks:
# the steadiest figure on a shared machine) and what each configuration
# adds to plain, in ns. Runs are interleaved: round 1 runs every
# configuration of a case once, then round 2, ...
# With valgrind installed, it also counts the instructions per pair
# (callgrind, single-threaded cases: the difference between runs of 2N and
# N pairs, so start-up and exit cancel out), which no neighbour can blur.
#
#   bench/malloc_pair.sh
#   BENCH_RUNS=N (default 7)  BENCH_PAIRS=N (default 5000000 per thread)
#   BENCH_CASES="lifo:64:1 random:64:2 ..." (pattern:size:threads)
#   BENCH_REF_LIB=/path/to/libcprof.so  BENCH_CALLGRIND=0 (skip the counts)
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
bench_init malloc_pair
RUNS=${BENCH_RUNS:-7}
PAIRS=${BENCH_PAIRS:-5000000}
CASES=${BENCH_CASES:-"lifo:16:1 lifo:64:1 lifo:1000:1 fifo:64:1 random:64:1 random:1000:1 lifo:64:2 random:64:2"}
CC=${CC:-cc}

$CC -O2 -pthread -o "$W/mallocpair" "$TOP/bench/workloads/mallocpair.c" ||
  die "cannot build bench/workloads/mallocpair.c"

CONFIGS="plain rate0 cprof"
declare -A LABEL=([plain]="plain" [rate0]="cprof rate 0" [cprof]="cprof" [ref0]="ref rate 0" [ref]="ref")
if [ -n "${BENCH_REF_LIB:-}" ]; then
  [ -r "$BENCH_REF_LIB" ] || die "BENCH_REF_LIB=$BENCH_REF_LIB: no such file"
  cp "$BENCH_REF_LIB" "$W/libcprof-ref.so"
  CONFIGS="plain ref0 rate0 ref cprof"
fi

# config_env NAME: the environment of a configuration, in CENV.
config_env() {
  case $1 in
  plain) CENV=() ;;
  rate0) CENV=(LD_PRELOAD="$LIB" CPROF_RATE=0) ;;
  cprof) CENV=(LD_PRELOAD="$LIB") ;;
  ref0) CENV=(LD_PRELOAD="$W/libcprof-ref.so" CPROF_RATE=0) ;;
  ref) CENV=(LD_PRELOAD="$W/libcprof-ref.so") ;;
  esac
}

mkdir -p "$W/res"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for c in $CASES; do
  IFS=: read -r pat size thr <<<"$c"
  for ((r = 1; r <= RUNS; r++)); do
    for cfg in $CONFIGS; do
      config_env "$cfg"
      env "${CENV[@]}" "$W/mallocpair" "$pat" "$size" "$thr" "$PAIRS" >> "$W/res/$c.$cfg" ||
        die "$c under $cfg failed"
    done
  done
  say "$c: $RUNS rounds done"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# instructions PATTERN SIZE CONFIG: callgrind's count per pair.
instructions() {
  local n=100000 a b
  config_env "$3"
  a=$(env "${CENV[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$W/mallocpair" "$1" "$2" 1 $n 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,)
  b=$(env "${CENV[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$W/mallocpair" "$1" "$2" 1 $((2 * n)) 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,)
  [ -n "$a" ] && [ -n "$b" ] || { echo "?"; return; }
  echo $(((b - a) / n))
}
declare -A IR
if [ "${BENCH_CALLGRIND:-1}" = 1 ] && command -v valgrind >/dev/null; then
  for c in $CASES; do
    IFS=: read -r pat size thr <<<"$c"
    [ "$thr" = 1 ] || continue
    for cfg in $CONFIGS; do IR[$c.$cfg]=$(instructions "$pat" "$size" "$cfg"); done
    say "$c: instructions counted"
  done
else
  say "no instruction counts (valgrind not installed, or BENCH_CALLGRIND=0)"
fi

rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$TOP" status --porcelain -- src/runtime 2>/dev/null | grep -q . && echo "+changes" || true)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "malloc/free pair: median CPU ns per pair of $RUNS interleaved runs, $PAIRS pairs per thread"
echo "libcprof.so at $rev$dirty; $cpu, $(nproc) CPUs; load average $load0 before, $load1 after"
echo "+ns: added to plain; Ir: instructions per pair (callgrind), +Ir: added to plain"
echo
printf '%-18s %-14s %8s %7s %7s %7s\n' "case" "configuration" "ns/pair" "+ns" "Ir" "+Ir"
for c in $CASES; do
  base=$(median "$W/res/$c.plain" 1)
  for cfg in $CONFIGS; do
    ns=$(median "$W/res/$c.$cfg" 1)
    ir=${IR[$c.$cfg]:-}
    pir=${IR[$c.plain]:-}
    awk -v c="$c" -v l="${LABEL[$cfg]}" -v ns="$ns" -v b="$base" -v ir="$ir" -v pir="$pir" 'BEGIN {
      dir = (ir != "" && ir != "?" && pir != "" && pir != "?") ? sprintf("%+d", ir - pir) : ""
      printf "%-18s %-14s %8.2f %+7.2f %7s %7s\n", c, l, ns, ns - b, ir, dir }'
  done
done
