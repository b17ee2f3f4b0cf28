#!/usr/bin/env bash
# heap_overhead.sh — what heap profiling costs real, allocation-heavy
# programs: jq, sqlite3, python3 (PYTHONMALLOC=malloc) and xmllint on
# generated inputs (bench/workloads/), and two multi-threaded ones: mtindex
# (bench/workloads/mtindex.c: two threads each indexing words, the heap
# growing in both at once) and pigz -p 2 (few allocations: the cost of the
# preload on a real threaded program), and a C++ compile (g++ -O2 -S on a
# generated file: cc1plus, which g++ starts, allocating millions of
# times), each run plain, under cprof at the
# default rate and at rate 1, and under the peer profilers that are
# installed (heaptrack; jemalloc's sampling profiler; gperftools'
# HEAPPROFILE). Prints median wall time and peak RSS, and their ratios;
# for heaptrack, which records in processes of its own, also the memory of
# all its processes together (one more, untimed run: see tree_rss).
# "cprof + peak" is the default rate with CPROF_PEAK_PROFILE (and
# CPROF_LEAK_PROFILE: the scan at exit) written too; BENCH_REF_LIB=PATH adds
# another libcprof.so (say, an older build) as "cprof ref", at the default
# rate and at rate 1, to see what a change costs. "cprof + recorder" is
# the default rate with the flight recorder (CPROF_RECORD=10m) and its
# window and lifetime profiles written at exit; its "x own" is against
# "cprof", and its ring's fill gives the recorder's memory per minute.
# "cprof + memory" is the default rate with the whole-process memory
# profile (CPROF_MEMORY_PROFILE, docs/memory.md) written at exit too.
#
#   bench/heap_overhead.sh            (see bench/README.md for the knobs)
#
# Runs of one program are interleaved: round 1 runs every configuration
# once, then round 2, ..., so slow drift on a noisy machine hits all of
# them alike. Wall time: bash's $EPOCHREALTIME around the run; CPU time
# (user + system) and peak RSS: GNU time's %U %S %M, which include the
# program's waited-for children (heaptrack's interpreter process).
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
WL=$TOP/bench/workloads
RUNS=${BENCH_RUNS:-5}
SLOW_RUNS=${BENCH_SLOW_RUNS:-1}
SCALE=${BENCH_SCALE:-1}
PROGRAMS=${BENCH_PROGRAMS:-"jq sqlite3 python3 xmllint mtindex pigz g++"}
PEERS=${BENCH_PEERS-"heaptrack jemalloc gperftools"}

