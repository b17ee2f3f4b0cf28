#!/bin/sh
# The execution trace of a whole run (CPROF_TRACE) of tests/progs/trace_prog.c,
# whose four workers fight over a mutex in contend(), burn CPU in spin(),
# allocate in churn() and annotate every round (task "round", region "phase",
# a log message), read by go tool trace (see trace_common.inc): it parses, a
# goroutine per thread, block events under contend() as long as the program
# measured, CPU samples (CPROF_CPU_PROFILE runs too), heap events, the user
# pages of its web server. Also: the pattern's %p, a bad CPROF_TRACE, and the C
# API (three traces in a run, its error codes).
# timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"
command -v curl >/dev/null 2>&1 || skip "skip: curl not installed"
unset http_proxy HTTP_PROXY no_proxy NO_PROXY
PIDS=""
trap 'for p in $PIDS; do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

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

# The C API: three traces in one run, each a whole trace of its own (five
# goroutines: main and the workers), and the errors of the CPU profile's
# API (-ENOTCONN, -EINVAL, -EBUSY); annotations do nothing with no trace.
mkdir "$T/api"
LD_PRELOAD="$LIB" "$T/tp" api "$T/api" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "api: program failed"; }
cat > "$T/want" <<'OUT'
idle: stop -107 task 0 region -107 log -107
bad pattern: -22
trace 0: start 0 again -16 stop 0 again -107
trace 1: start 0 again -16 stop 0 again -107
trace 2: start 0 again -16 stop 0 again -107
OUT
diff "$T/want" "$T/out" || fail "api: return codes"
set -- "$T"/api/t.*.trace
[ "$#" -eq 3 ] || fail "api: $# traces, not 3"
for tr; do
  trace_parse "$tr"
  n=$(awk '$2 == "GoStart" { print $6 }' "$tr.d" | sort -u | wc -l)
  [ "$n" -eq 5 ] || fail "$tr: $n goroutines, not 5"
  [ "$(trace_count "$tr" UserRegion)" -gt 0 ] || fail "$tr: no regions"
done
note "C API"
