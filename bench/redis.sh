#!/usr/bin/env bash
# redis.sh — what cprof costs a server: Debian's redis-server on 127.0.0.1
# (no persistence) under redis-benchmark, one command at a time, with a
# fixed number of requests. Per command it measures the throughput
# (requests/s) and the 99th percentile latency as redis-benchmark --csv
# reports them, and redis's own CPU time per request (INFO cpu:
# used_cpu_user + used_cpu_sys before and after, the whole process, so
# cprof's own threads included). Configurations, interleaved per round:
#   plain      no cprof
#   preload    LD_PRELOAD=libcprof.so, default rate (CPROF_HTTP on)
#   preload1   the same at CPROF_RATE=1
#   attach     started plain, then `cprof attach` (default rate)
#   attach1    the same at -rate=1
# Every profiled server must serve a heap profile with samples in it (read
# over /debug/pprof/heap before the shutdown), and exit 0.
#
#   bench/redis.sh          (knobs: see bench/README.md)
#
# Debian's redis-server is linked with libjemalloc.so.2, and cprof attach
# profiles programs on glibc's malloc only; by default every configuration
# runs redis on glibc's malloc (workloads/nojemalloc.c stands in for
# libjemalloc.so.2). BENCH_REDIS_MALLOC=jemalloc keeps jemalloc (the attach
# configurations are then left out).
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
WL=$TOP/bench/workloads
RUNS=${BENCH_RUNS:-5}
REQS=${BENCH_REQUESTS:-100000}
CLIENTS=${BENCH_CLIENTS:-20}
SIZE=${BENCH_DATA_SIZE:-100}
TESTS=${BENCH_REDIS_TESTS:-"set get lpush lpop"}
MALLOC=${BENCH_REDIS_MALLOC:-glibc}

# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
bench_init redis
for b in redis-server redis-cli redis-benchmark curl; do
  command -v $b > /dev/null || die "$b is needed (scripts/deps.sh: redis-server redis-tools curl)"
done
make -C "$TOP" -s build/libcprof-http.so build/cprof >&2 || die "cannot build"
# cprof attach loads the libcprof.so next to it: copies side by side, as LIB.
cp "$TOP/build/libcprof-http.so" "$TOP/build/cprof" "$W/"
CPROF=$W/cprof

CONFIGS="plain preload attach preload1 attach1"
REDIS_ENV=()
case $MALLOC in
glibc)
  mkdir -p "$W/shim"
  ${CC:-cc} -O2 -shared -fPIC -Wl,-soname,libjemalloc.so.2 -o "$W/shim/libjemalloc.so.2" \
    "$WL/nojemalloc.c" || die "cannot build workloads/nojemalloc.c"
  REDIS_ENV=(LD_LIBRARY_PATH="$W/shim") ;;
jemalloc) CONFIGS="plain preload preload1" ;;
*) die "BENCH_REDIS_MALLOC=$MALLOC: glibc or jemalloc" ;;
esac
declare -A LABEL=([plain]="plain" [preload]="cprof preloaded, default rate"
  [preload1]="cprof preloaded, CPROF_RATE=1" [attach]="cprof attach, default rate"
  [attach1]="cprof attach -rate=1")

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
cpu_s() { # PORT: redis's user + system CPU seconds so far
  redis-cli -p "$1" info cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.6f", s }'
}

