#!/bin/sh
# /debug/pprof/trace streams as it records (Go's Trace handler writes into
# the response): tests/progs/trace_stream.c writes about 2 MB of trace a
# second; the process's memory (VmRSS plus the memfds it holds, where a
# staged body would lie) grows no more over a 20 s trace than over a 2 s
# one, while the trace itself is ten times the size; both parse. Then a
# client that asks for a trace and never reads: the trace's end gives it up
# after the bounded wait and says so on stderr, and the program, told to
# stop, exits at once with its own output.
# timeout: 240
. "$(dirname "$0")/http_common.inc"
. "$(dirname "$0")/trace_common.inc"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"

cc_prog "$T/ts" "$PROGS/trace_stream.c" -ldl
mkdir "$T/s"
# A small buffer pool: what the trace may hold in memory is bounded by it.
CPROF_TRACE_BUFFER=1M CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/addr" LD_PRELOAD="$LIB" \
  "$T/ts" "$T/s" > "$T/out" 2> "$T/err" &
PID=$!
PIDS="$PIDS $PID"
wait_file "$T/addr" 30 && wait_file "$T/s/ready" 30 || { cat "$T/err"; fail "the program does not serve"; }
URL="http://$(cat "$T/addr")/debug/pprof"

# mem_kb: the process's memory now: VmRSS and the bytes of its memfds.
mem_kb() {
  rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$PID/status")
  fds=0
  for f in /proc/$PID/fd/*; do
    case "$(readlink "$f" 2>/dev/null)" in
      /memfd:*) fds=$((fds + $(stat -L -c %s "$f" 2>/dev/null || echo 0) / 1024)) ;;
    esac
  done
  echo $((rss + fds))
}

# traced SECONDS NAME: a trace of SECONDS into $T/NAME.trace; prints the
# memory's growth over the trace (its highest sample less the start's), kB.
traced() {
  base=$(mem_kb)
  curl -sf -o "$T/$2.trace" "$URL/trace?seconds=$1" &
  c=$!
  top=$base
  while kill -0 "$c" 2>/dev/null; do
    m=$(mem_kb)
    [ "$m" -gt "$top" ] && top=$m
    sleep 0.2
  done
  wait "$c" || fail "$2: trace request failed"
  echo $((top - base))
}

traced 1 warm > /dev/null # the pool mapped and touched once
gs=$(traced 2 short)
gl=$(traced 20 long)
ls=$(stat -c %s "$T/short.trace")
ll=$(stat -c %s "$T/long.trace")
note "2 s: ${ls} bytes, memory +${gs} kB; 20 s: ${ll} bytes, memory +${gl} kB"
[ "$ll" -gt $((12 << 20)) ] || fail "the 20 s trace has only $ll bytes: the program was not busy"
[ "$ll" -gt $((4 * ls)) ] || fail "the 20 s trace ($ll bytes) is not much longer than the 2 s one ($ls)"
# Staged, the long trace's growth would be its size: allow a quarter.
[ $((gl - gs)) -lt $((ll / 4096)) ] ||
  fail "memory grew ${gl} kB over the 20 s trace, ${gs} kB over the 2 s one: it grows with the trace"
trace_parse "$T/short.trace"
trace_parse "$T/long.trace"
[ "$(trace_count "$T/long.trace" UserLog)" -gt 1000 ] || fail "the long trace lost its log events"
note "memory does not grow with the trace"

# A client that asks for a 3 s trace (some 6 MB, more than the pipe and
# the socket buffers hold) and never reads (a small receive
# window, so that the kernel does not take the trace for it).
cat > "$T/stall.py" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, int(port)))
s.sendall(b"GET /debug/pprof/trace?seconds=3 HTTP/1.1\r\nHost: x\r\n\r\n")
open(sys.argv[2], "w").write("sent\n")
time.sleep(600)
PY
python3 "$T/stall.py" "$(cat "$T/addr")" "$T/sent" &
PIDS="$PIDS $!"
wait_file "$T/sent" 30 || fail "the stalled client did not connect"
# The trace's end waits 5 s for its reader, then ends with a note (or
# the server cut the idle client first: the same note, "went away").
i=0
until grep -Eq "trace: its reader (took nothing for 5 s|went away): the trace ends incomplete" "$T/err"; do
  i=$((i + 1)); [ $i -gt 600 ] && { cat "$T/err"; fail "no note of the stalled reader"; }
  sleep 0.1
done
note "a stalled reader: $(grep "ends incomplete" "$T/err")"
# A second one stalls while the program exits: the exit does not wait for it.
rm -f "$T/sent"
python3 "$T/stall.py" "$(cat "$T/addr")" "$T/sent" &
PIDS="$PIDS $!"
wait_file "$T/sent" 30 || fail "the second stalled client did not connect"
i=0
until grep -qx cprof-trace /proc/$PID/task/*/comm 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "the second trace does not run"
  sleep 0.1
done
touch "$T/s/stop"
t0=$(date +%s)
wait "$PID"
rc=$?
t1=$(date +%s)
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "the program exited with $rc"; }
grep -q '^rounds [1-9][0-9]* logs [1-9][0-9]*$' "$T/out" || fail "program wrote $(cat "$T/out")"
# Bounded: the trace's end gives its reader 5 s at most.
[ $((t1 - t0)) -le 20 ] || fail "the program took $((t1 - t0)) s to exit under a stalled reader"
note "exit under a stalled reader: $((t1 - t0)) s"