say() { echo "heap_overhead: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh" # slower_p

# --- what is needed -------------------------------------------------------
if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "GNU time (/usr/bin/time) is needed for peak RSS; installing package 'time'"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null ||
      die "cannot install 'time'"
  else
    die "GNU time (/usr/bin/time) is needed for peak RSS: sudo apt-get install time"
  fi
fi
command -v python3 >/dev/null || die "python3 is needed (input generation)"
# The interpreter itself, not a wrapper script (pyenv's shims are bash
# scripts that would run, and be profiled, on every run).
PY=${BENCH_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}

make -C "$TOP" -s build/libcprof.so >&2 || die "cannot build build/libcprof.so"

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
  say "keeping $W"
else
  trap 'rm -rf "$W"' EXIT
fi
mkdir -p "$W/in" "$W/out" "$W/res"
# The library measured is a copy: a rebuild during the run cannot mix versions.
LIB=$W/libcprof.so
cp "$TOP/build/libcprof.so" "$LIB"

libpath() { ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }'; }

# --- the configurations ---------------------------------------------------
# CONFIGS: name, in run order. For each: LABEL, BASE (the configuration its
# "x own" ratio is against, or empty), SLOW (1: only $SLOW_RUNS runs; a
# key PROG:CONFIG for one program only).
# BENCH_EXTRAS=0 leaves out the default rate's variants (peak, recorder,
# memory profile): the heap profile's own cost only, in half the time.
EXTRAS="cprofpeak cprofrec cprofmem"
[ "${BENCH_EXTRAS:-1}" = 1 ] || EXTRAS=""
CONFIGS="plain cprof $EXTRAS cprof1"
declare -A LABEL BASE SLOW
# heaptrack takes 10-20x plain's time on cc1plus (a run, minutes).
SLOW[g++:heaptrack]=1
LABEL[plain]="plain"
LABEL[cprof]="cprof (default rate)"
LABEL[cprofpeak]="cprof + peak, leaks at exit"
LABEL[cprof1]="cprof CPROF_RATE=1"
LABEL[cprofrec]="cprof + recorder (10m)"; BASE[cprofrec]=cprof
LABEL[cprofmem]="cprof + memory profile"
if [ -n "${BENCH_REF_LIB:-}" ]; then
  [ -r "$BENCH_REF_LIB" ] || die "BENCH_REF_LIB=$BENCH_REF_LIB: no such file"
  CONFIGS="plain cprofref cprof $EXTRAS cprofref1 cprof1"
  LABEL[cprofref]="cprof ref (default rate)"
  LABEL[cprofref1]="cprof ref CPROF_RATE=1"
  cp "$BENCH_REF_LIB" "$W/libcprof-ref.so"
fi
for p in $PEERS; do
  case $p in
  heaptrack)
    if command -v heaptrack >/dev/null; then
      CONFIGS="$CONFIGS heaptrack"; LABEL[heaptrack]="heaptrack"
    else
      say "heaptrack not installed: skipped (apt-get install heaptrack)"
    fi ;;
  jemalloc)
    JE=$(libpath libjemalloc.so.2)
    if [ -z "$JE" ]; then
      say "libjemalloc2 not installed: jemalloc skipped"
    elif env LD_PRELOAD="$JE" MALLOC_CONF=prof:true /bin/true 2>&1 | grep -q .; then
      say "this jemalloc has no profiling (built without --enable-prof): jemalloc prof skipped"
    else
      CONFIGS="$CONFIGS jemalloc jeprof"
      LABEL[jemalloc]="jemalloc (no profiling)"
      LABEL[jeprof]="jemalloc prof:true (2^19 B)"; BASE[jeprof]=jemalloc
    fi ;;
  gperftools)
    TC=$(libpath libtcmalloc.so.4)
    if [ -z "$TC" ]; then
      say "libtcmalloc.so.4 (package google-perftools) not installed: gperftools skipped"
    else
      CONFIGS="$CONFIGS tcmalloc gperf"
      LABEL[tcmalloc]="tcmalloc (no profiling)"
      LABEL[gperf]="gperftools HEAPPROFILE"; BASE[gperf]=tcmalloc; SLOW[gperf]=1
    fi ;;
  *) die "unknown peer '$p' (BENCH_PEERS: heaptrack jemalloc gperftools)" ;;
  esac
done

