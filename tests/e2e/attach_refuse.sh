#!/bin/sh
# cprof attach refuses cleanly, with one line naming the cause and a
# non-zero exit, and the target runs on unharmed (finishes with its usual
# output, exit 0): no such process, a thread id, a process of another user
# (cprof without CAP_SYS_PTRACE), a process another tracer holds, one
# stopped by job control (it stays stopped), a
# statically linked program, a program already running cprof (preloaded;
# and attached twice: refused after the injected calls, the halfway case),
# a program on another allocator (jemalloc preloaded: refused before
# libcprof.so is loaded, so that nothing stays behind). Not covered here: a
# musl or non-x86-64 target (neither can run on this machine).
# timeout: 300
. "$(dirname "$0")/attach_common.inc"

cc_prog "$T/prog" "$PROGS/attach_prog.c" -ldl
plain_run plain "$T/prog"

# refused WHAT PATTERN CMD...: CMD fails with stderr matching PATTERN.
refused() {
  what=$1; pat=$2; shift 2
  "$@" > "$T/r.out" 2> "$T/r.err" && { cat "$T/r.out" "$T/r.err"; fail "$what: attach succeeded"; }
  grep -qE "$pat" "$T/r.err" || { cat "$T/r.err"; fail "$what: message does not match '$pat'"; }
  [ "$(wc -l < "$T/r.err")" -le 1 ] || { cat "$T/r.err"; fail "$what: more than one line"; }
  note "$what: $(cat "$T/r.err")"
}

# unharmed NAME: the program carries on to the end with its usual output.
unharmed() {
  step "$1" go phase2
  finish "$1"
  cmp "$T/plain.out" "$T/$1.out" || fail "$1: output differs after a refused attach"
}

true & gone=$!; wait $gone
refused "no such process" "no process $gone" "$CPROF" attach "$gone"
"$CPROF" attach 12x 2> "$T/r.err"; [ $? -eq 2 ] || fail "usage error: exit status not 2"
grep -q "12x is not a process id" "$T/r.err" || { cat "$T/r.err"; fail "usage error: message"; }

start_prog thr "$T/prog"
tid=$(ls "/proc/$PID/task" | grep -v "^$PID\$" | head -1)
[ -n "$tid" ] || fail "no second thread"
refused "thread id" "thread of process $PID" "$CPROF" attach "$tid"
unharmed thr

# Another user: the program runs as nobody, cprof as root without
# CAP_SYS_PTRACE.
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  chmod 755 "$T"
  start_prog_as_nobody() {
    D=$T/user; mkdir -p "$D"; chmod 777 "$D"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/prog" "$D" > "$T/user.out" 2> "$T/user.err" &
    PID=$!; PIDS="$PIDS $PID"
    i=0; while [ ! -e "$D/ready" ]; do i=$((i + 1)); [ $i -gt 300 ] && fail "user: never ready"; sleep 0.1; done
  }
  start_prog_as_nobody
  refused "another user" "no permission to trace process $PID: it runs as uid 65534" \
    setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace "$CPROF" attach "$PID"
  unharmed user
else
  note "skipped: another user (needs root and setpriv)"
fi

# Another tracer: python's ctypes seizes the program (PTRACE_SEIZE does
# not stop it) and holds it until told to let go.
if command -v python3 >/dev/null 2>&1; then
  start_prog traced "$T/prog"
  python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), 0, 0) != 0:
    sys.exit("seize: %d" % ctypes.get_errno())
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
' "$PID" "$T/seized" "$T/release" &
  tracer=$!
  i=0; while [ ! -e "$T/seized" ]; do i=$((i + 1)); [ $i -gt 100 ] && fail "the tracer never seized"; sleep 0.1; done
  refused "another tracer" "already traced by process $tracer" "$CPROF" attach "$PID"
  touch "$T/release"; wait $tracer
  unharmed traced
fi

# Stopped by job control: attaching would have to run it.
start_prog stopped "$T/prog"
kill -STOP "$PID"
refused "stopped" "is stopped \(signal 19, job control\): continue it first" "$CPROF" attach "$PID"
grep -q "^State:.*T (stopped)" "/proc/$PID/status" || fail "stopped: the attach ran the process"
kill -CONT "$PID"
unharmed stopped

# Statically linked.
if gcc -static -std=gnu11 -g -O1 -o "$T/prog_static" "$PROGS/attach_prog.c" -lpthread -ldl 2> /dev/null; then
  start_prog static "$T/prog_static"
  refused "static" "no C library loaded: it is statically linked" "$CPROF" attach "$PID"
  unharmed static
else
  note "skipped: statically linked (no static libc)"
fi

# Already profiled: preloaded.
start_prog_pre() {
  D=$T/pre; rm -rf "$D"; mkdir -p "$D"
  LD_PRELOAD="$LIB" "$T/prog" "$D" > "$T/pre.out" 2> "$T/pre.err" &
  PID=$!; PIDS="$PIDS $PID"
  i=0; while [ ! -e "$D/ready" ]; do i=$((i + 1)); [ $i -gt 300 ] && fail "pre: never ready"; sleep 0.1; done
}
start_prog_pre
refused "preloaded" "already runs cprof \(preloaded or linked\)" "$CPROF" attach "$PID"
unharmed pre

# Already attached: the second attach gets as far as the runtime.
start_prog twice "$T/prog"
attach_to "$PID"
refused "attached twice" "already attached" "$CPROF" attach "$PID"
unharmed twice

# Another allocator.
jem=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
if [ -n "$jem" ]; then
  D=$T/jem; mkdir -p "$D"
  LD_PRELOAD="$jem" "$T/prog" "$D" > "$T/jem.out" 2> "$T/jem.err" &
  PID=$!; PIDS="$PIDS $PID"
  i=0; while [ ! -e "$D/ready" ]; do i=$((i + 1)); [ $i -gt 300 ] && fail "jem: never ready"; sleep 0.1; done
  refused "jemalloc" "malloc is not the C library's" "$CPROF" attach "$PID"
  # Decided before loading anything: libcprof.so (never unloaded) is not
  # left in the target, and detach finds no cprof there.
  grep -q "libcprof" "/proc/$PID/maps" && fail "jemalloc: libcprof.so left loaded by a refused attach"
  refused "jemalloc, detach" "cprof is not loaded in process $PID" "$CPROF" detach "$PID"
  unharmed jem
else
  note "skipped: another allocator (no libjemalloc.so.2)"
fi

# Detach of a process without cprof.
start_prog none "$T/prog"
refused "detach without cprof" "cprof is not loaded in process $PID" "$CPROF" detach "$PID"
unharmed none
exit 0
