#!/bin/sh
# Clients that misbehave, and what they get: unknown paths, bad parameters,
# oversized headers and bodies, other methods, a missing or wrong token
# (CPROF_HTTP_TOKEN), connections that send nothing or one byte at a time,
# more connections than the limit, many clients at once. Each gets its
# status or is cut off, the server answers again afterwards, and the
# program's own work (its counter) goes on throughout.
# timeout: 150
. "$(dirname "$0")/http_common.inc"
need_go
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"

cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv"

# --- paths and parameters ------------------------------------------------------
req nope "$URL/nope"
expect nope 404 "text/plain; charset=utf-8"
printf '404 page not found\n' | cmp -s - "$T/nope.body" || fail "/nope: body"
for p in nope heap/ cmdline/ "heap%20"; do
  req unknown "$URL/debug/pprof/$p"
  expect_error unknown 404 "Unknown profile"
done
for s in x 0 -1 1.5 99999999999999999999 " 1"; do
  req sec "$URL/debug/pprof/heap" -G --data-urlencode "seconds=$s"
  expect_error sec 400 'invalid value for "seconds" - must be a positive integer'
done
req sec "$URL/debug/pprof/allocs?seconds=600"
expect_error sec 400 "profile duration exceeds server's WriteTimeout"
req sec "$URL/debug/pprof/heap?seconds=1&debug=1"
expect_error sec 400 "seconds and debug params are incompatible"
for p in debug gc; do
  req bad "$URL/debug/pprof/heap?$p=yes"
  expect_error bad 400 "invalid value for \"$p\" - must be an integer"
done
req cpu "$URL/debug/pprof/profile?seconds=x"
expect_error cpu 400 'invalid value for "seconds" - must be a positive integer'
req cpu "$URL/debug/pprof/profile?seconds=3600"
expect_error cpu 400 "profile duration exceeds server's WriteTimeout"
note "paths and parameters"

# --- sizes ------------------------------------------------------------------------
big=$(head -c 70000 /dev/zero | tr '\0' a)
req hdr -H "X-Big: $big" "$URL/debug/pprof/heap"
expect hdr 431
req uri "$URL/debug/pprof/heap?x=$big"
expect uri 414
head -c $((17 << 20)) /dev/zero | tr '\0' 1 > "$T/body17m"
req post413 -H 'Expect:' --data-binary @"$T/body17m" "$URL/debug/pprof/symbol"
# The server answers 413 as soon as it reads the length and closes; curl,
# still sending, sometimes sees the reset before the answer (status 000).
# Either way the body was refused.
if [ "$STATUS" != 000 ]; then
  expect_error post413 413 "Request Entity Too Large"
fi
# Chunked, so the size is not known in advance: the connection is dropped.
req chunked -H 'Transfer-Encoding: chunked' --data-binary @"$T/body17m" "$URL/debug/pprof/symbol"
[ "$STATUS" != 200 ] || fail "an oversized chunked body was accepted"
note "sizes: 431, 414, 413, dropped"

# --- methods ------------------------------------------------------------------------
for m in PUT DELETE OPTIONS PATCH; do
  req meth -X $m "$URL/debug/pprof/heap"
  expect_error meth 405 "Method Not Allowed"
  [ "$(header meth Allow)" = "GET, HEAD" ] || fail "$m: Allow $(header meth Allow)"
done
req meth -d x "$URL/debug/pprof/heap"
expect_error meth 405 "Method Not Allowed"
req meth -X PUT -d x "$URL/debug/pprof/symbol"
expect_error meth 405 "Method Not Allowed"
[ "$(header meth Allow)" = "GET, HEAD, POST" ] || fail "symbol: Allow $(header meth Allow)"
req ok "$URL/debug/pprof/cmdline"
expect ok 200
expect_progress srv "after the bad requests"
note "methods"

# --- connections: idle, slow, too many, many at once ----------------------------------
cat > "$T/clients.py" <<'PY'
import select, socket, sys, time
# idle N | slow: prints seconds until the server closed each connection.
host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def closed(s, deadline):
    try:
        s.settimeout(max(0.1, deadline - time.time()))
        while s.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False

t0 = time.time()
if mode == "idle":
    socks = [socket.create_connection((host, port)) for _ in range(int(sys.argv[4]))]
    open_ = {s.fileno(): s for s in socks}
    times = []
    while open_ and time.time() - t0 < 20:
        ready, _, _ = select.select(list(open_.values()), [], [], 0.2)
        for s in ready:
            try:
                data = s.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                times.append(time.time() - t0)
                del open_[s.fileno()]
    if open_:
        print("%d idle connections still open after 20 s" % len(open_)); sys.exit(1)
    early = [t for t in times if t < 5]
    late = [t for t in times if t >= 5]
    print("%d idle connections: %d cut early to make room, %d cut off after %.1f..%.1f s" %
          (len(times), len(early), len(late), min(late or [0]), max(late or [0])))