O=$W/out
# Every profile is named after its process (%e): g++ runs cc1plus, whose
# profile is the one checked (MAIN, set by workload_cmd).
# config_cmd NAME: sets CENV (environment) and WRAP (wrapper command).
config_cmd() {
  CENV=(); WRAP=()
  case $1 in
  plain) ;;
  cprof) CENV=(LD_PRELOAD="$LIB" CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz") ;;
  cprofpeak) CENV=(LD_PRELOAD="$LIB" CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz" CPROF_PEAK_PROFILE="$O/peak.%e.pb.gz"
                   CPROF_LEAK_PROFILE="$O/leak.%e.pb.gz") ;;
  cprofrec) CENV=(LD_PRELOAD="$LIB" CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz" CPROF_RECORD=10m
                  CPROF_WINDOW_PROFILE="$O/window.%e.pb.gz" CPROF_LIFETIME_PROFILE="$O/life.%e.pb.gz") ;;
  cprofmem) CENV=(LD_PRELOAD="$LIB" CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz" CPROF_MEMORY_PROFILE="$O/mem.%e.pb.gz") ;;
  cprofref) CENV=(LD_PRELOAD="$W/libcprof-ref.so" CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz") ;;
  cprof1) CENV=(LD_PRELOAD="$LIB" CPROF_RATE=1 CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz") ;;
  cprofref1) CENV=(LD_PRELOAD="$W/libcprof-ref.so" CPROF_RATE=1 CPROF_HEAP_PROFILE="$O/cprof.%e.pb.gz") ;;
  heaptrack) WRAP=(heaptrack -o "$O/heaptrack") ;;
  jemalloc) CENV=(LD_PRELOAD="$JE") ;;
  jeprof) CENV=(LD_PRELOAD="$JE" MALLOC_CONF="prof:true,prof_final:true,prof_prefix:$O/jeprof") ;;
  tcmalloc) CENV=(LD_PRELOAD="$TC") ;;
  gperf) CENV=(LD_PRELOAD="$TC" HEAPPROFILE="$O/gperf") ;;
  esac
}

# wrote KIND: the main process's KIND profile exists and is not empty.
wrote() {
  local f
  for f in "$O/$1".$MAIN.pb.gz; do [ -s "$f" ] && return 0; done
  return 1
}

# config_wrote NAME: the profiler's output exists (it really profiled).
config_wrote() {
  case $1 in
  cprof | cprof1 | cprofref | cprofref1) wrote cprof ;;
  cprofpeak) wrote peak && wrote leak ;;
  cprofrec) wrote window && wrote life ;;
  cprofmem) wrote mem ;;
  heaptrack) ls "$O"/heaptrack* >/dev/null 2>&1 ;;
  jeprof) ls "$O"/jeprof.*.heap >/dev/null 2>&1 ;;
  gperf) ls "$O"/gperf.*.heap >/dev/null 2>&1 ;;
  *) true ;;
  esac
}

# --- the programs -----------------------------------------------------------
# workload_cmd NAME: sets WENV, CMD and MAIN (the name of the process
# profiled; a glob).
workload_cmd() {
  WENV=(); MAIN='*'
  case $1 in
  jq) CMD=(jq -c -f "$WL/filter.jq" "$W/in/data.json") ;;
  sqlite3) CMD=(sqlite3 :memory: ".read $W/in/load.sql") ;;
  python3) WENV=(PYTHONMALLOC=malloc); CMD=("$PY" "$WL/pywork.py" "$(awk -v s="$SCALE" 'BEGIN { printf "%d", 100000 * s }')") ;;
  xmllint) CMD=(xmllint --noout "$W/in/doc.xml") ;;
  mtindex) CMD=("$W/mtindex" 2 "$(awk -v s="$SCALE" 'BEGIN { printf "%d", 400000 * s }')") ;;
  pigz) CMD=(pigz -p 2 -c "$W/in/pigz.in") ;;
  # -S: cc1plus only (no assembler), so heaptrack, which must wrap it, has
  # one process to record; the preload reaches it through g++'s exec.
  g++) CMD=(g++ -O2 -S -o "$W/big.s" "$W/in/big.cc"); MAIN=cc1plus ;;
  *) die "unknown program '$1' (BENCH_PROGRAMS: jq sqlite3 python3 xmllint mtindex pigz g++)" ;;
  esac
}

case " $PROGRAMS " in *" mtindex "*)
  ${CC:-cc} -O2 -pthread -o "$W/mtindex" "$WL/mtindex.c" || die "cannot build bench/workloads/mtindex.c" ;;
esac
progs=""
for p in $PROGRAMS; do
  workload_cmd "$p"
  if command -v "${CMD[0]}" >/dev/null; then
    progs="$progs $p"
  else
    say "$p not installed: skipped"
  fi
done
[ -n "$progs" ] || die "none of the programs is installed"

