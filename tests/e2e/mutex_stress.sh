#!/bin/sh
# The lock hooks under stress: tests/progs/mutex_stress.c (8 threads through
# lock, trylock, timedlock, clocklock, recursive, error-checking and robust
# mutexes, rwlocks and condition variables) must compute the right totals
# and end — plain, preloaded with both profiles off, at CPROF_MUTEX_RATE=1
# CPROF_BLOCK_RATE=1 (libunwind and the frame-pointer walk), and linked with
# a thread taking threads profiles all along. Real programs keep working
# under the preload with both rates at 1: a threaded python3 and sqlite3.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/ms" "$PROGS/mutex_stress.c"
cc_prog "$T/msl" "$PROGS/mutex_stress.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof \
  -Wl,-rpath,"$BUILD"

stress() { # NAME PROGRAM [ENV...]
  name=$1; prog=$2; shift 2
  timeout -k 5 100 env "$@" "$prog" 8 20000 > "$T/$name.out" 2> "$T/$name.err"
  rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && { cat "$T/$name.err"; fail "$name: deadlock (timed out)"; }
  [ $rc -eq 0 ] && [ "$(cat "$T/$name.out")" = ok ] || { cat "$T/$name.err"; fail "$name: wrong results (exit $rc)"; }
  note "$name: ok"
}

stress plain "$T/ms"
stress preload_off "$T/ms" LD_PRELOAD="$LIB"
stress preload_rate1 "$T/ms" LD_PRELOAD="$LIB" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 \
  CPROF_MUTEX_PROFILE="$T/m.pb.gz" CPROF_BLOCK_PROFILE="$T/b.pb.gz"
stress preload_fp "$T/ms" LD_PRELOAD="$LIB" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 CPROF_UNWIND=fp \
  CPROF_RATE=1
stress linked_dumps "$T/msl" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 CPROF_RATE=4096
grep -q '^monitor: [1-9][0-9]* threads profiles$' "$T/linked_dumps.err" ||
  { cat "$T/linked_dumps.err"; fail "linked_dumps: no threads profiles taken"; }
if command -v go >/dev/null 2>&1; then
  go tool pprof -top -nodefraction=0 "$T/b.pb.gz" > "$T/b.top" 2>&1
  grep -q ' worker$' "$T/b.top" || { cat "$T/b.top"; fail "preload_rate1: block profile without worker"; }
fi

# --- real programs under the preload ----------------------------------------------
if command -v python3 >/dev/null 2>&1; then
  cat > "$T/threads.py" <<'EOF'
import threading, queue
q = queue.Queue()
lock = threading.Lock()
total = [0]
def work(n):
    for i in range(n):
        with lock:
            total[0] += 1
        q.put(i)
ts = [threading.Thread(target=work, args=(5000,)) for _ in range(6)]
for t in ts: t.start()
for t in ts: t.join()
got = 0
while not q.empty():
    q.get(); got += 1
cv = threading.Condition()
done = []
def waiter():
    with cv:
        while not done:
            cv.wait(0.01)
w = threading.Thread(target=waiter); w.start()
with cv:
    done.append(1); cv.notify_all()
w.join()
print(total[0], got)
EOF
  out=$(timeout 100 env LD_PRELOAD="$LIB" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 python3 "$T/threads.py") ||
    fail "python3 under the preload failed"
  [ "$out" = "30000 30000" ] || fail "python3 printed $out"
  note "python3 threads: ok"
else
  note "python3 not installed: not run"
fi
if command -v sqlite3 >/dev/null 2>&1; then
  out=$(timeout 100 env LD_PRELOAD="$LIB" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 sqlite3 "$T/db" \
    "create table t(x); with recursive c(i) as (select 1 union all select i+1 from c where i < 20000)
     insert into t select i from c; select count(*), sum(x) from t;") || fail "sqlite3 under the preload failed"
  [ "$out" = "20000|200010000" ] || fail "sqlite3 printed $out"
  note "sqlite3: ok"
else
  note "sqlite3 not installed: not run"
fi
exit 0
