#!/bin/sh
# The CPU profile's edges (tests/progs/cpu_misc.c): bad CPROF_CPU_HZ and
# CPROF_CPU_PROFILE values (one stderr line naming the variable, the
# program unaffected), CPROF_CPU_HZ setting the period, a fork child (no
# profile of its own, nothing of it in the parent's), a program with its
# own SIGPROF handler and setitimer (its signals still reach it, cprof's
# never do), a program that replaces cprof's handler mid-profile (a
# warning, no crash), and many distinct stacks (the table grows without
# losing a sample).
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"

cc_prog "$T/misc" "$PROGS/cpu_misc.c"
cc_prog "$T/misc_linked" "$PROGS/cpu_misc.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"

# total_ms PROFILE: the header's "Total samples", in ms.
total_ms() {
  go tool pprof -top -unit=ms "$1" 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p'
}

# --- bad values: one line, the program runs on ------------------------------------------
for v in 0 -5 abc 10001 1e3 ""; do
  CPROF_CPU_HZ="$v" CPROF_CPU_PROFILE="$T/hz.pb.gz" LD_PRELOAD="$LIB" "$T/misc" fork 2> "$T/hz.err" ||
    fail "CPROF_CPU_HZ=$v: the program failed"
  [ "$(wc -l < "$T/hz.err")" -eq 1 ] && grep -q "^cprof: CPROF_CPU_HZ=\"$v\" is not valid: .*; CPU profiling is off\$" "$T/hz.err" ||
    { cat "$T/hz.err"; fail "CPROF_CPU_HZ=$v: want one line naming it"; }
  [ -e "$T/hz.pb.gz" ] && fail "CPROF_CPU_HZ=$v: a profile was written"
done
for v in "$T/no/such/dir/cpu.pb.gz" "$T/cpu.%q.pb.gz" ""; do
  CPROF_CPU_PROFILE="$v" LD_PRELOAD="$LIB" "$T/misc" fork 2> "$T/path.err" || fail "CPROF_CPU_PROFILE=$v: the program failed"
  [ "$(wc -l < "$T/path.err")" -eq 1 ] && grep -q "^cprof: CPROF_CPU_PROFILE=\"$v\"" "$T/path.err" ||
    { cat "$T/path.err"; fail "CPROF_CPU_PROFILE=$v: want one line naming it"; }
done
note "bad values: one line each"

# --- CPROF_CPU_HZ sets the period ------------------------------------------------------------
# The total against what a bare timer of the same period got on the same
# thread (tests/progs/ktimer.h; 0.5 s of CPU, but the expiries the kernel
# has not noticed when a timer stops are lost, more on a loaded machine):
# within the two timers' phases, 3 periods.
CPROF_CPU_HZ=250 CPROF_CPU_PROFILE="$T/hz250.pb.gz" LD_PRELOAD="$LIB" "$T/misc" fork 250 > "$T/hz250.out" ||
  fail "hz250: the program failed"
read -r _ w < "$T/hz250.out"
go tool pprof -raw "$T/hz250.pb.gz" 2>/dev/null | grep -q '^Period: 4000000$' || fail "hz250: period is not 4 ms"
t=$(total_ms "$T/hz250.pb.gz")
awk -v t="$t" -v w="${w:-0}" 'BEGIN { d = t - w; exit !(w >= 250 && d >= -12 && d <= 12) }' ||
  fail "hz250: total ${t}ms, the kernel delivered ${w}ms of 500"
note "CPROF_CPU_HZ=250: period 4 ms, total ${t}ms, the kernel delivered ${w}ms"

# --- fork: the child profiles nothing and writes nothing -----------------------------------
mkdir "$T/fork"
# The parent keeps being profiled after the fork: its total is what a
# bare timer on its thread got (beside four busy loops, the kernel once
# delivered nothing of parent_after's 0.2 s after the parent's wait, to
# either timer: a function's presence is not a test).
CPROF_CPU_PROFILE="$T/fork/cpu.%p.pb.gz" LD_PRELOAD="$LIB" "$T/misc" fork 100 > "$T/fork.out" 2> "$T/fork.err" ||
  fail "fork: the program failed"
