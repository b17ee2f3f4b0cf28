#!/usr/bin/env bash
# trace_overhead.sh — what the execution trace costs (docs/trace.md, "Execution
# trace"): bench/workloads/tracework.c's
#   lock     4 threads sharing one mutex (lock-heavy, some contention),
#   handoff  2 threads passing a token through a condition variable: every
#            pass blocks and wakes (the trace's worst case: every wait is
#            two events with a stack),
#   alloc    4 threads of malloc/free (allocation-heavy; 10 x the iterations),
#   sys      4 threads of write(2)/read(2) of a pipe (iterations / 20 rounds of
#            two calls each): the system call hooks' cost, idle and per traced call,
# and workloads/lockbench.c's
#   bare     one thread locking its own mutex (never contended; 20 x the
#            iterations): the lock hook's fast path alone, where the trace
#            added a load — the most sensitive measure of its idle cost,
# each run
#   plain    the program alone;
#   base     LD_PRELOAD of a libcprof.so built without the trace (the
#            revision BENCH_BASE_REV, default: the parent of the commit that
#            added src/runtime/trace.c), default settings;
#   off      LD_PRELOAD of this tree's libcprof.so, default settings, no
#            trace running;
#   traced   the same with CPROF_TRACE (the whole run traced; the trace
#            must be written, or the script stops).
# It prints median wall and CPU (user + system) times, "traced x off" (the
# trace's cost; target <= 1.10) and "off x base" (the cost of the trace's
# code when no trace runs; target <= 1.01), with the load average before
# and after: on a shared machine wall time also counts waiting for a CPU.
#
#   bench/trace_overhead.sh     BENCH_RUNS=N (default 9) runs per configuration,
#                               BENCH_ITERS (default 2000000), BENCH_BASE_REV
#
# Runs are interleaved (each round runs every configuration once), and every
# run's output must equal the plain run's.
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
WL=$TOP/bench/workloads
RUNS=${BENCH_RUNS:-9}
ITERS=${BENCH_ITERS:-2000000}

. "$TOP/bench/lib.sh"
bench_init trace_overhead
cc -std=gnu11 -O2 -g -o "$W/tracework" "$WL/tracework.c" -lpthread || die "cannot build tracework"
cc -std=gnu11 -O2 -g -o "$W/lockbench" "$WL/lockbench.c" -lpthread || die "cannot build lockbench"

added=$(git -C "$TOP" log --diff-filter=A --format=%H -- src/runtime/trace.c | tail -n1)
BASE_REV=${BENCH_BASE_REV:-${added:+$added^}}
[ -n "$BASE_REV" ] || die "no base revision (set BENCH_BASE_REV)"
mkdir -p "$W/base"
git -C "$TOP" archive "$BASE_REV" | tar -x -C "$W/base" || die "cannot export $BASE_REV"
make -C "$W/base" -s -j2 build/libcprof.so >&2 || die "cannot build libcprof.so of $BASE_REV"
cp "$W/base/build/libcprof.so" "$W/libcprof-base.so"

WORKLOADS="lock handoff alloc sys bare"
CONFIGS="plain base off traced"

cmd_of() { # WORKLOAD -> CMD
  case $1 in
  lock) CMD=("$W/tracework" lock "$ITERS" 4) ;;
  alloc) CMD=("$W/tracework" alloc $((ITERS * 10)) 4) ;;
  handoff) CMD=("$W/tracework" handoff "$ITERS" 2) ;;
  sys) CMD=("$W/tracework" sys "$ITERS" 4) ;;
  bare) CMD=("$W/lockbench" bare $((ITERS * 20)) 1) ;;
  esac
}

env_of() { # CONFIG -> CENV
  case $1 in
  plain) CENV=() ;;
  base) CENV=(LD_PRELOAD="$W/libcprof-base.so") ;;
  off) CENV=(LD_PRELOAD="$W/libcprof.so") ;;
  traced) CENV=(LD_PRELOAD="$W/libcprof.so" CPROF_TRACE="$W/run.trace") ;;
  esac
}

run_one() { # WORKLOAD CONFIG: appends "wall cpu" to $W/res/WORKLOAD.CONFIG
  cmd_of "$1"; env_of "$2"
  rm -f "$W/run.trace"
  timed_run "$1" "$2"
  [ "$2" != traced ] || [ -s "$W/run.trace" ] || die "$1/$2: no trace written"
  # the events of one traced run (go tool trace counts them)
  if [ "$2" = traced ] && [ ! -f "$W/events.$1" ] && command -v go >/dev/null; then
    GOCACHE=${GOCACHE:-$W/gocache} go tool trace -d "$W/run.trace" 2>/dev/null |
      awk '$2 ~ /^(GoBlock|GoSysCall|GoSleep)/ { n++ } END { print n + 0 }' > "$W/events.$1"
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
interleaved "$RUNS" "$WORKLOADS" "$CONFIGS"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

printf '\nmedian of %d interleaved runs; %d iterations; base %s; load average %s before, %s after\n\n' \
  "$RUNS" "$ITERS" "$(git -C "$TOP" rev-parse --short "$BASE_REV")" "$load_before" "$load_after"
printf '| workload | configuration | wall s | CPU s | wall x off | CPU x off |\n'
printf '|---|---|---|---|---|---|\n'
for wl in $WORKLOADS; do
  ow=$(median "$W/res/$wl.off" 1); oc=$(median "$W/res/$wl.off" 2)
  for c in $CONFIGS; do
    w=$(median "$W/res/$wl.$c" 1); cpu=$(median "$W/res/$wl.$c" 2)
    awk -v wl="$wl" -v l="$c" -v w="$w" -v ow="$ow" -v c="$cpu" -v oc="$oc" \
      'BEGIN { printf "| %s | %s | %.3f | %.2f | %.3f | %s |\n", wl, l, w, c, w / ow,
               (oc > 0 ? sprintf("%.3f", c / oc) : "n/a") }'
  done
done
# What one traced wait or system call costs: the CPU time tracing added,
# per block event (a block, its unblock and the restart: three events with
# one stack) or GoSysCall (one event with a stack).
printf '\n'
for wl in $WORKLOADS; do
  [ -s "$W/events.$wl" ] && [ "$(cat "$W/events.$wl")" -gt 1000 ] || continue
  awk -v wl="$wl" -v n="$(cat "$W/events.$wl")" -v t="$(median "$W/res/$wl.traced" 2)" \
      -v o="$(median "$W/res/$wl.off" 2)" \
    'BEGIN { printf "%s: %d waits or system calls traced in a run, %.0f ns of CPU each (median traced - median off)\n",
             wl, n, (t - o) * 1e9 / n }'
done
