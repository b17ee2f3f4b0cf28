#!/usr/bin/env bash
# mutex_overhead.sh — what the pthread lock hooks cost a program whose
# locks are never contended: bench/workloads/lockbench.c (BENCH_THREADS
# threads, default 1, each locking its own mutex 100 M times — "bare":
# nothing else; "work": a few dozen ns of work inside, and rwlock reads
# and writes) and sqlite3 (its
# serialized mode locks a mutex around every API call and allocation) on
# the heap benchmark's load.sql. Each runs
#   plain        the program alone;
#   hooks off    LD_PRELOAD=libcprof.so CPROF_RATE=0: every hook installed,
#                every profile off (the lock hooks forward at once);
#   mutex+block  the same with CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1, the
#                lock profiles at their most expensive settings;
# and the script prints median wall and CPU (user + system) times with
# their ratios to plain, and mutex+block against hooks off in CPU time (the
# lock profiles' own cost: CPROF_RATE=0 still counts every malloc). On a
# busy machine CPU time is the figure to read: wall time then also counts
# the time the run waited for a CPU.
#
#   bench/mutex_overhead.sh     BENCH_RUNS=N (default 7) runs per configuration,
#                               BENCH_ITERS, BENCH_THREADS for lockbench
#
# Runs are interleaved (round 1 runs every configuration once, then round
# 2, ...), so drift on a noisy machine hits all of them alike. Every run's
# output must equal the plain run's, and every mutex+block run must write
# its mutex profile, or the script stops.
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
WL=$TOP/bench/workloads
RUNS=${BENCH_RUNS:-7}
ITERS=${BENCH_ITERS:-100000000}
THREADS=${BENCH_THREADS:-1}

. "$TOP/bench/lib.sh"
bench_init mutex_overhead
cc -std=gnu11 -O2 -g -o "$W/lockbench" "$WL/lockbench.c" -lpthread || die "cannot build lockbench"

WORKLOADS="bare work"
if command -v sqlite3 >/dev/null && command -v python3 >/dev/null; then
  mkdir -p "$W/in"
  python3 "$WL/gen.py" "$W/in" "${BENCH_SCALE:-1}" >/dev/null
  WORKLOADS="$WORKLOADS sqlite3"
else
  say "sqlite3 or python3 missing: the sqlite3 workload is skipped"
fi
CONFIGS="plain off on"
declare -A LABEL=([plain]="plain" [off]="hooks off" [on]="mutex+block")

cmd_of() { # WORKLOAD -> the command in CMD
  case $1 in
  bare | work) CMD=("$W/lockbench" "$1" "$ITERS" "$THREADS") ;;
  sqlite3) CMD=(sqlite3 :memory: ".read $W/in/load.sql") ;;
  esac
}

env_of() { # CONFIG -> its environment in CENV
  case $1 in
  plain) CENV=() ;;
  off) CENV=(LD_PRELOAD="$LIB" CPROF_RATE=0) ;;
  on) CENV=(LD_PRELOAD="$LIB" CPROF_RATE=0 CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1
            CPROF_MUTEX_PROFILE="$W/mutex.pb.gz") ;;
  esac
}

run_one() { # WORKLOAD CONFIG: appends "wall cpu" to $W/res/WORKLOAD.CONFIG
  cmd_of "$1"; env_of "$2"
  rm -f "$W/mutex.pb.gz"
  timed_run "$1" "$2"
  [ "$2" != on ] || [ -s "$W/mutex.pb.gz" ] || die "$1/$2: no mutex profile written"
}

interleaved "$RUNS" "$WORKLOADS" "$CONFIGS"

printf '\nmedian of %d interleaved runs; lockbench: %d lock rounds x %d threads\n\n' "$RUNS" "$ITERS" "$THREADS"
printf '| workload | configuration | wall s | x plain | CPU s | x plain | CPU x hooks off |\n'
printf '|---|---|---|---|---|---|---|\n'
for wl in $WORKLOADS; do
  pw=$(median "$W/res/$wl.plain" 1); pc=$(median "$W/res/$wl.plain" 2)
  oc=$(median "$W/res/$wl.off" 2)
  for c in $CONFIGS; do
    w=$(median "$W/res/$wl.$c" 1); cpu=$(median "$W/res/$wl.$c" 2)
    vs_off=""
    [ "$c" = on ] && vs_off=$(awk -v a="$cpu" -v b="$oc" 'BEGIN { printf "%.3f", a / b }')
    awk -v wl="$wl" -v l="${LABEL[$c]}" -v w="$w" -v pw="$pw" -v c="$cpu" -v pc="$pc" -v o="$vs_off" \
      'BEGIN { printf "| %s | %s | %.3f | %.3f | %.2f | %s | %s |\n", wl, l, w, w / pw, c,
               (pc > 0 ? sprintf("%.3f", c / pc) : "n/a"), o }'
  done
done