say "generating inputs (scale $SCALE) in $W/in"
python3 "$WL/gen.py" "$W/in" "$SCALE"
# pigz's input: the others' inputs, twice over.
case " $progs " in *" pigz "*)
  for ((i = 0; i < 2; i++)); do cat "$W/in/doc.xml" "$W/in/data.json" "$W/in/load.sql"; done > "$W/in/pigz.in" ;;
esac

# command PROG CONFIG: workload_cmd and config_cmd. heaptrack does not
# follow exec (it takes its preload out of the environment): g++ runs it on
# cc1plus through its -wrapper option.
command_of() {
  workload_cmd "$1"
  config_cmd "$2"
  if [ "$1" = g++ ] && [ "$2" = heaptrack ]; then
    CMD=("${CMD[0]}" -wrapper "heaptrack,-o,$O/heaptrack" "${CMD[@]:1}"); WRAP=()
  fi
}

# run NAME CONFIG: one timed run; appends "wall_s cpu_s maxrss_kB load" to
# the results (cpu: user + system time of the program and its waited-for
# children; load: the 1-minute load average as it started).
run() {
  local prog=$1 cfg=$2 t0 t1 rc=0 load
  command_of "$prog" "$cfg"
  rm -rf "$O" && mkdir -p "$O"
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$W/rss" env "${WENV[@]}" "${CENV[@]}" "${WRAP[@]}" "${CMD[@]}" \
    </dev/null >/dev/null 2>"$W/stderr" || rc=$?
  t1=$EPOCHREALTIME
  if [ $rc != 0 ]; then
    cat "$W/stderr" >&2
    case $cfg in plain | cprof*) die "$prog under $cfg failed (exit $rc)" ;; esac
    # A peer that fails is a row of the table saying why; cprof's runs go on.
    echo "exit $rc: $(grep -v '^[[:space:]]' "$W/stderr" | grep -iE 'error|what|terminate|fail' | tail -n 1)" \
      > "$W/res/$prog.$cfg.failed"
    say "$prog under $cfg failed (exit $rc): left out"
    return 0
  fi
  config_wrote "$cfg" || { cat "$W/stderr" >&2; die "$prog under $cfg: the profiler wrote no output"; }
  echo "$t0 $t1 $(tail -n 1 "$W/rss") $load" |
    awk '{ printf "%.4f %.2f %d %s\n", $2 - $1, $3 + $4, $5, $6 }' >> "$W/res/$prog.$cfg"
  # the recorder's events (its window profile's comment, plain text in the
  # gzip stream) and the run's wall time
  if [ "$cfg" = cprofrec ]; then
    # shellcheck disable=SC2086 # MAIN is a glob
    echo "$(gzip -dc "$O"/window.$MAIN.pb.gz | strings | sed -n 's/.* \([0-9]*\) events kept.*/\1/p') $t0 $t1" |
      awk '{ printf "%d %.4f\n", $1, $3 - $2 }' >> "$W/res/$prog.recmem"
  fi
}

