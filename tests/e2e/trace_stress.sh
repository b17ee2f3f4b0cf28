#!/bin/sh
# Execution traces (CPROF_TRACE) of programs that make a tracer's life hard,
# each read by go tool trace -d (tests/progs/trace_prog.c): one that forks
# (the parent's trace holds its own threads; the child writes none), one
# that creates 400 short-lived threads (400 goroutines, each created,
# started and ended), and one that exits from a thread while its workers
# are blocking and allocating; and a trace whose buffers run out.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"

cc_prog "$T/tp" "$PROGS/trace_prog.c" -ldl
mkdir "$T/f"
CPROF_TRACE="$T/f/fork.%p.trace" LD_PRELOAD="$LIB" "$T/tp" fork > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "fork: program failed"; }
[ "$(cat "$T/out")" = "forked 0" ] || fail "fork: program printed $(cat "$T/out")"
set -- "$T"/f/fork.*.trace
[ "$#" -eq 1 ] && [ -f "$1" ] || fail "fork: not one trace: $(ls "$T/f")"
trace_parse "$1"
n=$(awk '$2 == "GoStart" { print $6 }' "$1.d" | sort -u | wc -l)
[ "$n" -eq 5 ] || fail "fork: $n goroutines, not 5"
note "fork"

CPROF_TRACE="$T/storm.trace" LD_PRELOAD="$LIB" "$T/tp" storm 400 > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "storm: program failed"; }
[ "$(cat "$T/out")" = "storm 400" ] || fail "storm: program printed $(cat "$T/out")"
trace_parse "$T/storm.trace"
n=$(awk '$2 == "GoCreate" && $4 == "g=1"' "$T/storm.trace.d" | wc -l)
[ "$n" -eq 400 ] || fail "storm: main created $n goroutines, not 400"
[ "$(trace_count "$T/storm.trace" GoEnd)" -eq 400 ] || fail "storm: not 400 GoEnd events"
n=$(awk '$2 == "GoStart" { print $6 }' "$T/storm.trace.d" | sort -u | wc -l)
[ "$n" -eq 401 ] || fail "storm: $n goroutines, not 401"
note "storm"

CPROF_TRACE="$T/exit.trace" LD_PRELOAD="$LIB" "$T/tp" exit > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "exit: program failed"; }
[ "$(cat "$T/out")" = "exiting" ] || fail "exit: program printed $(cat "$T/out")"
trace_parse "$T/exit.trace"
[ "$(trace_count "$T/exit.trace" GoBlockSync)" -gt 0 ] || fail "exit: no block events"
n=$(awk '$2 == "GoStart" { print $6 }' "$T/exit.trace.d" | sort -u | wc -l)
[ "$n" -eq 6 ] || fail "exit: $n goroutines, not 6 (main, 4 workers, the quitter)"
note "exit"

# A pool too small for the threads (CPROF_TRACE_BUFFER=64K: 4 buffers for
# 5 threads and the writer): events are dropped, whole state changes at a
# time, so the trace still parses, and it says how many (a log message of
# category cprof, and one line on stderr).
CPROF_TRACE_BUFFER=64K CPROF_TRACE="$T/drop.trace" LD_PRELOAD="$LIB" "$T/tp" work 0.5 > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "drop: program failed"; }
grep -q '^threads 4$' "$T/out" || fail "drop: program printed $(cat "$T/out")"
trace_parse "$T/drop.trace"
grep -Eq ' UserLog .* category=cprof message=[0-9]+ events dropped: the trace outgrew its 64 KiB of buffers' "$T/drop.trace.d" ||
  fail "drop: no message in the trace"
grep -Eq '^cprof: trace: [0-9]+ events dropped' "$T/err" || { cat "$T/err"; fail "drop: no message on stderr"; }
note "drops"