else:
    s = socket.create_connection((host, port))
    s.sendall(b"GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    while time.time() - t0 < 60:
        try:
            s.sendall(b"a")
        except (ConnectionResetError, BrokenPipeError):
            break
        if closed(s, time.time() + 2):
            break
    print("slow closed %.1f s" % (time.time() - t0))
PY
host=${ADDR%:*}; port=${ADDR##*:}
python3 "$T/clients.py" "$host" "$port" idle 40 > "$T/idle.out" 2>&1 &
idle=$!
sleep 1
# Saturated: a request is answered or refused, never left hanging.
req busy --max-time 5 "$URL/debug/pprof/cmdline"
case "$STATUS" in 200|000) ;; *) fail "while saturated: status $STATUS" ;; esac
expect_progress srv "with 40 idle connections"
wait $idle || { cat "$T/idle.out"; fail "idle connections were not cut off"; }
note "$(cat "$T/idle.out") (limits: 32 connections, 10 s idle)"
req after "$URL/debug/pprof/cmdline"
expect after 200
# Many clients at once: each answered (over the limit, after a wait in the
# listen backlog), or refused when that is full.
seq 1 64 | xargs -P 64 -I{} curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 \
  "$URL/debug/pprof/heap" > "$T/many" 2>/dev/null
ok=$(grep -c '^200$' "$T/many")
grep -qv -e '^200$' -e '^000$' "$T/many" && fail "many clients: $(sort "$T/many" | uniq -c | tr '\n' ' ')"
[ "$ok" -ge 1 ] || fail "many clients: none answered"
note "64 clients at once: $ok answered, $((64 - ok)) refused"
expect_progress srv "after many clients"
# One slow client alone (nobody waits for its slot): cut at the header deadline.
python3 "$T/clients.py" "$host" "$port" slow > "$T/slow.out" 2>&1
s=$(sed -n 's/^slow closed \([0-9]*\).*/\1/p' "$T/slow.out")
[ -n "$s" ] && [ "$s" -ge 9 ] && [ "$s" -le 25 ] || { cat "$T/slow.out"; fail "slow client: not cut off after 10 s"; }
note "$(cat "$T/slow.out") (limit: 10 s for the headers)"
req after "$URL/debug/pprof/cmdline"
expect after 200
expect_progress srv "after the slow client"
stop_server "$PID"

# --- the token -------------------------------------------------------------------------
TOK='s3cret-T0ken'
start_server tok "$T/srv" CPROF_HTTP_TOKEN="$TOK" CPROF_RATE=1
unauthorized() {
  expect_error auth 401 "Unauthorized"
  header auth WWW-Authenticate | grep -q '^Basic realm="cprof"' || fail "401: no WWW-Authenticate"
}
req auth "$URL/debug/pprof/heap"; unauthorized
req auth -H "Authorization: Bearer wrong" "$URL/debug/pprof/heap"; unauthorized
req auth -H "Authorization: Bearer ${TOK}x" "$URL/debug/pprof/heap"; unauthorized
req auth -u "user:wrong" "$URL/debug/pprof/heap"; unauthorized
req auth -d 0x1 "$URL/debug/pprof/symbol"; unauthorized
req auth "$URL/debug/pprof/heap?token=wrong"
expect auth 401
req auth "$URL/nope"
expect auth 401
req auth -H "Authorization: Bearer $TOK" "$URL/debug/pprof/heap"
expect auth 200 "application/octet-stream"
req auth -u "anyone:$TOK" "$URL/debug/pprof/cmdline"
expect auth 200
req auth "$URL/debug/pprof/heap?debug=1&token=$TOK"
expect auth 200 "text/plain; charset=utf-8"
# go tool pprof: user:token@ in the URL goes with the profile request and
# with its follow-up symbol request (binary gone, so it must ask).
mkdir -p "$T/gone"; cp "$T/srv" "$T/gone/srv"
stop_server "$PID"
start_server tok "$T/gone/srv" CPROF_HTTP_TOKEN="$TOK" CPROF_RATE=1
rm -f "$T/gone/srv"
go tool pprof -top "http://pprof:$TOK@$ADDR/debug/pprof/heap" > "$T/tok.top" 2> "$T/tok.err" ||
  { cat "$T/tok.err"; fail "go tool pprof with the token failed"; }
grep -Eq ' keep_small$' "$T/tok.top" || { cat "$T/tok.top" "$T/tok.err"; fail "token: keep_small not named"; }
go tool pprof -top "$URL/debug/pprof/heap" > /dev/null 2> "$T/notok.err" && fail "no token: go tool pprof succeeded"
grep -q 'Unauthorized' "$T/notok.err" || { cat "$T/notok.err"; fail "no token: pprof does not say why"; }
note "token: 401 without it; Bearer, Basic, ?token=, pprof user:token@"
expect_progress tok "after the token checks"
stop_server "$PID"
exit 0
