#!/bin/sh
# The execution trace of a whole run (CPROF_TRACE) of tests/progs/trace_prog.c,
# whose four workers fight over a mutex in contend(), burn CPU in spin(),
# allocate in churn() and annotate every round (task "round", region "phase",
# a log message), read by go tool trace (see trace_common.inc): it parses, a
# goroutine per thread, block events under contend() as long as the program
# measured, CPU samples (CPROF_CPU_PROFILE runs too), heap events, the user
# pages of its web server. Also: the pattern's %p, and a bad CPROF_TRACE.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"
command -v curl >/dev/null 2>&1 || skip "skip: curl not installed"
unset http_proxy HTTP_PROXY no_proxy NO_PROXY
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

cc_prog "$T/tp" "$PROGS/trace_prog.c" -ldl
CPROF_TRACE="$T/run.%p.trace" CPROF_CPU_PROFILE="$T/cpu.pb.gz" LD_PRELOAD="$LIB" \
  "$T/tp" work 1.5 > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "program failed"; }
grep -q '^threads 4$' "$T/out" || fail "program printed $(cat "$T/out")"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "stderr not empty"; }
set -- "$T"/run.*.trace
[ -f "$1" ] && [ "$#" -eq 1 ] || fail "no trace run.PID.trace: $*"
trace_work "$1" "$(awk '$1 == "waited_ns" { print $2 }' "$T/out")"
trace_pages "$1"
note "CPROF_TRACE"

# A bad pattern: one line, the program runs on.
CPROF_TRACE="$T/x%q" LD_PRELOAD="$LIB" "$T/tp" storm 10 > "$T/out" 2> "$T/err" || fail "bad pattern: program failed"
grep -q 'CPROF_TRACE="[^"]*" is not valid' "$T/err" || { cat "$T/err"; fail "bad pattern: no message"; }
[ "$(cat "$T/out")" = "storm 10" ] || fail "bad pattern: program printed $(cat "$T/out")"
note "bad CPROF_TRACE"
