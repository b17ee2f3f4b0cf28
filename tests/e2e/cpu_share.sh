#!/bin/sh
# The CPU profile's numbers against the truth: tests/progs/cpu_share.c runs
# hot_three (3 units of CPU), cold_one (1 unit, on a thread that exits
# early) and late_half (half a unit, on a thread created after profiling
# started), each measuring its own thread's CPU time and what a bare
# kernel timer of cprof's period on that clock delivered meanwhile
# (tests/progs/ktimer.h). The kernel notices a CPU timer's expiry only at
# a clock tick that finds the thread running, and the expiries still
# unnoticed when a thread stops running for good are lost: beside four
# busy loops such a bare timer lost up to 37% of a thread's periods. So
# both go tool pprof and cprof must attribute each function what the
# kernel delivered, within the two timers' phases (3 periods), and the
# whole profile lies between what the kernel delivered to the three
# threads and the process's own CPU time (getrusage). Variants: preloaded
# with CPROF_CPU_PROFILE (also under CPROF_UNWIND=fp, which the CPU
# profile ignores: it always unwinds with libunwind), and linked with
# cprof_cpu_start/stop while the threads already run. The leaf of every
# sample must be the interrupted instruction itself (an instruction start
# in the disassembly), not a decremented return address.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
[ -x "$BUILD/cprof" ] || fail "no $BUILD/cprof (run make)"

UNIT=600 # ms of CPU per unit
cc_prog "$T/share" "$PROGS/cpu_share.c" -no-pie
cc_prog "$T/share_fp" "$PROGS/cpu_share.c" -fno-omit-frame-pointer
cc_prog "$T/share_linked" "$PROGS/cpu_share.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"

# pprof_tool go|cprof ARGS...: go tool pprof, or build/cprof.
pprof_tool() {
  t=$1; shift
  if [ "$t" = go ]; then go tool pprof "$@"; else "$BUILD/cprof" "$@"; fi
}

PERIOD=10 # ms, at cprof's default CPROF_CPU_HZ (the witness's too)

# near GOT WANT SLACK: |GOT - WANT| <= SLACK.
near() {
  awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= s) }'
}

