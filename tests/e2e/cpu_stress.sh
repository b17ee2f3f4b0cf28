#!/bin/sh
# Signal safety: CPU profiling at 1000 Hz on tests/progs/cpu_stress.c
# (threads doing malloc/calloc/realloc/free at full speed, a pipe, file
# I/O with fsync, nanosleep and poll, a storm of short-lived threads, a
# fork) with CPROF_RATE=1, so that the SIGPROF handler keeps interrupting
# the allocator and the heap profiler's own unwinder. The program must
# finish (no deadlock), with its own checks passing (no corruption), and
# both profiles must be valid. Variants: libunwind, the frame-pointer
# walk, and sessions started and stopped over and over through
# /debug/pprof/profile while threads come and go and thread dumps
# (/debug/pprof/goroutine) signal every thread. The EINTR counts the
# program saw are printed (SA_RESTART and per-thread timers keep them at
# or near zero).
# timeout: 240
. "$(dirname "$0")/http_common.inc"
need_go

SECS=4
cc_prog "$T/stress" "$PROGS/cpu_stress.c"
cc_prog "$T/stress_fp" "$PROGS/cpu_stress.c" -fno-omit-frame-pointer

run() { # NAME PROGRAM [VAR=VALUE...]
  name=$1; prog=$2; shift 2
  timeout -k 5 60 env TMPDIR="$T" CPROF_RATE=1 CPROF_CPU_HZ=1000 CPROF_CPU_PROFILE="$T/$name.cpu.pb.gz" \
    CPROF_HEAP_PROFILE="$T/$name.heap.pb.gz" "$@" LD_PRELOAD="$LIB" \
    "$prog" $SECS > "$T/$name.out" 2> "$T/$name.err"
  rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$name: deadlock (killed after 60 s)"
  [ $rc -eq 0 ] || { cat "$T/$name.out" "$T/$name.err"; fail "$name: exit status $rc"; }
  grep -qx ok "$T/$name.out" || { cat "$T/$name.out"; fail "$name: the program's checks failed"; }
  [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: stderr not empty"; }
  check_cpu "$name" "$T/$name.cpu.pb.gz" $ALL
  go tool pprof -top -sample_index=alloc_objects "$T/$name.heap.pb.gz" > "$T/$name.heap.top" 2>&1 ||
    { cat "$T/$name.heap.top"; fail "$name: heap profile unreadable"; }
  grep -q ' malloc_worker$' "$T/$name.heap.top" || { cat "$T/$name.heap.top"; fail "$name: heap profile lacks malloc_worker"; }
  note "$name: $(sed -n 's/^verified /verified blocks: /p' "$T/$name.out"); $(awk '/^eintr/ { printf "%s EINTR %s, ", $2, $3 }' "$T/$name.out")"
}

check_cpu() { # NAME PROFILE FUNCTION...
  [ -s "$2" ] || fail "$1: no CPU profile"
  go tool pprof -top -cum -nodefraction=0 "$2" > "$T/$1.cpu.top" 2>&1 || { cat "$T/$1.cpu.top"; fail "$1: CPU profile unreadable"; }
  "$BUILD/cprof" -top "$2" > "$T/$1.cprof.top" 2>&1 || { cat "$T/$1.cprof.top"; fail "$1: cprof cannot read the CPU profile"; }
  name=$1; shift 2
  for fn in "$@"; do
    grep -q " $fn\$" "$T/$name.cpu.top" || { cat "$T/$name.cpu.top"; fail "$name: no $fn in the CPU profile"; }
  done
  note "$name: $(sed -n 's/^Duration: //p' "$T/$name.cpu.top")"
}

ALL="malloc_worker pipe_writer file_worker short_lived"
run libunwind "$T/stress"
run fp "$T/stress_fp" CPROF_UNWIND=fp

# --- sessions over HTTP, started and stopped while threads churn --------------------
# The program runs until the sessions are done ($T/stop): a fixed life of
# 10 s ended before the fifth session on a loaded machine.
timeout -k 5 60 env TMPDIR="$T" CPROF_RATE=1 CPROF_CPU_HZ=1000 CPROF_HTTP=127.0.0.1:0 \
  CPROF_HTTP_ADDR_FILE="$T/http.addr" LD_PRELOAD="$LIB" "$T/stress" 4 "$T/stop" > "$T/http.out" 2> "$T/http.err" &
PID=$!
PIDS="$PIDS $PID"
wait_file "$T/http.addr" || { cat "$T/http.err"; fail "http: no address file"; }
URL="http://$(cat "$T/http.addr")"
# Meanwhile, thread dumps: the threads profile's signal handler unwinds
# every thread too, and must not meet the CPU profile's inside libunwind.
( while kill -0 $PID 2>/dev/null; do
    curl -s -o /dev/null --max-time 10 "$URL/debug/pprof/goroutine?debug=2"
    curl -s -o /dev/null --max-time 10 "$URL/debug/pprof/goroutine"
  done ) &
DUMPS=$!
i=0
while [ $i -lt 5 ]; do
  i=$((i + 1))
  req http$i "$URL/debug/pprof/profile?seconds=1"
  [ "$STATUS" = 200 ] || {
    kill -0 $PID 2>/dev/null && echo "# http$i: the program still runs" || { wait $PID; echo "# http$i: the program exited with status $?"; }
    cat "$T/http.err"; }
  expect http$i 200 "application/octet-stream"
done
touch "$T/stop"
wait $PID
rc=$?
wait $DUMPS
[ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "http: deadlock (killed after 60 s)"
[ $rc -eq 0 ] || { cat "$T/http.out" "$T/http.err"; fail "http: exit status $rc"; }
grep -qx ok "$T/http.out" || { cat "$T/http.out"; fail "http: the program's checks failed"; }
# A 1 s session on a loaded machine may hold no sample of the threads that
# use little CPU (a short-lived thread runs under a millisecond): each
# session must show the busy workers, the five together every thread kind.
for i in 1 2 3 4 5; do check_cpu http$i "$T/http$i.body" malloc_worker; done
for fn in $ALL; do
  cat "$T"/http?.cpu.top | grep -q " $fn\$" || { cat "$T"/http?.cpu.top; fail "http: no $fn in any of the CPU profiles"; }
done
note "http: 5 sessions of 1 s with thread dumps (whose signals wake sleepers); $(awk '/^eintr/ { printf "%s EINTR %s, ", $2, $3 }' "$T/http.out")"
exit 0
