#!/bin/sh
# The HTTP server against clients that go away and requests that are not
# well-formed HTTP:
#   - abandoned ?seconds= requests are cancelled when their client goes
#     away: eight delta requests (heap, allocs, mutex, block) of 599 s whose
#     clients quit after a second no longer hold every delta slot (503) for
#     ten minutes, and an abandoned CPU profile no longer keeps the profiler
#     "already in use": a normal request succeeds right after;
#   - framing: HTTP/1.1 without Host, a duplicate Content-Length,
#     Content-Length with chunked encoding, more than 500 query arguments,
#     and %00 in a value, a path or the token get 400 (or 401 for the token),
#     never a profile;
# while the program keeps working and its output is its own.
# timeout: 300
. "$(dirname "$0")/http_common.inc"

cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1

# until_not NAME STATUS URL...: repeats the request while it answers STATUS,
# for at most 20 s (the cancellation is the server's next loop turn).
until_not() {
  n=$1 st=$2; shift 2
  i=0
  while :; do
    req "$n" "$@"
    [ "$STATUS" != "$st" ] && return 0
    i=$((i + 1))
    [ $i -ge 40 ] && return 1
    sleep 0.5
  done
}

# --- abandoned delta profiles ---------------------------------------------
for ep in heap allocs mutex block heap allocs mutex block; do
  curl -s -o /dev/null --max-time 1 "$URL/debug/pprof/$ep?seconds=599"
done
until_not delta 503 "$URL/debug/pprof/heap?seconds=1" || fail "the abandoned delta requests still hold every slot"
expect delta 200 application/octet-stream
"$BUILD/cprof" -raw "$T/delta.body" > /dev/null 2>&1 || fail "the delta profile does not load"
expect_progress srv "after the abandoned delta requests"

# --- an abandoned CPU profile ------------------------------------------------
curl -s -o /dev/null --max-time 1 "$URL/debug/pprof/profile?seconds=599"
until_not cpu 500 "$URL/debug/pprof/profile?seconds=1" || { cat "$T/cpu.body"; fail "the abandoned CPU profile is still running"; }
expect cpu 200 application/octet-stream
"$BUILD/cprof" -raw "$T/cpu.body" > /dev/null 2>&1 || fail "the CPU profile does not load"
expect_progress srv "after the abandoned CPU profile"

# --- framing ---------------------------------------------------------------------
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
# raw NAME REQUEST: sends REQUEST (printf escapes) as is; the status line's
# code in STATUS.
raw() {
  python3 - "$ADDR" "$2" > "$T/$1.resp" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=30)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except socket.timeout:
    pass
sys.stdout.write(out.decode("latin-1"))
PY
  STATUS=$(head -1 "$T/$1.resp" | awk '{print $2}')
}
raw nohost 'GET /debug/pprof/heap HTTP/1.1\r\nConnection: close\r\n\r\n'
[ "$STATUS" = 400 ] || fail "HTTP/1.1 without Host: status $STATUS, want 400"
raw host10 'GET /debug/pprof/cmdline HTTP/1.0\r\n\r\n'
[ "$STATUS" = 200 ] || fail "HTTP/1.0 without Host: status $STATUS, want 200"
raw dupcl 'POST /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\n0x10'
[ "$STATUS" = 400 ] || fail "duplicate Content-Length: status $STATUS, want 400"
raw clchunk 'POST /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n0x10\r\n0\r\n\r\n'
[ "$STATUS" = 400 ] || fail "Content-Length with chunked: status $STATUS, want 400"

# args N: N query arguments.
args() { python3 -c 'import sys; print("&".join("a%d=1" % i for i in range(int(sys.argv[1]))))' "$1"; }
for case in "many 400 heap?$(args 501)" "huge 400 heap?$(args 5000)" "few 200 cmdline?$(args 500)" \
            "nulsec 400 heap?seconds=%00" "nuldebug 400 heap?debug=1%00" "nulpath 400 heap%00.txt"; do
  set -- $case
  req "$1" "$URL/debug/pprof/$3"
  expect "$1" "$2"
done
grep -q "too many query arguments" "$T/many.body" || fail "501 arguments: $(cat "$T/many.body")"
expect_progress srv "after the framing cases"
stop_server "$PID"

TOK=s3cret
start_server tok "$T/srv" CPROF_HTTP_TOKEN="$TOK"
req tokok -H "Authorization: Bearer $TOK" "$URL/debug/pprof/cmdline"
expect tokok 200
req toknul -H "Authorization: Bearer $TOK%00junk" "$URL/debug/pprof/cmdline"
[ "$STATUS" = 401 ] || fail "token with %00: status $STATUS, want 401"
req tokraw "$URL/debug/pprof/cmdline?token=$TOK%00junk"
[ "$STATUS" = 401 ] || [ "$STATUS" = 400 ] || fail "token=...%00junk: status $STATUS, want 400 or 401"
exit 0
