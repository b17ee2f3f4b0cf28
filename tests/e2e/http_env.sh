#!/bin/sh
# CPROF_HTTP, CPROF_HTTP_ADDR_FILE and CPROF_HTTP_TOKEN: the address forms
# (:PORT and localhost are loopback, 0.0.0.0 is warned about, [::1]), one
# line naming a bad variable with the server off and the program running
# on, a port in use, a missing libcprof-http.so, and no HTTP stack loaded
# unless a server is asked for.
# timeout: 120
. "$(dirname "$0")/http_common.inc"

cc_prog "$T/srv" "$PROGS/http_server.c"

# bad VAR=VALUE... : one line naming the first variable; the program runs.
bad() {
  var=${1%%=*}
  env CPROF_HTTP_ADDR_FILE="$T/bad.addr" "$@" LD_PRELOAD="$LIB" sh -c 'echo ran' > "$T/bad.out" 2> "$T/bad.err" ||
    fail "$1: the program failed"
  grep -qx ran "$T/bad.out" || fail "$1: the program did not run"
  [ "$(grep -c . "$T/bad.err")" = 1 ] || { cat "$T/bad.err"; fail "$1: not one line"; }
  grep -Eq "^cprof: $var(=\".*\")? is not valid: .*; the HTTP server is off\$" "$T/bad.err" ||
    { cat "$T/bad.err"; fail "$1: message"; }
  [ -e "$T/bad.addr" ] && fail "$1: a server started"
  return 0
}
for v in bogus 127.0.0.1 127.0.0.1: 127.0.0.1:65536 127.0.0.1:-1 127.0.0.1:0x10 example.com:80 \
         "[::1:80" "::1:80" 1.2.3:80 "" " :80"; do
  bad CPROF_HTTP="$v"
done
bad CPROF_HTTP_TOKEN="two words" CPROF_HTTP=127.0.0.1:0
grep -q 'two words' "$T/bad.err" && fail "the token is shown"
bad CPROF_HTTP_TOKEN= CPROF_HTTP=127.0.0.1:0
bad CPROF_HTTP_TOKEN="$(head -c 1025 /dev/zero | tr '\0' x)" CPROF_HTTP=127.0.0.1:0
bad CPROF_HTTP_ADDR_FILE="$T/x%q" CPROF_HTTP=127.0.0.1:0
note "bad values: one line each, server off"

# No CPROF_HTTP: no HTTP code in the process.
env LD_PRELOAD="$LIB" "$T/srv" "$T/plain.count" 2> "$T/plain.err" &
PID=$!; PIDS="$PIDS $PID"
wait_file "$T/plain.count" || fail "plain: the program does not run"
grep -Eq 'libmicrohttpd|libcprof-http' /proc/$PID/maps && fail "plain: HTTP code loaded without CPROF_HTTP"
[ -s "$T/plain.err" ] && { cat "$T/plain.err"; fail "plain: output on stderr"; }
stop_server "$PID"
note "no CPROF_HTTP: nothing loaded"

# Address forms.
start_server colon "$T/srv" CPROF_HTTP=:0
case "$ADDR" in 127.0.0.1:[0-9]*) ;; *) fail ":0 gave $ADDR" ;; esac
grep -q libmicrohttpd /proc/$PID/maps || fail "libmicrohttpd not loaded"
req ok "$URL/debug/pprof/cmdline"; expect ok 200
used=$ADDR
stop_server "$PID"
start_server local "$T/srv" CPROF_HTTP=localhost:0
case "$ADDR" in 127.0.0.1:[0-9]*) ;; *) fail "localhost:0 gave $ADDR" ;; esac
req ok "$URL/debug/pprof/cmdline"; expect ok 200
# The port of a running server is in use.
env CPROF_HTTP="$ADDR" LD_PRELOAD="$LIB" "$T/srv" "$T/inuse.count" 2> "$T/inuse.err" &
p2=$!; PIDS="$PIDS $p2"
wait_file "$T/inuse.count" || fail "in use: the program does not run"
sleep 0.2
grep -qx "cprof: CPROF_HTTP=\"$ADDR\": cannot listen: Address already in use; the HTTP server is off" "$T/inuse.err" ||
  { cat "$T/inuse.err"; fail "in use: message"; }
expect_progress inuse "port in use"
stop_server "$p2"
stop_server "$PID"
start_server any "$T/srv" CPROF_HTTP=0.0.0.0:0
case "$ADDR" in 0.0.0.0:[0-9]*) ;; *) fail "0.0.0.0:0 gave $ADDR" ;; esac
grep -q '^cprof: CPROF_HTTP="0.0.0.0:0" serves every network interface' "$T/any.err" ||
  { cat "$T/any.err"; fail "0.0.0.0: no warning"; }
req ok "http://127.0.0.1:${ADDR##*:}/debug/pprof/cmdline"; expect ok 200
stop_server "$PID"
note ":0, localhost:0, 0.0.0.0:0 (warned), port in use"
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
  start_server v6 "$T/srv" CPROF_HTTP='[::1]:0'
  case "$ADDR" in \[::1\]:[0-9]*) ;; *) fail "[::1]:0 gave $ADDR" ;; esac
  grep -q '^cprof: serving /debug/pprof/ on http://\[::1\]:' "$T/v6.err" || fail "[::1]: announcement"
  stop_server "$PID"
  note "[::1]:0"
fi

# %p in the address file; the address file and stderr agree.
env CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/pid.%p" LD_PRELOAD="$LIB" "$T/srv" "$T/pid.count" 2> "$T/pid.err" &
PID=$!; PIDS="$PIDS $PID"
wait_file "$T/pid.$PID" || fail "%p: no $T/pid.$PID"
grep -qx "cprof: serving /debug/pprof/ on http://$(cat "$T/pid.$PID")/debug/pprof/" "$T/pid.err" ||
  fail "stderr and the address file disagree"
stop_server "$PID"

# Exit with a delta profile waiting and requests coming in: the server
# stops before libmicrohttpd is torn down; the program exits cleanly.
env CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/exit.addr" LD_PRELOAD="$LIB" sleep 2 2> "$T/exit.err" &
PID=$!; PIDS="$PIDS $PID"
wait_file "$T/exit.addr" || fail "exit: no server"
URL="http://$(cat "$T/exit.addr")"
req pending "$URL/debug/pprof/heap?seconds=30" &
rq=$!
(while kill -0 $PID 2>/dev/null; do curl -s -o /dev/null "$URL/debug/pprof/heap?debug=1"; done) &
wait $PID || fail "exit: the program failed ($?)"
wait $rq
printf 'context canceled\n' | cmp -s - "$T/pending.body" || fail "exit: the waiting request got \"$(cat "$T/pending.body")\""
note "exit with requests in flight"

# libcprof.so without libcprof-http.so beside it.
mkdir -p "$T/lib"
cp "$LIB" "$T/lib/"
env CPROF_HTTP=127.0.0.1:0 LD_PRELOAD="$T/lib/libcprof.so" sh -c 'echo ran' > "$T/nomod.out" 2> "$T/nomod.err"
grep -qx ran "$T/nomod.out" || fail "no module: the program did not run"
grep -q "^cprof: CPROF_HTTP=\"127.0.0.1:0\": cannot load $T/lib/libcprof-http.so: .*; the HTTP server is off\$" "$T/nomod.err" ||
  { cat "$T/nomod.err"; fail "no module: message"; }
note "%p address file; missing libcprof-http.so"
exit 0
