#!/bin/sh
# cprof attach -cpu on a program whose threads are in malloc and free
# nearly all the time (tests/progs/attach_cpuchurn.c), one started before
# the attach, new ones for 8 s after it: the program runs on (a SIGPROF landing in glibc's
# malloc before libunwind had set up its per-thread state, which glibc
# mallocs lazily in a dlopened library, deadlocked the thread), and the
# CPU profile at the detach has stacks through churn.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/attach_cpuchurn.c"
for run in 1 2; do
  start_prog "r$run" "$T/prog"
  attach_to "$PID" -cpu="$T/cpu$run.pb.gz"
  step "r$run" go phase2
  "$CPROF" detach "$PID" 2> "$T/detach.err" || { cat "$T/detach.err"; fail "detach failed"; }
  finish "r$run"
  [ "$(cat "$T/r$run.out")" = ok ] || fail "output '$(cat "$T/r$run.out")'"
  top=$(go tool pprof -top "$T/cpu$run.pb.gz" 2> /dev/null)
  echo "$top" | grep -q "^Type: cpu" || fail "no CPU profile at detach ($run)"
  has churn "$top"
done
exit 0
