#!/bin/sh
# cprof attach refuses, in one line and before touching it, a process
# under a seccomp filter (tests/progs/attach_hostile.c seccomp kills itself
# on mmap(PROT_EXEC), which loading libcprof.so needs): whether the calls
# cprof would make are allowed cannot be known from outside. The program
# runs on to its end with a plain run's output and exits 0 (it died of
# SIGSYS in dlopen).
# cprof detach, though, works on a process attached before it installed its
# filter (attach_hostile late): detach loads nothing.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"

grep -q "^Seccomp:" /proc/self/status || skip "skip: the kernel has no seccomp"
cc_prog "$T/hostile" "$PROGS/attach_hostile.c"
start_prog plain "$T/hostile" seccomp
finish plain
grep -q "differing rounds 0\$" "$T/plain.out" || fail "plain run: '$(cat "$T/plain.out")'"

start_prog sec "$T/hostile" seccomp
grep -q "^Seccomp:[[:space:]]*2" "/proc/$PID/status" || fail "the program has no seccomp filter"
"$CPROF" attach "$PID" > "$T/r.out" 2> "$T/r.err" && fail "attach to a seccomp-filtered program succeeded"
grep -q "process $PID runs under a seccomp filter" "$T/r.err" || { cat "$T/r.err"; fail "refusal says '$(cat "$T/r.err")'"; }
[ "$(wc -l < "$T/r.err")" -le 1 ] || { cat "$T/r.err"; fail "more than one line"; }
grep -q "^TracerPid:[[:space:]]*0" "/proc/$PID/status" || fail "still traced after the refusal"
finish sec
cmp "$T/plain.out" "$T/sec.out" || { cat "$T/sec.out"; fail "output differs after a refused attach"; }
[ -s "$T/sec.err" ] && { cat "$T/sec.err"; fail "unexpected stderr"; }

start_prog late "$T/hostile" late
attach_to "$PID"
step late go filtered
grep -q "^Seccomp:[[:space:]]*2" "/proc/$PID/status" || fail "late: the program has no seccomp filter"
"$CPROF" detach "$PID" > "$T/d.out" 2> "$T/d.err" || { cat "$T/d.err"; fail "late: detach refused"; }
grep -q "profiling of process $PID stopped" "$T/d.err" "$T/d.out" || { cat "$T/d.err"; fail "late: detach says '$(cat "$T/d.err")'"; }
grep -q "^TracerPid:[[:space:]]*0" "/proc/$PID/status" || fail "late: still traced after the detach"
finish late
cmp "$T/plain.out" "$T/late.out" || { cat "$T/late.out"; fail "late: output differs after attach and detach"; }
[ -s "$T/late.err" ] && { cat "$T/late.err"; fail "late: unexpected stderr"; }
exit 0
