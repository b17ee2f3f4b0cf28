#!/bin/sh
# Threads that block SIGPROF are in the CPU profile (sigmask.h).
# tests/progs/cpu_sigblock.c runs threads that block every signal and
# compute: created so by a creator that blocks every signal around
# pthread_create (liblzma's way: inherit_work) or blocking them
# themselves (self_work), and a main thread that inherits SIGPROF blocked
# from its parent (main_work). Each runs a witness timer (tests/progs/ktimer.h)
# on its CPU clock, the signal it lets through: the profile must give each
# function what the kernel delivered, within the two timers' phases (3
# periods), and each thread must still read back the mask it set. Linked:
# threads that blocked SIGPROF before cprof_cpu_start and set no mask
# after are beyond reach: their time is in the profile as
# cprof_sigprof_blocked (with a comment) and said on stderr; and a SIGPROF
# of the program's own handler, sent while the thread blocks SIGPROF,
# stays pending until unblocked. Held: tests/progs/cpu_sigheld.c blocks
# SIGPROF, computes (cprof's unwinder, libunwind, masks every signal
# meanwhile), then holds a SIGPROF of its own across mask calls that keep
# it blocked while it computes again: a thread it creates reads SIGPROF
# blocked, the signal stays pending until unblocked, and both works are
# in the profile. Last, a real program: `xz -T2`, whose liblzma workers
# block every signal.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"

UNIT=500   # ms of CPU per thread
PERIOD=10  # ms, at cprof's default CPROF_CPU_HZ (the witness's too)
cc_prog "$T/sb" "$PROGS/cpu_sigblock.c"
cc_prog "$T/sb_linked" "$PROGS/cpu_sigblock.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
cc_prog "$T/sh" "$PROGS/cpu_sigheld.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD" -lm

# cum NAME PROFILE: "function ms" per function (cumulative).
cum() {
  go tool pprof -top -cum -unit=ms -nodefraction=0 -nodecount=100000 "$2" 2>/dev/null > "$T/$1.top"
  awk 'started { v=$4; sub(/ms$/, "", v); print $6, v } /^ *flat  flat%/ { started=1 }' "$T/$1.top" > "$T/$1.cum"
}
# ms_of NAME FN: FN's cumulative ms in NAME's profile (0 if absent).
ms_of() {
  awk -v f="$2" '$1 == f { v=$2 } END { print v + 0 }' "$T/$1.cum"
}
# near GOT WANT SLACK: |GOT - WANT| <= SLACK.
near() {
  awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= s) }'
}

# check_truths LABEL NAME: each "TRUTH fn cpu kernel" line of NAME.out
# against fn's time in NAME.pb.gz: within 3 periods of what the kernel
# delivered to a bare timer on the same thread.
check_truths() {
  cum "$2" "$T/$2.pb.gz"
  while read -r tag fn cpu kernel; do
    [ "$tag" = TRUTH ] || continue
    got=$(ms_of "$2" "$fn")
    near "$got" "$kernel" $((3 * PERIOD)) ||
      { cat "$T/$2.top"; fail "$1: $fn ${got}ms, the kernel delivered ${kernel}ms (CPU ${cpu}ms)"; }
    note "$1: $fn ${got}ms, the kernel delivered ${kernel}ms, CPU ${cpu}ms"
  done < "$T/$2.out"
}

# --- preloaded: threads that block every signal, made during the profile -------------
CPROF_CPU_PROFILE="$T/pre.pb.gz" LD_PRELOAD="$LIB" "$T/sb" $UNIT > "$T/pre.out" 2> "$T/pre.err" ||
  { cat "$T/pre.err"; fail "preload: the program failed"; }
[ -s "$T/pre.err" ] && { cat "$T/pre.err"; fail "preload: stderr not empty"; }
[ "$(grep -c '^TRUTH ' "$T/pre.out")" = 2 ] && grep -q '^RUSAGE ' "$T/pre.out" ||
  { cat "$T/pre.out"; fail "preload: output"; }
check_truths preload pre
grep -q cprof_sigprof_blocked "$T/pre.top" && { cat "$T/pre.top"; fail "preload: time without stacks"; }

# --- preloaded: a main thread that inherits SIGPROF blocked -------------------------------
# The profile starts on that thread (CPROF_CPU_PROFILE): it lets SIGPROF
# through from then on.
python3 -c '
import signal, subprocess, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGINT})
sys.exit(subprocess.run(sys.argv[1:]).returncode)
' env CPROF_CPU_PROFILE="$T/main.pb.gz" LD_PRELOAD="$LIB" "$T/sb" $UNIT main > "$T/main.out" 2> "$T/main.err" ||
  { cat "$T/main.err"; fail "main: the program failed"; }
[ -s "$T/main.err" ] && { cat "$T/main.err"; fail "main: stderr not empty"; }
read -r tag fn cpu kernel < "$T/main.out"
[ "$tag $fn" = "TRUTH main_work" ] || { cat "$T/main.out"; fail "main: output"; }
cum main "$T/main.pb.gz"
got=$(ms_of main main_work)
near "$got" "$kernel" $((3 * PERIOD)) ||
  { cat "$T/main.top"; fail "main: main_work ${got}ms, the kernel delivered ${kernel}ms (CPU ${cpu}ms)"; }
note "main: main_work ${got}ms, the kernel delivered ${kernel}ms, CPU ${cpu}ms"

