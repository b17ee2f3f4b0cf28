#!/bin/sh
# /debug/pprof/trace, from a preloaded tests/progs/trace_prog.c (serve mode:
# its four workers are created and fight over a mutex for 1 s once the test
# says go): a trace taken while a CPU profile runs holds the whole work and
# passes the checks of trace_common.inc (as trace_env.sh's); Go's answers to
# bad requests (seconds=0, -1, junk: 1 s; huge: 400; a trace while one
# runs: 500); the index lists trace.
# timeout: 240
. "$(dirname "$0")/http_common.inc"
. "$(dirname "$0")/trace_common.inc"

cc_prog "$T/tp" "$PROGS/trace_prog.c" -ldl
mkdir "$T/s"
CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/addr" LD_PRELOAD="$LIB" "$T/tp" serve "$T/s" 2> "$T/err" &
PID=$!
PIDS="$PIDS $PID"
wait_file "$T/addr" 30 && wait_file "$T/s/ready" 30 || { cat "$T/err"; fail "the program does not serve"; }
URL="http://$(cat "$T/addr")/debug/pprof"

curl -sf -o "$T/cpu.pb.gz" "$URL/profile?seconds=6" &
CPU=$!
curl -s -D "$T/trace.h" -o "$T/http.trace" "$URL/trace?seconds=5" &
TR=$!
# The trace runs once its writer thread does; then a second one gets Go's
# 500, and the program may start.
i=0
until grep -qx cprof-trace /proc/$PID/task/*/comm 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "no trace runs"
  sleep 0.1
done
curl -s -D "$T/busy.h" -o "$T/busy" "$URL/trace?seconds=1" || fail "second trace: no answer"
grep -q '^HTTP/1.1 500' "$T/busy.h" || fail "second trace: not 500"
[ "$(cat "$T/busy")" = "Could not enable tracing: tracing is already enabled" ] ||
  fail "second trace: $(cat "$T/busy")"
grep -qi '^X-Go-Pprof: 1' "$T/busy.h" || fail "second trace: no X-Go-Pprof"
touch "$T/s/go"
wait "$TR" || fail "trace request failed"
wait "$CPU" || fail "profile request failed"
grep -q '^HTTP/1.1 200' "$T/trace.h" || { cat "$T/trace.h"; fail "trace: not 200"; }
grep -qi '^Content-Type: application/octet-stream' "$T/trace.h" || fail "trace: content type"
grep -qi '^Content-Disposition: attachment; filename="trace"' "$T/trace.h" || fail "trace: disposition"
wait_file "$T/s/out" 30 || fail "the program did not finish its work"
grep -q '^threads 4$' "$T/s/out" || fail "program wrote $(cat "$T/s/out")"
trace_work "$T/http.trace" "$(awk '$1 == "waited_ns" { print $2 }' "$T/s/out")"
note "trace during the work"

# Go's answers: anything but a positive number is 1 s; too long is 400.
for q in "seconds=0" "seconds=-1" "seconds=abc" "" "seconds=0.5"; do
  t0=$(date +%s.%N)
  curl -s -D "$T/q.h" -o "$T/q.trace" "$URL/trace?$q" || fail "$q: request failed"
  t1=$(date +%s.%N)
  grep -q '^HTTP/1.1 200' "$T/q.h" || fail "$q: not 200"
  trace_parse "$T/q.trace"
  # at least the asked (or default) duration
  want=1; [ "$q" = "seconds=0.5" ] && want=0.5
  awk -v a="$t0" -v b="$t1" -v w="$want" 'BEGIN { exit !(b - a >= w) }' || fail "$q: shorter than ${want}s"
done
for q in "seconds=600" "seconds=1e9" "seconds=inf"; do
  curl -s -D "$T/q.h" -o "$T/q.body" "$URL/trace?$q" || fail "$q: request failed"
  grep -q '^HTTP/1.1 400' "$T/q.h" || fail "$q: not 400"
  [ "$(cat "$T/q.body")" = "profile duration exceeds server's WriteTimeout" ] || fail "$q: $(cat "$T/q.body")"
done
note "bad requests"

curl -sf "$URL/" > "$T/index" || fail "index"
grep -q "<a href='trace?debug=1'>trace</a>" "$T/index" || fail "index: no trace"
grep -q 'trace: </div> A trace of execution of the current program' "$T/index" || fail "index: no description"
note "index"
