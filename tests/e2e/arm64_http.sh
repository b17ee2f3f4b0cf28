#!/bin/sh
# arm64: /debug/pprof/ served by build/arm64/libcprof-http.so from a
# program cross-compiled for aarch64 (tests/progs/http_server.c, which
# keeps 100 x 10000 bytes in keep_small and 20 x 50000 in keep_large) under
# qemu-aarch64 at CPROF_RATE=1: the address announced, the index page, and
# the heap profile fetched by go tool pprof over HTTP (symbolized from the
# arm64 binary) and by the host's cprof, with exactly those bytes; the
# program keeps working meanwhile.
# timeout: 180
. "$(dirname "$0")/arm64_common.inc"
command -v curl >/dev/null 2>&1 || skip "skip: curl not installed"
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
export HOME="$T/home" PPROF_TMPDIR="$T/pprof"
mkdir -p "$HOME" "$PPROF_TMPDIR"
PID=
# The server is a subshell running timeout running qemu: TERM to timeout,
# which passes it on and waits for qemu, and the subshell for timeout (a
# KILL, or the subshell's, left qemu running on for minutes, churning).
stop() { pkill -P "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; }
trap '[ -n "$PID" ] && stop; rm -rf "$T"' EXIT

wait_file() { # FILE: until it exists and is not empty (60 s)
  i=0
  while [ ! -s "$1" ]; do
    i=$((i + 1)); [ $i -gt 600 ] && return 1
    kill -0 "$PID" 2>/dev/null || return 1
    sleep 0.1
  done
}

acc_prog "$T/srv" "$PROGS/http_server.c"
CPROF_RATE=1 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/addr" arun "$T/srv" "$T/count" 2> "$T/srv.err" &
PID=$!
wait_file "$T/addr" || { cat "$T/srv.err"; fail "no address file"; }
wait_file "$T/count" || fail "the program does not run"
URL="http://$(cat "$T/addr")"
grep -qx "cprof: serving /debug/pprof/ on $URL/debug/pprof/" "$T/srv.err" ||
  { cat "$T/srv.err"; fail "the address is not announced on stderr"; }

code=$(curl -s -o "$T/index" -w '%{http_code}' "$URL/debug/pprof/") || fail "index: curl failed"
[ "$code" = 200 ] && grep -q "<a href='heap?debug=1'>heap</a>" "$T/index" || fail "index: status $code"

# Only the kept sites: the loop's churn() keeps nothing.
go tool pprof -proto "$T/srv" "$URL/debug/pprof/heap" > "$T/heap.pb.gz" 2> "$T/fetch.err" ||
  { cat "$T/fetch.err"; fail "go tool pprof cannot fetch the heap profile"; }
for idx in inuse_space inuse_objects; do
  pprof_flat $idx "$T/heap.pb.gz" "$T/srv" | awk -v idx=$idx '
    $1 == "keep_small" || $1 == "keep_large" { got[$1] = $2 }
    END { want = idx == "inuse_space" ? 1000000 : -1
      if (want < 0) { if (got["keep_small"] != 100 || got["keep_large"] != 20) bad = 1 }
      else if (got["keep_small"] != want || got["keep_large"] != want) bad = 1
      if (bad) print idx ": keep_small " got["keep_small"] ", keep_large " got["keep_large"]
      exit bad }' || fail "the served heap profile's numbers"
done
PPROF="$BUILD/cprof" pprof_flat inuse_space "$URL/debug/pprof/heap" > "$T/cprof.flat"
grep -qx 'keep_small 1000000' "$T/cprof.flat" && grep -qx 'keep_large 1000000' "$T/cprof.flat" ||
  { cat "$T/cprof.flat"; fail "cprof's view of the served heap profile"; }
c1=$(cat "$T/count"); i=0
while [ "$(cat "$T/count")" = "$c1" ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "the program's counter is stuck at $c1"
  sleep 0.1
done
stop
pgrep -f "qemu-aarch64 .*$T/srv" > /dev/null && fail "the server outlives the test"
note "heap over HTTP: exact (go tool pprof, cprof)"
exit 0