# run CONFIG: one server, every test of $TESTS against it; appends
# "req_per_s p99_ms cpu_us_per_req load" to $W/res/TEST.CONFIG.
run() {
  local cfg=$1 port hport spid i env=() t cpu0 cpu1 load rc=0
  port=$(free_port); hport=$(free_port)
  case $cfg in
  preload) env=(LD_PRELOAD="$LIB" CPROF_HTTP="127.0.0.1:$hport") ;;
  preload1) env=(LD_PRELOAD="$LIB" CPROF_HTTP="127.0.0.1:$hport" CPROF_RATE=1) ;;
  esac
  rm -rf "$W/srv" && mkdir -p "$W/srv"
  env "${REDIS_ENV[@]}" "${env[@]}" redis-server --bind 127.0.0.1 --port "$port" --save '' \
    --appendonly no --dir "$W/srv" --logfile "$W/srv/redis.log" --daemonize no 2> "$W/srv/stderr" &
  spid=$!
  i=0
  until [ "$(redis-cli -p "$port" ping 2> /dev/null)" = PONG ]; do
    kill -0 "$spid" 2> /dev/null || { cat "$W/srv/stderr" "$W/srv/redis.log" >&2; die "$cfg: redis-server exited"; }
    i=$((i + 1)); [ $i -lt 3000 ] || die "$cfg: redis-server not answering after 30 s"
    sleep 0.01
  done
  case $cfg in
  attach | attach1)
    "$CPROF" attach -http="127.0.0.1:$hport" -rate="$([ "$cfg" = attach1 ] && echo 1 || echo 524288)" "$spid" \
      > /dev/null 2> "$W/srv/attach" || { cat "$W/srv/attach" >&2; die "$cfg: cprof attach failed"; } ;;
  esac
  for t in $TESTS; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    cpu0=$(cpu_s "$port")
    redis-benchmark -p "$port" -n "$REQS" -c "$CLIENTS" -d "$SIZE" -t "$t" --csv > "$W/srv/csv" 2>&1 ||
      { cat "$W/srv/csv" >&2; die "$cfg/$t: redis-benchmark failed"; }
    cpu1=$(cpu_s "$port")
    # "test","rps",...,"p99_latency_ms",...: columns found by name.
    awk -F, -v t="$t" -v reqs="$REQS" -v c0="$cpu0" -v c1="$cpu1" -v load="$load" '
      { gsub(/"/, "") }
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      tolower($1) == t { printf "%s %s %.3f %s\n", $col["rps"], $col["p99_latency_ms"], (c1 - c0) * 1e6 / reqs, load; n++ }
      END { exit n != 1 }' "$W/srv/csv" >> "$W/res/$t.$cfg" ||
      { cat "$W/srv/csv" >&2; die "$cfg/$t: no result line for $t with rps and p99_latency_ms"; }
  done
  if [ "$cfg" != plain ]; then
    # It really profiled: the heap profile has sampled allocations.
    curl -sf -o "$W/srv/heap.pb.gz" "http://127.0.0.1:$hport/debug/pprof/heap" ||
      die "$cfg: no heap profile at 127.0.0.1:$hport"
    if command -v go > /dev/null; then
      [ "$(go tool pprof -symbolize=none -sample_index=alloc_objects -top -nodecount=1 "$W/srv/heap.pb.gz" 2> /dev/null |
           sed -n 's/.* of \([0-9][0-9]*\) total.*/\1/p')" -gt 0 ] || die "$cfg: the heap profile has no samples"
    fi
  fi
  redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || true
  wait "$spid" || rc=$?
  [ $rc = 0 ] || { cat "$W/srv/stderr" >&2; die "$cfg: redis-server exited with status $rc"; }
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$EPOCHREALTIME
mkdir -p "$W/res"
run plain && rm -f "$W"/res/* # warm-up, not counted
for ((r = 1; r <= RUNS; r++)); do
  say "round $r/$RUNS"
  for cfg in $CONFIGS; do run "$cfg"; done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# stat FILE COLUMN: "median min max"
stat() {
  awk -v c="$2" '{ print $c }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
echo "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on $MALLOC's malloc;" \
  "redis-benchmark -n $REQS -c $CLIENTS -d $SIZE, one command at a time; $RUNS interleaved runs"
echo "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs;" \
  "load average $load0 before, $load1 after; $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')s"
echo "medians and min-max; x plain: median / plain's median; CPU: redis's own (INFO cpu) per request;"
echo "verdict (throughput; CPU): ok if within 3% of plain, else MISSED when worse beyond chance (one-sided"
echo "Mann-Whitney p < 0.05 over the runs), else noise; P: share of (run, plain run) pairs where the run is worse"
echo
printf '%-31s %4s %8s %17s %7s %7s %15s %7s %15s %7s %5s  %s\n' "command / configuration" runs "req/s" \
  "min-max" "x plain" "p99 ms" "min-max" "CPU us" "min-max" "x plain" load "verdict (req/s; CPU)"
for t in $TESTS; do
  echo "$t" | tr '[:lower:]' '[:upper:]'
  read -r prps _ _ <<<"$(stat "$W/res/$t.plain" 1)"
  read -r pcpu _ _ <<<"$(stat "$W/res/$t.plain" 3)"
  for cfg in $CONFIGS; do
    f=$W/res/$t.$cfg
    read -r rps rlo rhi <<<"$(stat "$f" 1)"
    read -r p99 plo phi <<<"$(stat "$f" 2)"
    read -r cpu clo chi <<<"$(stat "$f" 3)"
    read -r ld _ _ <<<"$(stat "$f" 4)"
    v=""
    if [ "$cfg" != plain ]; then
      read -r P1 p1 <<<"$(slower_p "$W/res/$t.plain" "$f" 1)" # lower throughput is worse
      read -r P2 p2 <<<"$(slower_p "$f" "$W/res/$t.plain" 3)"
      v=$(awk -v r1="$(awk -v a="$prps" -v b="$rps" 'BEGIN { print a / b }')" -v p1="$p1" -v P1="$P1" \
              -v r2="$(awk -v a="$cpu" -v b="$pcpu" 'BEGIN { print a / b }')" -v p2="$p2" -v P2="$P2" '
        function v(r, p) { return r <= 1.03 ? "ok" : (p < 0.05 ? "MISSED" : "noise") }
        BEGIN { printf "%s (P %s, p %s); %s (P %s, p %s)", v(r1, p1), P1, p1, v(r2, p2), P2, p2 }')
    fi
    awk -v l="${LABEL[$cfg]}" -v n="$(wc -l < "$f")" -v rps="$rps" -v rlo="$rlo" -v rhi="$rhi" -v prps="$prps" \
        -v p99="$p99" -v plo="$plo" -v phi="$phi" -v cpu="$cpu" -v clo="$clo" -v chi="$chi" -v pcpu="$pcpu" \
        -v ld="$ld" -v v="$v" 'BEGIN {
      printf "  %-29s %4d %8.0f %8.0f-%-8.0f %7.3f %7.3f %7.3f-%-7.3f %7.3f %7.3f-%-7.3f %7.3f %5.1f  %s\n",
             l, n, rps, rlo, rhi, rps / prps, p99, plo, phi, cpu, clo, chi, cpu / pcpu, ld, v }'
  done
done
