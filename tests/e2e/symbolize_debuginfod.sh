#!/bin/sh
# Symbolization through debuginfod: a stripped program whose debug file only
# an elfutils debuginfod server has (no .gnu_debuglink, nothing under
# /usr/lib/debug); and the program itself fetched by build id when the
# profile's path to it does not exist. The server indexes a scratch directory on a free port;
# the symbolize unit test binary then runs its debuginfod case
# (CPROF_TEST_DEBUGINFOD_BIN) with DEBUGINFOD_URLS pointing at it and a
# scratch client cache, and must get functions, lines and inline frames.
# debuginfod 0.188 has no option to bind one address: it listens on all
# interfaces; the client talks to 127.0.0.1.
# timeout: 90
. "$(dirname "$0")/../lib.sh"

command -v debuginfod >/dev/null 2>&1 || skip "debuginfod not installed"
command -v curl >/dev/null 2>&1 || skip "curl not installed"
UNIT=$BUILD/tests/test_symbolize
[ -x "$UNIT" ] || skip "no $UNIT (run make tests)"

mkdir -p "$T/srv" "$T/cache" || fail "scratch dirs"
gcc -g -O2 -fno-omit-frame-pointer -o "$T/prog" "$PROGS/symbolize_prog.c" || fail "cannot build"
objcopy --only-keep-debug "$T/prog" "$T/srv/prog.debug" && strip --strip-all "$T/prog" &&
  cp "$T/prog" "$T/srv/prog" || fail "cannot split the debug file"
BID=$(readelf -n "$T/prog" | sed -n 's/.*Build ID: *//p')
[ -n "$BID" ] || fail "no build id"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + $$ % 20000))
}

PID=
stop() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; PID=; }
trap 'stop; rm -rf "$T"' EXIT

# Start the server (retrying on another port if this one was taken) and wait
# until it serves our debug file.
ready=
for attempt in 1 2 3 4 5; do
  PORT=$(free_port)
  debuginfod -F -p "$PORT" -d "$T/db.sqlite" -t 0 -g 0 -c 1 "$T/srv" > "$T/server.log" 2>&1 &
  PID=$!
  i=0
  while [ $i -lt 100 ]; do
    kill -0 "$PID" 2>/dev/null || break
    if curl -sf -o /dev/null "http://127.0.0.1:$PORT/buildid/$BID/debuginfo" &&
       curl -sf -o /dev/null "http://127.0.0.1:$PORT/buildid/$BID/executable"; then
      ready=1; break
    fi
    sleep 0.2; i=$((i + 1))
  done
  [ -n "$ready" ] && break
  stop
done
[ -n "$ready" ] || { cat "$T/server.log"; fail "debuginfod did not serve $BID"; }
note "debuginfod on port $PORT serves $BID"

run_unit() {
  CPROF_TEST_DEBUGINFOD_BIN="$T/prog" DEBUGINFOD_URLS="http://127.0.0.1:$PORT" \
    DEBUGINFOD_CACHE_PATH="$T/cache" DEBUGINFOD_TIMEOUT=20 "$1" > "$T/unit.log" 2>&1
  rc=$?
  cat "$T/unit.log"
  grep -q '^\[  PASSED  \] 1 test' "$T/unit.log" || fail "$1: the debuginfod case did not pass (exit $rc)"
}
run_unit "$UNIT"
# Under the sanitizers too, with a cold cache so the download runs again.
rm -rf "$T/cache"; mkdir -p "$T/cache"
[ -x "$BUILD/tests/asan/test_symbolize" ] && run_unit "$BUILD/tests/asan/test_symbolize"
ls "$T/cache"/* >/dev/null 2>&1 || fail "nothing was fetched into the debuginfod cache"
echo "ok"