# tree_rss PROG CONFIG: one untimed run in a session of its own, every
# process of which (heaptrack: the program with its preload, the shell
# script, heaptrack_interpret, the compressor) is looked at every 20 ms.
# Prints "summed_kB hwm_kB": the largest sum of their resident sets seen at
# one moment (a lower bound: a peak between two looks is missed), and the
# sum of each process's own peak (VmHWM, as last read before it exited: an
# upper bound, the peaks need not coincide). GNU time's %M is the peak of
# the largest single process only.
tree_rss() {
  local prog=$1 cfg=$2 sid max=0 rc=0
  local -A hwm=()
  command_of "$prog" "$cfg"
  rm -rf "$O" && mkdir -p "$O"
  # Started in the background of a script (no job control), setsid is not
  # a group leader: it makes the session without forking, so $! is its id.
  setsid env "${WENV[@]}" "${CENV[@]}" "${WRAP[@]}" "${CMD[@]}" </dev/null >/dev/null 2>"$W/stderr" &
  sid=$!
  # The session's leader stays until waited for (a zombie): stop when it
  # is one, or gone.
  while [ "$(awk '{ print $3 }' "/proc/$sid/stat" 2>/dev/null || echo Z)" != Z ]; do
    local pids sum=0 pid kb
    pids=$(ps -s "$sid" -o pid= 2>/dev/null | awk '{ printf "/proc/%s/status ", $1 }')
    if [ -n "$pids" ]; then
      # shellcheck disable=SC2086
      while read -r pid kb; do
        if [ "$pid" = rss ]; then sum=$kb; else hwm[$pid]=$kb; fi
      done < <(awk '/^VmRSS:/ { r += $2 } /^VmHWM:/ { split(FILENAME, f, "/"); print f[3], $2 }
                    END { print "rss", r + 0 }' $pids 2>/dev/null)
    fi
    [ "$sum" -gt "$max" ] && max=$sum
    sleep 0.02
  done
  wait "$sid" || rc=$?
  [ $rc = 0 ] || { cat "$W/stderr" >&2; die "$prog under $cfg (memory of its processes) failed (exit $rc)"; }
  local total=0
  for kb in "${hwm[@]}"; do total=$((total + kb)); done
  echo "$max $total"
}

# count PROG: allocations the program makes, from a cprof profile at rate 1
# (alloc_objects is exact there). Needs go tool pprof.
count() {
  local prog=$1
  if ! command -v go >/dev/null; then echo "?"; return; fi
  workload_cmd "$prog"
  rm -rf "$W/count" && mkdir -p "$W/count"
  env "${WENV[@]}" LD_PRELOAD="$LIB" CPROF_RATE=1 CPROF_HEAP_PROFILE="$W/count/%e.pb.gz" \
    "${CMD[@]}" </dev/null >/dev/null 2>&1 || { echo "?"; return; }
  local f
  for f in "$W/count/"$MAIN.pb.gz; do break; done # MAIN is a glob
  go tool pprof -symbolize=none -sample_index=alloc_objects -top -nodecount=1 \
    "$f" 2>/dev/null | sed -n 's/.* of \([0-9][0-9]*\) total.*/\1/p' | head -n 1
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$EPOCHREALTIME
declare -A ALLOCS TREE
for prog in $progs; do
  say "$prog: counting allocations (cprof, rate 1)"
  ALLOCS[$prog]=$(count "$prog")
  run "$prog" plain && rm -f "$W/res/$prog.plain" # warm-up, not counted
  for ((r = 1; r <= RUNS; r++)); do
    say "$prog: round $r/$RUNS"
    for cfg in $CONFIGS; do
      if [ "${SLOW[$cfg]:-${SLOW[$prog:$cfg]:-0}}" = 1 ] && [ "$r" -gt "$SLOW_RUNS" ]; then continue; fi
      [ -f "$W/res/$prog.$cfg.failed" ] || run "$prog" "$cfg"
    done
  done
  case " $CONFIGS " in *" heaptrack "*)
    if [ "${SLOW[$prog:heaptrack]:-0}" = 1 ] || [ -f "$W/res/$prog.heaptrack.failed" ]; then continue; fi
    say "$prog: heaptrack's processes together (one untimed run)"
    TREE[$prog]=$(tree_rss "$prog" heaptrack) ;;
  esac
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# --- the table --------------------------------------------------------------
# summary FILE COLUMN: "median min max" of one column.
summary() {
  awk -v c="$2" '{ print $c }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                              print m, v[1], v[NR] }'
}

rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$TOP" status --porcelain -- src/runtime src/profile 2>/dev/null | grep -q . && echo "+changes" || true)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "cprof heap-profiling overhead: median of $RUNS interleaved runs (gperftools, heaptrack on g++: $SLOW_RUNS)"
echo "libcprof.so at $rev$dirty; $cpu, $(nproc) CPUs; load average $load0 before, $load1 after; ${elapsed}s"
echo "allocations: counted with cprof at CPROF_RATE=1 (go tool pprof, alloc_objects)"
echo "x plain: median / median of plain; x own: against the same allocator without profiling"
echo
printf '%-29s %4s %7s %15s %7s %7s %7s %7s %8s %7s %5s\n' \
  "program / configuration" runs "wall s" "min-max" "x plain" "x own" "cpu s" "x plain" "RSS MB" "x plain" load
for prog in $progs; do
  read -r pt _ _ <<<"$(summary "$W/res/$prog.plain" 1)"
  read -r pc _ _ <<<"$(summary "$W/res/$prog.plain" 2)"
  read -r pm _ _ <<<"$(summary "$W/res/$prog.plain" 3)"
  printf '%s (%s allocations)\n' "$prog" "${ALLOCS[$prog]:-?}"
  for cfg in $CONFIGS; do
    f=$W/res/$prog.$cfg
    if [ -f "$f.failed" ]; then
      printf '  %-27s failed, %s\n' "${LABEL[$cfg]}" "$(cat "$f.failed")"
      continue
    fi
    read -r t tmin tmax <<<"$(summary "$f" 1)"
    read -r c _ _ <<<"$(summary "$f" 2)"
    read -r m _ _ <<<"$(summary "$f" 3)"
    read -r ld _ _ <<<"$(summary "$f" 4)"
    own=""
    if [ -n "${BASE[$cfg]:-}" ]; then
      read -r bt _ _ <<<"$(summary "$W/res/$prog.${BASE[$cfg]}" 1)"
      own=$(awk -v a="$t" -v b="$bt" 'BEGIN { printf "%.3f", a / b }')
    fi
    awk -v l="${LABEL[$cfg]}" -v n="$(wc -l <"$f")" -v t="$t" -v lo="$tmin" -v hi="$tmax" \
        -v pt="$pt" -v own="$own" -v c="$c" -v pc="$pc" -v m="$m" -v pm="$pm" -v ld="$ld" 'BEGIN {
      cr = pc > 0 ? sprintf("%.3f", c / pc) : "n/a"
      printf "  %-27s %4d %7.3f %7.3f-%-7.3f %7.3f %7s %7.2f %7s %8.1f %7.3f %5.1f\n",
             l, n, t, lo, hi, t / pt, own, c, cr, m / 1024, m / pm, ld }'
    if [ "$cfg" = heaptrack ] && [ -n "${TREE[$prog]:-}" ]; then
      read -r tsum thwm <<<"${TREE[$prog]}"
      awk -v s="$tsum" -v h="$thwm" -v pm="$pm" 'BEGIN {
        printf "  %-27s %4d %7s %15s %7s %7s %7s %7s %8.1f %7.3f\n", "  all processes, summed", 1, "", "", "", "", "", "", s / 1024, s / pm
        printf "  %-27s %4d %7s %15s %7s %7s %7s %7s %8.1f %7.3f\n", "  all processes, own peaks", 1, "", "", "", "", "", "", h / 1024, h / pm }'
    fi
  done
