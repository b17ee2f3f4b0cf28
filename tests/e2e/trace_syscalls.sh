#!/bin/sh
# System calls and sleeps in the execution trace (syshooks.c), read by every
# go tool trace of GOS (trace_common.inc): tests/progs/trace_sys.c waits in
# read(2) of a pipe (pipe_wait) and poll(2) of an idle pipe (poll_wait):
# -pprof=syscall names both, each as long as the program measured; in
# accept(2) (accept_wait): -pprof=net; in nanosleep(2) (sleep_wait): a
# GoSleep as long. Tolerance: 20% or 20 ms of each measured wait (the
# program's clock reads are around the hook's). errno is kept (EBADF of a
# bad read); with no trace the program runs the same. And calls from a signal
# handler (a SIGALRM every 200 us writing to a self-pipe that main reads,
# another thread locking, allocating, sleeping): the trace stays valid
# (each thread's events in time order, though a handler's calls are
# recorded inside the call they interrupted; a thread that a handler's
# call made a goroutine before its start routine ran is still the goroutine
# its creator made). A thread whose TSD destructor writes after cprof's
# own ended its goroutine: no goroutine more (20 threads and main).
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"

cc_prog "$T/ts" "$PROGS/trace_sys.c" -pthread

# the program's result: its own checks passed, each wait measured
check_out() {
  [ "$(tail -n 1 "$1")" = ok ] || { cat "$1"; fail "$1: the program's result"; }
  [ "$(grep -c '_wait [0-9][0-9]*$' "$1")" -eq 4 ] || { cat "$1"; fail "$1: not four waits"; }
}
measured() { awk -v f="$1" '$1 == f { print $2 }' "$T/out"; }
# near GOT WANT: within 20% or 20 ms of WANT (ns)
near() {
  awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; t = 0.2 * w; if (t < 2e7) t = 2e7; exit !(d <= t) }'
}

# No trace: the hooks call straight through.
LD_PRELOAD="$LIB" "$T/ts" > "$T/out0" 2> "$T/err0" || { cat "$T/err0"; fail "no trace: the program failed"; }
check_out "$T/out0"

CPROF_TRACE="$T/s.trace" LD_PRELOAD="$LIB" "$T/ts" > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "the program failed under the trace"; }
check_out "$T/out"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "stderr not empty"; }
tr="$T/s.trace"
trace_parse "$tr"

for g in $GOS; do
  for w in syscall:pipe_wait syscall:poll_wait net:accept_wait; do
    kind=${w%%:*}; fn=${w#*:}
    top=$(trace_pprof "$g" "$kind" "$tr")
    got=$(top_flat "$top" "$fn"); want=$(measured "$fn")
    near "$got" "$want" || { cat "$top"; fail "$g: -pprof=$kind: $fn ${got}ns, the program measured ${want}ns"; }
    note "$g -pprof=$kind: $fn ${got}ns, measured ${want}ns"
  done
  # sockets are not syscalls, pipes not network waits
  [ "$(top_flat "$T/s.trace.syscall.$(go_minor "$g").top" accept_wait)" = 0 ] || fail "$g: accept_wait in -pprof=syscall"
  [ "$(top_flat "$T/s.trace.net.$(go_minor "$g").top" pipe_wait)" = 0 ] || fail "$g: pipe_wait in -pprof=net"
done

# The sleep: go tool trace 1.19 -d, main's (g=1) GoSleep to its GoUnblock.
got=$(awk '$2 == "GoSleep" && $4 == "g=1" { t = $1 } $2 == "GoUnblock" && t && $6 == "g=1" { print $1 - t; t = 0 }' "$tr.d")
[ "$(echo "$got" | grep -c .)" -eq 1 ] || fail "1.19: main slept $(echo $got) times, not once"
near "$got" "$(measured sleep_wait)" || fail "1.19: GoSleep ${got}ns, sleep_wait measured $(measured sleep_wait)ns"
note "1.19 GoSleep ${got}ns, measured $(measured sleep_wait)ns"
# 1.22+ -d=1: the transition to Waiting for "sleep" under sleep_wait, to
# the goroutine's next Waiting->Runnable.
for g in $GOS; do
  v=$(go_minor "$g"); [ "$v" -ge 22 ] || continue
  got=$(awk '/StateTransition/ { cur = $0; at = $5; sub(/Time=/, "", at) }
    /Reason="sleep".*Running->Waiting/ { sl = 1; next }
    sl && /^TransitionStack=/ { getline; if ($1 == "sleep_wait") { t = at; id = cur; sub(/.*GoID=/, "", id); sub(/ .*/, "", id) } sl = 0 }
    t && /Waiting->Runnable/ && $0 ~ ("GoID=" id " ") { print at - t; t = 0 }' "$tr.d$v")
  [ "$(echo "$got" | grep -c .)" -eq 1 ] || fail "$g: sleep_wait slept $(echo $got) times, not once"
  near "$got" "$(measured sleep_wait)" || fail "$g: sleep ${got}ns, sleep_wait measured $(measured sleep_wait)ns"
  note "$g sleep ${got}ns, measured $(measured sleep_wait)ns"
done

# Traced calls from a signal handler, three runs (a handler lands inside a
# traced call in most).
for i in 1 2 3; do
  CPROF_TRACE="$T/sig$i.trace" LD_PRELOAD="$LIB" "$T/ts" signals > "$T/sout" 2> "$T/serr" ||
    { cat "$T/serr"; fail "signals: the program failed"; }
  [ "$(tail -n 1 "$T/sout")" = ok ] && grep -q '^signals [1-9]' "$T/sout" || { cat "$T/sout"; fail "signals: the program's result"; }
  trace_parse "$T/sig$i.trace"
  [ "$(trace_count "$T/sig$i.trace" GoSysCall)" -gt 100 ] || fail "signals: few GoSysCall events"
done
note "signals: $(cat "$T/sout" | head -1) in the last run, its trace valid"

CPROF_TRACE="$T/dtor.trace" LD_PRELOAD="$LIB" "$T/ts" dtor > "$T/dout" 2> "$T/derr" ||
  { cat "$T/derr"; fail "dtor: the program failed"; }
[ "$(cat "$T/dout")" = ok ] || fail "dtor: the program printed $(cat "$T/dout")"
trace_parse "$T/dtor.trace"
n=$(trace_count "$T/dtor.trace" GoCreate); e=$(trace_count "$T/dtor.trace" GoEnd)
[ "$n" -eq 21 ] && [ "$e" -eq 20 ] || fail "dtor: $n goroutines created, $e ended; not 21 and 20"
exit 0
