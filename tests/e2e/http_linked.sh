#!/bin/sh
# Linked mode: a program built with -lcprof starts the server itself with
# cprof_http_start("127.0.0.1:0") (after checking stop/start/port and
# -EALREADY), reports cprof_http_port(), and go tool pprof reads its heap
# profile with exact numbers at CPROF_RATE=1. No preload, no CPROF_HTTP.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/linked" "$PROGS/http_server.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof \
  -Wl,-rpath,"$BUILD"
CPROF_RATE=1 "$T/linked" "$T/linked.count" 127.0.0.1:0 "$T/linked.addr" 2> "$T/linked.err" &
PID=$!
PIDS="$PIDS $PID"
wait_file "$T/linked.addr" || { cat "$T/linked.err"; fail "no address from cprof_http_port"; }
wait_file "$T/linked.count" || fail "the program does not run"
URL="http://$(cat "$T/linked.addr")"
[ -s "$T/linked.err" ] && { cat "$T/linked.err"; fail "the API printed something"; }
grep -q "/libcprof-http.so\$" /proc/$PID/maps || fail "libcprof-http.so is not loaded"

pprof_flat inuse_space "$URL/debug/pprof/heap" > "$T/flat"
grep -qx "keep_small 1000000" "$T/flat" || { cat "$T/flat"; fail "linked: keep_small inuse_space"; }
grep -qx "keep_large 1000000" "$T/flat" || fail "linked: keep_large inuse_space"
req cmdline "$URL/debug/pprof/cmdline"
expect cmdline 200 "text/plain; charset=utf-8"
printf '%s\000%s\000%s\000%s' "$T/linked" "$T/linked.count" 127.0.0.1:0 "$T/linked.addr" |
  cmp -s - "$T/cmdline.body" || fail "linked: cmdline"
expect_progress linked "linked mode"
note "linked: cprof_http_start, exact heap numbers"
stop_server "$PID"
exit 0