done
# ratio PROG CONFIG [COLUMN]: median wall time (column 1; 2: CPU time) of
# CONFIG / median of plain.
ratio() {
  local a b
  read -r a _ _ <<<"$(summary "$W/res/$1.$2" "${3:-1}")"
  read -r b _ _ <<<"$(summary "$W/res/$1.plain" "${3:-1}")"
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'
}
# verdict PROG CONFIG COLUMN LIMIT: "ok" when the ratio of medians is at
# most LIMIT; above it, "MISSED" when the runs are slower than plain's
# beyond chance (one-sided Mann-Whitney p < 0.05), else "noise". Then P
# (the share of (run, plain run) pairs where the run is slower; 0.5: no
# difference) and p, and plain's own spread ((max - min) / median).
verdict() {
  local r P p m lo hi
  r=$(ratio "$1" "$2" "$3")
  read -r P p <<<"$(slower_p "$W/res/$1.$2" "$W/res/$1.plain" "$3")"
  read -r m lo hi <<<"$(summary "$W/res/$1.plain" "$3")"
  awk -v r="$r" -v lim="$4" -v P="$P" -v p="$p" -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN {
    v = r <= lim ? "ok" : (p < 0.05 ? "MISSED" : "noise")
    printf "%s %s (P(slower) %s, p %s; plain spread %.1f%%)", r, v, P, p, (m > 0 ? (hi - lo) / m * 100 : 0) }'
}
echo
echo "target: cprof at the default rate <= 1.03x plain wall time, or the difference noise"
echo "  (ok: <= 1.03; above: MISSED if slower beyond chance, one-sided Mann-Whitney p < 0.05 over"
echo "  the interleaved runs, else noise; P(slower): share of (run, plain run) pairs where the"
echo "  cprof run is the slower, 0.5 = no difference; the CPU time's verdict in brackets)"
for prog in $progs; do
  read -r ld _ _ <<<"$(summary "$W/res/$prog.cprof" 4)"
  line="  $prog: $(verdict "$prog" cprof 1 1.03) [cpu $(verdict "$prog" cprof 2 1.03)] load $ld"
  if [ -n "$EXTRAS" ]; then
    line="$line; with peak and leaks at exit: $(ratio "$prog" cprofpeak)"
    line="$line; with the memory profile: $(ratio "$prog" cprofmem)"
  fi
  case " $CONFIGS " in *" cprofref "*) line="$line (ref $(ratio "$prog" cprofref))" ;; esac
  line="$line; at rate 1: $(ratio "$prog" cprof1)"
  [ ! -f "$W/res/$prog.heaptrack" ] || line="$line (heaptrack $(ratio "$prog" heaptrack))"
  echo "$line"
