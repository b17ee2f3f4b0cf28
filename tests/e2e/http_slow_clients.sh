#!/bin/sh
# Slow clients (slowloris) must not shut a normal client out: 50
# connections that send their request headers one byte a second, and
# reconnect whenever the server cuts them, hold the server while normal
# requests are made; each normal request is answered, while the slow
# clients are still connected. The program's own work goes on throughout,
# and it ends by the test's SIGTERM, not by a crash.
# timeout: 200
. "$(dirname "$0")/http_common.inc"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv"
host=${ADDR%:*}; port=${ADDR##*:}

cat > "$T/slow.py" <<'PY'
import os, select, socket, sys, time
# slow.py HOST PORT N STATE STOP: N connections, each sending a request's
# headers one byte a second, reconnecting when closed; writes
# "rounds R open O cut C" to STATE each round, until STOP exists (or 150 s).
host, port, n, state, stop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
PREFIX = b"GET /debug/pprof/cmdline HTTP/1.1\r\nHost: x\r\nX-Slow: "

def connect():
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(PREFIX)
        return s
    except OSError:
        return None

socks = [connect() for _ in range(n)]
rounds = cut = 0
t0 = time.time()
while not os.path.exists(stop) and time.time() - t0 < 150:
    rounds += 1
    with open(state + ".tmp", "w") as f:
        f.write("rounds %d open %d cut %d\n" % (rounds, sum(s is not None for s in socks), cut))
    os.rename(state + ".tmp", state)
    time.sleep(1)
    for i, s in enumerate(socks):
        if s is not None:
            try:
                gone = bool(select.select([s], [], [], 0)[0]) and not s.recv(4096)
                if not gone:
                    s.send(b"a")
            except OSError:
                gone = True
            if not gone:
                continue
            s.close()
            cut += 1
        socks[i] = connect()
PY
python3 "$T/slow.py" "$host" "$port" 50 "$T/slow.state" "$T/slow.stop" &
slow=$!; PIDS="$PIDS $slow"
# All 50 connected (accepted or queued before the normal client) and a second round sent.
i=0
until awk '$1 == "rounds" && $2 >= 2 && $4 == 50 { ok = 1 } END { exit !ok }' "$T/slow.state" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "slow clients: not connected ($(cat "$T/slow.state" 2>/dev/null))"
  sleep 0.1
done
note "slow clients: $(cat "$T/slow.state")"

for k in 1 2 3; do
  req normal$k --max-time 60 "$URL/debug/pprof/cmdline"
  [ "$STATUS" = 200 ] || fail "normal request $k with 50 slow clients: status $STATUS ($(cat "$T/slow.state"))"
  grep -q "srv" "$T/normal$k.body" || fail "normal request $k: body $(cat "$T/normal$k.body")"
  kill -0 "$slow" 2>/dev/null || fail "the slow clients ended before normal request $k"
  note "normal request $k answered; slow clients: $(cat "$T/slow.state")"
done
open=$(sed -n 's/^rounds [0-9]* open \([0-9]*\) .*/\1/p' "$T/slow.state")
[ "${open:-0}" -ge 40 ] || fail "the slow clients were not connected throughout: $(cat "$T/slow.state")"
expect_progress srv "with 50 slow clients"
touch "$T/slow.stop"
wait "$slow" || fail "slow clients failed"
kill -TERM "$PID"
wait "$PID"; rc=$?
[ "$rc" -eq 143 ] || { cat "$T/srv.err"; fail "the program ended with $rc, not by SIGTERM"; }
if grep -v "^cprof: serving /debug/pprof/ on " "$T/srv.err"; then fail "the program wrote to stderr"; fi
note "the program ran on and ended by SIGTERM"