check() { # NAME PROFILE TRUTHFILE
  name=$1; prof=$2; truth=$3
  [ -s "$prof" ] || fail "$name: no profile written"
  for tool in go cprof; do
    # "cum" per function (in ms), and the header's total
    pprof_tool $tool -top -cum -unit=ms -nodefraction=0 -nodecount=100000 "$prof" 2>/dev/null > "$T/$name.$tool.top"
    grep -q '^Type: cpu$' "$T/$name.$tool.top" || { cat "$T/$name.$tool.top"; fail "$name/$tool: type is not cpu"; }
    grep -q '^Duration: ' "$T/$name.$tool.top" || fail "$name/$tool: no duration"
    awk 'started { v=$4; sub(/ms$/, "", v); print $6, v } /^ *flat  flat%/ { started=1 }' \
      "$T/$name.$tool.top" > "$T/$name.$tool.cum"
    sumk=0
    while read -r tag fn want kernel; do
      [ "$tag" = TRUTH ] || continue
      got=$(awk -v f="$fn" '$1 == f { print $2 }' "$T/$name.$tool.cum")
      [ -n "$got" ] || { cat "$T/$name.$tool.top"; fail "$name/$tool: no $fn in the profile"; }
      # The witness cannot see more than the CPU used (its first expiry
      # comes after a whole period).
      [ "$kernel" -le $((want + PERIOD)) ] || fail "$name: the witness of $fn ${kernel}ms, its CPU ${want}ms"
      near "$got" "$kernel" $((3 * PERIOD)) || { cat "$T/$name.$tool.top"; fail "$name/$tool: $fn ${got}ms, the kernel delivered ${kernel}ms (CPU ${want}ms)"; }
      note "$name/$tool: $fn ${got}ms, the kernel delivered ${kernel}ms, CPU ${want}ms"
      sumk=$((sumk + kernel))
    done < "$truth"
    total=$(sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p' "$T/$name.$tool.top")
    cpu=$(awk '$1 == "RUSAGE" { print $2 }' "$truth")
    [ -n "$total" ] || { cat "$T/$name.$tool.top"; fail "$name/$tool: no total"; }
    awk -v t="$total" -v lo=$((sumk - 9 * PERIOD)) -v hi=$((cpu + 3 * PERIOD)) 'BEGIN { exit !(t >= lo && t <= hi) }' ||
      fail "$name/$tool: total ${total}ms, the kernel delivered ${sumk}ms to the threads, process CPU ${cpu}ms"
    note "$name/$tool: total ${total}ms, the kernel delivered ${sumk}ms to the threads, process CPU ${cpu}ms"
  done
}

# --- preloaded, CPROF_CPU_PROFILE -------------------------------------------------
CPROF_CPU_PROFILE="$T/pre.%p.pb.gz" LD_PRELOAD="$LIB" "$T/share" $UNIT > "$T/pre.truth" 2> "$T/pre.err" ||
  { cat "$T/pre.err"; fail "preload: program failed"; }
[ -s "$T/pre.err" ] && { cat "$T/pre.err"; fail "preload: stderr not empty"; }
set -- "$T"/pre.*.pb.gz
[ $# -eq 1 ] && [ -s "$1" ] || fail "preload: want one profile, have: $*"
check preload "$1" "$T/pre.truth"

# Sample types, period and duration as Go's CPU profiles have them.
go tool pprof -raw "$1" 2>/dev/null > "$T/pre.raw"
grep -q '^PeriodType: cpu nanoseconds$' "$T/pre.raw" || fail "preload: period type"
grep -q '^Period: 10000000$' "$T/pre.raw" || fail "preload: period"
grep -q '^samples/count cpu/nanoseconds$' "$T/pre.raw" || fail "preload: sample types"
# value[1] == value[0] * period in every sample
awk '/^Samples:/ { s=1; next } /^Locations/ { s=0 } s && $2 ~ /:$/ { v=$2; sub(/:$/, "", v); if (v != $1 * 10000000) bad=1 }
     END { exit bad }' "$T/pre.raw" || fail "preload: cpu != samples * period"

# Leaves: every first location of a sample that lies in the program (a
# non-PIE binary: addresses are link addresses) starts an instruction.
objdump -d --no-show-raw-insn "$T/share" | sed -n 's/^ *\([0-9a-f]*\):.*/\1/p' > "$T/insns"
awk '/^Samples:/ { s=1; next } /^Locations/ { s=0; l=1; next } /^Mappings/ { l=0 }
     s && $2 ~ /:$/ { leaf[$3]=1 }
     l { id=$1; sub(/:$/, "", id); if ((id in leaf) && $3 == "M=1") { a=$2; sub(/^0x/, "", a); print a } }' \
  "$T/pre.raw" > "$T/leaves"
[ -s "$T/leaves" ] || { cat "$T/pre.raw"; fail "preload: no leaf in the program"; }
while read -r a; do
  grep -qx "$a" "$T/insns" || fail "preload: leaf 0x$a is not an instruction start"
done < "$T/leaves"
note "preload: $(wc -l < "$T/leaves") leaf addresses, all instruction starts"

# --- preloaded, CPROF_UNWIND=fp (heap stacks by frame pointers) ----------------------
CPROF_UNWIND=fp CPROF_CPU_PROFILE="$T/fp.pb.gz" LD_PRELOAD="$LIB" "$T/share_fp" $UNIT > "$T/fp.truth" ||
  fail "fp: program failed"
check fp "$T/fp.pb.gz" "$T/fp.truth"

# --- linked: cprof_cpu_start with the threads already running ----------------------
"$T/share_linked" $UNIT "$T/linked.pb.gz" > "$T/linked.truth" 2> "$T/linked.err" ||
  { cat "$T/linked.err"; fail "linked: program failed"; }
check linked "$T/linked.pb.gz" "$T/linked.truth"
ls "$T"/linked.pb.gz.tmp.* 2>/dev/null && fail "linked: temporary file left"
exit 0