done
[ -z "$EXTRAS" ] || echo
[ -z "$EXTRAS" ] || echo "target: the flight recorder (CPROF_RECORD) at the default rate <= 1.03x cprof alone; its ring's bytes per minute (40 B an event)"
for prog in $progs; do
  [ -n "$EXTRAS" ] || break
  r=$(ratio "$prog" cprofrec); b=$(ratio "$prog" cprof)
  own=$(awk -v a="$r" -v b="$b" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
  mem=$(awk '{ e += $1; s += $2 } END { printf "%d events in %.2f s: %.1f KiB/min", e / NR, s / NR, (s > 0 ? e * 40 / s * 60 / 1024 : 0) }' "$W/res/$prog.recmem")
  echo "  $prog: $own x cprof $(awk -v r="$own" 'BEGIN { print r <= 1.03 ? "ok" : "MISSED" }'); $mem"
done
# rss PROG CONFIG: median peak RSS in MB (GNU time %M).
rss() {
  local m
  read -r m _ _ <<<"$(summary "$W/res/$1.$2" 3)"
  awk -v m="$m" 'BEGIN { printf "%.1f", m / 1024 }'
}
echo
echo "target: cprof at CPROF_RATE=1 <= 1.5x plain wall time (CPU time ratio in brackets), with peak RSS below heaptrack's"
for prog in $progs; do
  r=$(ratio "$prog" cprof1)
  line="  $prog: $r $(awk -v r="$r" 'BEGIN { print r <= 1.5 ? "ok" : "MISSED" }') [cpu $(ratio "$prog" cprof1 2)]; RSS $(rss "$prog" cprof1) MB"
  [ ! -f "$W/res/$prog.heaptrack" ] || case " $CONFIGS " in *" heaptrack "*)
    line="$line, heaptrack $(rss "$prog" heaptrack) MB (%M)"
    if [ -n "${TREE[$prog]:-}" ]; then
      read -r tsum thwm <<<"${TREE[$prog]}"
      line="$line, $(awk -v s="$tsum" -v h="$thwm" 'BEGIN { printf "%.1f-%.1f MB", s / 1024, h / 1024 }') all its processes"
    fi ;;
  esac
  echo "$line"
done
