#!/usr/bin/env bash
# attach.sh — what `cprof attach` costs: the time the command takes, the
# longest pause it causes in the target, and the overhead of profiling
# after an attach against preloading, on the four workloads of
# heap_overhead.sh (jq, sqlite3, python3 with PYTHONMALLOC=malloc, xmllint).
#
#   bench/attach.sh        (BENCH_RUNS=5 BENCH_SCALE=1 BENCH_PROGRAMS=...)
#
# Overhead: each program starts reading its input from a FIFO and blocks
# there; then it is attached to (or not), then fed, and timed from the
# feeding to its exit. Configurations, interleaved per round:
#   plain     no cprof (the same FIFO protocol)
#   preload   LD_PRELOAD=libcprof.so CPROF_HTTP=127.0.0.1:0 (default rate)
#   attach    cprof attach (default rate; it serves on 127.0.0.1:0 too)
#   preload1 / attach1   the same at rate 1 (every allocation recorded)
# Pause: workloads/pausemeter.c sleeps 100 us at a time for 3 s and prints
# its longest gap; run alone and with an attach after 1 s.
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
WL=$TOP/bench/workloads
RUNS=${BENCH_RUNS:-5}
SCALE=${BENCH_SCALE:-1}
PROGRAMS=${BENCH_PROGRAMS:-"jq sqlite3 python3 xmllint"}
PY=${BENCH_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}

say() { echo "attach: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "cprof attach is x86-64 only"
make -C "$TOP" -s build/libcprof.so build/libcprof-http.so build/cprof >&2 || die "cannot build"
CPROF=$TOP/build/cprof
LIB=$TOP/build/libcprof.so

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-attach-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/in" "$W/res"
gcc -O2 -o "$W/pausemeter" "$WL/pausemeter.c"

# workload NAME: CMD (reads its input from stdin), FEED (file written to it), WENV.
workload() {
  WENV=()
  case $1 in
  jq) CMD=(jq -c -f "$WL/filter.jq"); FEED=$W/in/data.json ;;
  sqlite3) CMD=(sqlite3 :memory:); FEED=$W/feed.sql; echo ".read $W/in/load.sql" > "$FEED" ;;
  python3) WENV=(PYTHONMALLOC=malloc)
    n=$(awk -v s="$SCALE" 'BEGIN { printf "%d", 100000 * s }')
    CMD=("$PY" -c "import sys; sys.stdin.readline(); sys.argv = ['pywork.py', '$n']; exec(compile(open('$WL/pywork.py').read(), 'pywork.py', 'exec'))")
    FEED=$W/feed.nl; echo > "$FEED" ;;
  xmllint) CMD=(xmllint --noout -); FEED=$W/in/doc.xml ;;
  *) die "unknown program $1" ;;
  esac
}

# blocked PID: the process has exec'd and waits in read(2) on its input.
blocked() {
  local i=0
  until [ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = 0 ] &&
        grep -q libc.so "/proc/$1/maps" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 2000 ] && die "pid $1 never blocked on its input"
    sleep 0.005
  done
}

# run PROG CONFIG: one timed run; appends the seconds from feed to exit.
run() {
  local prog=$1 cfg=$2 env=() rate=524288 pid t0 t1 rc=0
  workload "$prog"
  case $cfg in
  preload) env=(LD_PRELOAD="$LIB" CPROF_HTTP=127.0.0.1:0) ;;
  preload1) env=(LD_PRELOAD="$LIB" CPROF_HTTP=127.0.0.1:0 CPROF_RATE=1) ;;
  attach1) rate=1 ;;
  esac
  rm -f "$W/fifo"; mkfifo "$W/fifo"
  exec 3<>"$W/fifo"
  env "${WENV[@]}" "${env[@]}" "${CMD[@]}" < "$W/fifo" > /dev/null 2> "$W/stderr" 3>&- &
  pid=$!
  blocked "$pid"
  case $cfg in
  attach | attach1)
    "$CPROF" attach -rate=$rate "$pid" > "$W/url" 2>> "$W/stderr" || { cat "$W/stderr" >&2; die "attach failed"; } ;;
  esac
  t0=$EPOCHREALTIME
  cat "$FEED" >&3
  exec 3>&-
  wait "$pid" || rc=$?
  t1=$EPOCHREALTIME
  [ $rc = 0 ] || { cat "$W/stderr" >&2; die "$prog under $cfg: exit $rc"; }
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >> "$W/res/$prog.$cfg"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

say "generating inputs (scale $SCALE)"
python3 "$WL/gen.py" "$W/in" "$SCALE"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# --- attach time and pause ----------------------------------------------------
for ((r = 1; r <= RUNS; r++)); do
  "$W/pausemeter" 3 >> "$W/res/pause.alone"
  "$W/pausemeter" 3 > "$W/pm.out" & pid=$!
  sleep 1
  t0=$EPOCHREALTIME
  "$CPROF" attach "$pid" > /dev/null || die "attach to pausemeter failed"
  t1=$EPOCHREALTIME
  wait "$pid"
  cat "$W/pm.out" >> "$W/res/pause.attach"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >> "$W/res/attach.time"
done

# --- overhead after attach ----------------------------------------------------
CONFIGS="plain preload attach preload1 attach1"
for prog in $PROGRAMS; do
  workload "$prog"
  command -v "${CMD[0]}" > /dev/null || { say "$prog not installed: skipped"; continue; }
  run "$prog" plain && rm -f "$W/res/$prog.plain" # warm-up
  for ((r = 1; r <= RUNS; r++)); do
    say "$prog: round $r/$RUNS"
    for cfg in $CONFIGS; do run "$prog" "$cfg"; done
  done
done

echo "cprof attach: median of $RUNS runs; load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "attach command: %.1f ms\n" "$(median < "$W/res/attach.time" | awk '{ print $1 * 1000 }')"
printf "longest pause of a 100 us sleep loop: %s us alone, %s us with an attach\n" \
  "$(median < "$W/res/pause.alone")" "$(median < "$W/res/pause.attach")"
printf "\n%-9s %9s %9s %9s %9s %9s   %s\n" program plain preload attach preload1 attach1 "attach/preload (rate 512K, rate 1)"
for prog in $PROGRAMS; do
  [ -f "$W/res/$prog.plain" ] || continue
  declare -A m=()
  for cfg in $CONFIGS; do m[$cfg]=$(median < "$W/res/$prog.$cfg"); done
  printf "%-9s %8.3fs %8.3fs %8.3fs %8.3fs %8.3fs   %.3f %.3f\n" "$prog" "${m[plain]}" "${m[preload]}" \
    "${m[attach]}" "${m[preload1]}" "${m[attach1]}" \
    "$(awk -v a="${m[attach]}" -v b="${m[preload]}" 'BEGIN { print a / b }')" \
    "$(awk -v a="${m[attach1]}" -v b="${m[preload1]}" 'BEGIN { print a / b }')"
done