[ -s "$T/fork.err" ] && { cat "$T/fork.err"; fail "fork: stderr not empty"; }
read -r _ w < "$T/fork.out"
set -- "$T"/fork/*
[ $# -eq 1 ] || fail "fork: want the parent's profile only, have: $*"
go tool pprof -top -nodefraction=0 "$1" 2>/dev/null > "$T/fork.top"
t=$(total_ms "$1")
awk -v t="${t:-0}" -v w="${w:-0}" 'BEGIN { d = t - w; exit !(w > 0 && d >= -30 && d <= 30) }' ||
  { cat "$T/fork.top"; fail "fork: total ${t}ms, the kernel delivered ${w}ms to the parent"; }
grep -q ' child_burn$' "$T/fork.top" && { cat "$T/fork.top"; fail "fork: the child's CPU in the parent's profile"; }
note "fork: the parent's profile only, ${t}ms (the kernel delivered ${w}ms)"

# --- the program's own SIGPROF handler -----------------------------------------------------
"$T/misc_linked" chain "$T/chain.pb.gz" > "$T/chain.out" 2> "$T/chain.err" || { cat "$T/chain.err"; fail "chain: the program failed"; }
grep -q "^cprof: the program has its own SIGPROF handler" "$T/chain.err" || { cat "$T/chain.err"; fail "chain: no notice"; }
read -r _ own _ timer _ witness < "$T/chain.out"
[ "$timer" -eq 0 ] || fail "chain: the program's handler got $timer of cprof's timer signals"
# setitimer's process-wide SIGPROF carries no overrun count: on a busy
# machine several periods fold into one signal. It must still arrive.
[ "$own" -ge 10 ] && [ "$own" -le 150 ] || fail "chain: the program's handler ran $own times for 1 s of CPU at 100 Hz"
t=$(total_ms "$T/chain.pb.gz")
# 1 s of CPU; what a bare 100 Hz timer got on the thread, within 3 periods.
awk -v t="$t" -v w="${witness:-0}" 'BEGIN { d = t - w; exit !(w >= 500 && d >= -30 && d <= 30) }' ||
  fail "chain: total ${t}ms, the kernel delivered ${witness}ms of 1000"
note "chain: the program's handler ran $own times, none for cprof; profile ${t}ms, the kernel delivered ${witness}ms"

"$T/misc_linked" replace "$T/replace.pb.gz" > "$T/replace.out" 2> "$T/replace.err" || fail "replace: the program failed"
grep -q "^stop 0 " "$T/replace.out" || { cat "$T/replace.out"; fail "replace: stop failed"; }
grep -q "^cprof: the program replaced cprof's SIGPROF handler" "$T/replace.err" || { cat "$T/replace.err"; fail "replace: no warning"; }
go tool pprof -top "$T/replace.pb.gz" > /dev/null 2>&1 || fail "replace: profile unreadable"
note "replace: warned"

# --- many distinct stacks -------------------------------------------------------------------
# Stacks of ~255 frames: the table's frame pool (16384 words at first)
# must grow after ~64 stacks, and again after ~128. Every stack is distinct
# (2^250 paths), so their number is the number of cprof's timer signals,
# which the kernel sends only at a clock tick that finds the thread
# running: one signal may stand for several periods, 3 s of CPU gave 87 to
# 750 signals by load. So the program runs until a bare timer of the same
# period on its CPU clock (tests/progs/ktimer.h) got 250 signals; cprof's
# timer is checked at the same ticks, its other phase costing a signal
# now and then (238-254 stacks seen beside two busy loops): 200 are past
# both growths. The total must be the witness's periods, up to a few
# periods of phase at each end.
CPROF_DEPTH=256 CPROF_CPU_HZ=1000 CPROF_CPU_PROFILE="$T/distinct.pb.gz" LD_PRELOAD="$LIB" "$T/misc" distinct 1000 \
  > "$T/distinct.out" || fail "distinct: the program failed"
read -r w1 signals w2 periods w3 cpu < "$T/distinct.out"
[ "$w1 $w2 $w3" = "signals periods cpu" ] && [ "$signals" -ge 250 ] || { cat "$T/distinct.out"; fail "distinct: output"; }
go tool pprof -traces "$T/distinct.pb.gz" 2>/dev/null | grep -c -- '-----------+' > "$T/distinct.n"
n=$(cat "$T/distinct.n")
t=$(total_ms "$T/distinct.pb.gz")
awk -v t="$t" -v p="$periods" 'BEGIN { d = t - p; exit !(d >= -5 - p / 100 && d <= 5 + p / 100) }' ||
  fail "distinct: total ${t}ms, the witness timer ${periods} periods of 1 ms (CPU ${cpu}ms)"
[ "$n" -ge 200 ] || fail "distinct: only $n stacks for the witness's $signals signals"
note "distinct: $n stacks (witness: $signals signals), ${t}ms (witness: ${periods}ms, CPU ${cpu}ms)"
exit 0
