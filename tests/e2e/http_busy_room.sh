#!/bin/sh
# While the server thread is busy with one request (a thread dump waiting
# for a thread that cannot answer: tests/progs/http_vfork.c), 31 other
# connections, idle for longer than the server's grace, send whole
# requests and a 33rd client waits in the listen backlog with its own.
# When the server is free again, the connections whose requests wait
# unread in their sockets are not the "longest-waiting idle clients" to
# cut for the newcomer: all 33 are answered (200). The program's output
# and exit status are its own.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
cc_prog "$T/srv" "$PROGS/http_vfork.c"
start_server srv "$T/srv" > "$T/srv.out" # the program's own output
wait_file "$T/srv.count.tid" || fail "no thread id"
tid=$(cat "$T/srv.count.tid")
# The thread sleeps in vfork ("D": killable only), unable to answer a signal.
i=0
until [ "$(sed 's/^.*) //' /proc/"$PID"/task/"$tid"/stat 2>/dev/null | cut -c1)" = D ]; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "the thread is not in vfork"
  sleep 0.1
done

cat > "$T/busy.py" <<'PY'
import os, socket, sys, time
# busy.py HOST PORT PID TID: prints one line per client, "CLIENT STATUS".
host, port, pid, tid = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def sockets():
    n = 0
    for fd in os.listdir("/proc/%s/fd" % pid):
        try:
            n += os.readlink("/proc/%s/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass
    return n

def wait(cond, what, secs=60):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > secs:
            sys.exit("timed out waiting for " + what)
        time.sleep(0.01)

def request(path, close=True):
    return ("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, "Connection: close\r\n" if close else "")).encode()

base = sockets()
conns = [socket.create_connection((host, port), timeout=60) for _ in range(32)]
wait(lambda: sockets() >= base + 32, "the server to take 32 connections")
time.sleep(2.5)  # the server's grace (2 s) is over for all 32: they may be cut
# Kept alive: its slot stays taken after the answer.
conns[0].sendall(request("/debug/pprof/goroutine?debug=2", close=False))
# The dump asked the thread in vfork (its signal pends): the server waits.
def pending():
    with open("/proc/%s/task/%s/status" % (pid, tid)) as f:
        return any(l.startswith("SigPnd:") and int(l.split()[1], 16) for l in f)
wait(pending, "the dump's signal")
for c in conns[1:]:
    c.sendall(request("/debug/pprof/cmdline"))
late = socket.create_connection((host, port), timeout=60)
late.sendall(request("/debug/pprof/cmdline"))
for k, c in enumerate(conns[1:] + [late, conns[0]]):
    data = b""
    try:
        while True:
            b = c.recv(65536)
            data += b
            if not b or c is conns[0]:
                break
    except OSError as e:
        data = data or str(e).encode()
    status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "none"
    print(k, status)
PY
python3 "$T/busy.py" "${ADDR%:*}" "${ADDR##*:}" "$PID" "$tid" > "$T/busy.out" 2> "$T/busy.err" ||
  { cat "$T/busy.err"; fail "client failed"; }
touch "$T/srv.count.stop"
wait "$PID"; rc=$?
[ $rc = 0 ] || { cat "$T/srv.err"; fail "the program ended with $rc"; }
grep -qx "http_vfork: done" "$T/srv.out" || fail "the program's output: $(cat "$T/srv.out")"
n=$(grep -c ' 200$' "$T/busy.out")
[ "$n" = 33 ] || { cat "$T/busy.out"; fail "$n of 33 requests answered"; }
note "33 of 33 answered"
exit 0