# --- linked: threads that blocked SIGPROF before the start ------------------------------
"$T/sb_linked" $UNIT "$T/linked.pb.gz" > "$T/linked.out" 2> "$T/linked.err" ||
  { cat "$T/linked.err"; fail "linked: the program failed"; }
grep -qx 'pending ok' "$T/linked.out" || { cat "$T/linked.out"; fail "linked: output"; }
read -r _ _ cpu kernel < "$T/linked.out"
cum linked "$T/linked.pb.gz"
got=$(ms_of linked cprof_sigprof_blocked)
# The thread that exits first brings its timer's held signal (its periods,
# as the witness counts them); the one still blocking at the stop has its
# CPU clock read.
awk -v g="$got" -v lo=$((kernel - 3 * PERIOD)) -v hi=$((cpu + 3 * PERIOD)) 'BEGIN { exit !(g >= lo && g <= hi) }' ||
  { cat "$T/linked.top"; fail "linked: cprof_sigprof_blocked ${got}ms, the kernel delivered ${kernel}ms, CPU ${cpu}ms"; }
go tool pprof -raw "$T/linked.pb.gz" 2>/dev/null | grep -q 'cprof_sigprof_blocked: CPU time of threads that blocked SIGPROF' ||
  fail "linked: no comment in the profile"
grep -q "^cprof: [0-9]* ms of CPU time were spent by threads that blocked SIGPROF since before the CPU profile started (1 still did at its end)" "$T/linked.err" ||
  { cat "$T/linked.err"; fail "linked: no warning"; }
note "linked: cprof_sigprof_blocked ${got}ms, the kernel delivered ${kernel}ms, CPU ${cpu}ms"

# --- linked: a SIGPROF of the program's own held while it computes ----------------------
"$T/sh" $UNIT "$T/held.pb.gz" > "$T/held.out" 2> "$T/held.err" ||
  { cat "$T/held.err"; fail "held: the program failed"; }
grep -v '^cprof: the program has its own SIGPROF handler' "$T/held.err" && fail "held: stderr"
[ "$(grep -c '^TRUTH ' "$T/held.out")" = 2 ] && grep -qx 'held ok' "$T/held.out" ||
  { cat "$T/held.out"; fail "held: output"; }
check_truths held held

# --- xz -T2: liblzma's workers --------------------------------------------------------------
command -v xz >/dev/null 2>&1 || skip "skip: xz (xz-utils) not installed"
python3 -c '
import random
random.seed(1)
w = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(2, 9))) for _ in range(5000)]
with open("'"$T"'/in.txt", "w") as f:
    for _ in range(110000):
        f.write(" ".join(random.choice(w) for _ in range(12)) + "\n")
'
# Blocks of 1 MiB: 8 MB of input keep both workers busy. The process's CPU
# time comes from its parent's RUSAGE_CHILDREN.
python3 -c '
import os, resource, subprocess, sys
with open(sys.argv[1], "rb") as i, open(sys.argv[2], "wb") as o, open(sys.argv[3], "wb") as e:
    rc = subprocess.run(["xz", "-T2", "-6", "--block-size=1MiB", "-c"], stdin=i, stdout=o, stderr=e).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, round((r.ru_utime + r.ru_stime) * 1000))
' "$T/in.txt" "$T/in.xz" "$T/xz.err" > "$T/xz.rc" ||
  fail "xz: cannot run"
read -r rc cpu < "$T/xz.rc"
[ "$rc" = 0 ] || { cat "$T/xz.err"; fail "xz: exit status $rc"; }
python3 -c '
import os, resource, subprocess, sys
env = dict(os.environ, LD_PRELOAD=sys.argv[4], CPROF_CPU_PROFILE=sys.argv[5])
with open(sys.argv[1], "rb") as i, open(sys.argv[2], "wb") as o, open(sys.argv[3], "wb") as e:
    rc = subprocess.run(["xz", "-T2", "-6", "--block-size=1MiB", "-c"], stdin=i, stdout=o, stderr=e, env=env).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, round((r.ru_utime + r.ru_stime) * 1000))
' "$T/in.txt" "$T/prof.xz" "$T/xzp.err" "$LIB" "$T/xz.pb.gz" > "$T/xzp.rc" || fail "xz: cannot run under cprof"
read -r rc cpu < "$T/xzp.rc"
[ "$rc" = 0 ] || { cat "$T/xzp.err"; fail "xz under cprof: exit status $rc"; }
[ -s "$T/xzp.err" ] && { cat "$T/xzp.err"; fail "xz under cprof: stderr not empty"; }
cmp -s "$T/in.xz" "$T/prof.xz" || fail "xz under cprof: output differs from a plain run"
total=$(go tool pprof -top -unit=ms "$T/xz.pb.gz" 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p')
# Blind, the profile held the main thread's share (1%). Periods still
# unnoticed when a worker stops for good are lost to any CPU timer, more
# on a loaded machine: half of the CPU time is far from both.
awk -v t="${total:-0}" -v c="$cpu" -v p=$PERIOD 'BEGIN { exit !(t >= c / 2 && t <= c + 3 * p) }' ||
  fail "xz: profile total ${total:-0}ms, process CPU ${cpu}ms"
note "xz -T2: profile total ${total}ms, process CPU ${cpu}ms"
exit 0
