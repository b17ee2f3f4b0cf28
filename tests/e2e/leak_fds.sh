#!/bin/sh
# A program that closes its inherited descriptors and opens a pipe at the
# numbers libunwind kept for its memory validation (tests/progs/leak_fds.c)
# runs to its end under every unwinder, with a sampled allocation after the
# close and a leak scan at exit: libunwind must not read from, write to or
# close the program's pipe (the scan blocked for ever in unw_step), and the
# leak profile must be written (libunwind closed its descriptor: "Bad file
# descriptor"). The same with the numbers left closed, and with 0 and 2
# closed too while a thread re-opens /dev/null at 0 (libunwind's pipe
# cannot come back at its numbers: cprof must stop trying, not take the
# lowest free numbers on every walk). The leaked block and
# the allocations after the close are in the profiles, exactly. A CPU
# profile and a trace, whose files are open from the start, are written
# to their paths, not to the program's /dev/null at their old numbers.
# timeout: 300
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

cc_prog "$T/prog" "$PROGS/leak_fds.c" -fno-omit-frame-pointer # for the fp walk
for mode in reuse closed daemon; do
  "$T/prog" $mode > "$T/want.$mode" || fail "plain run ($mode) failed"
done

for u in libunwind fp cfi; do
  for mode in closed reuse daemon; do
    r=$u-$mode
    timeout 60 env CPROF_RATE=1 CPROF_UNWIND=$u CPROF_LEAK_PROFILE="$T/$r.leak.pb.gz" \
      CPROF_HEAP_PROFILE="$T/$r.heap.pb.gz" LD_PRELOAD="$LIB" "$T/prog" $mode > "$T/$r.out" 2> "$T/$r.err"
    rc=$?
    [ $rc = 124 ] && fail "$r: hung (killed after 60 s)"
    [ $rc = 0 ] || { cat "$T/$r.err"; fail "$r: exit status $rc"; }
    cmp -s "$T/want.$mode" "$T/$r.out" || fail "$r: output differs"
    grep -q 'cannot write' "$T/$r.err" && { cat "$T/$r.err"; fail "$r: a profile was lost"; }
    pprof_flat inuse_space "$T/$r.leak.pb.gz" "$T/prog" > "$T/$r.leak"
    grep -qx 'leak_block 4321' "$T/$r.leak" || { cat "$T/$r.leak"; fail "$r: the 4321-byte leak is missing"; }
    # 20000 blocks of 64..163 bytes, 200 times each size: 2,270,000 B.
    pprof_flat alloc_space "$T/$r.heap.pb.gz" "$T/prog" > "$T/$r.heap"
    grep -qx 'sites 2270000' "$T/$r.heap" || { cat "$T/$r.heap"; fail "$r: sites' 2270000 B missing"; }
    note "$r: ok"
  done
done
# The daemon case, counted: one pipe2 for cprof's probe, one for libunwind,
# one to reopen it; not one per walk (20000 walks at rate 1).
if command -v strace >/dev/null; then
  timeout 120 strace -f --seccomp-bpf -c -o "$T/strace.txt" -e trace=pipe2 env CPROF_RATE=1 \
    CPROF_UNWIND=libunwind LD_PRELOAD="$LIB" "$T/prog" daemon > "$T/strace.out" 2> "$T/strace.err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/strace.err"; fail "daemon under strace: exit status $rc"; }
  cmp -s "$T/want.daemon" "$T/strace.out" || fail "daemon under strace: output differs"
  n=$(awk '$NF == "pipe2" { print $4 }' "$T/strace.txt")
  [ -n "$n" ] && [ "$n" -le 3 ] || { cat "$T/strace.txt"; fail "daemon: $n pipe2 calls, want at most 3"; }
  note "daemon: $n pipe2 calls"
fi
# The CPU profile and the trace, open since the start: their descriptors
# were closed and their numbers given to /dev/null.
timeout 60 env CPROF_CPU_PROFILE="$T/cpu.pb.gz" CPROF_TRACE="$T/trace.out" LD_PRELOAD="$LIB" \
  "$T/prog" reuse > "$T/cpu.out" 2> "$T/cpu.err"
rc=$?
[ $rc = 0 ] || { cat "$T/cpu.err"; fail "cpu: exit status $rc"; }
cmp -s "$T/want.reuse" "$T/cpu.out" || fail "cpu: output differs"
grep -q 'cannot write' "$T/cpu.err" && { cat "$T/cpu.err"; fail "cpu: a profile was lost"; }
go tool pprof -raw "$T/prog" "$T/cpu.pb.gz" 2>&1 | grep -q '^PeriodType: cpu' ||
  fail "cpu: no CPU profile"
go tool trace -d "$T/trace.out" > "$T/trace.txt" 2>&1 || { tail "$T/trace.txt"; fail "trace: unreadable"; }
note "cpu and trace: ok"
exit 0
