#!/bin/sh
# cprof attach and detach on a program whose held (main) thread is always
# busy (tests/progs/attach_busy.c): in malloc and free (mmap, munmap, brk,
# the arena lock), in nanosleep, in poll, waiting on a condition variable,
# and handling SIGSEGVs another thread sends it all the time (the signals
# that arrive during the injected calls are the program's: delivered to its
# handler, the calls carry on). Each attach and detach succeeds, and the
# program runs on to its end and exits 0 with its usual output.
# And a call that takes longer than cprof's 10 s deadline (another thread
# is in a library constructor for 20 s, holding the loader's lock; the
# first call that needs it is the dlsym asking which malloc is global,
# before the dlopen): cprof says the process may be wedged, keeps waiting,
# and the attach completes.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"

cc_prog "$T/busy" "$PROGS/attach_busy.c" -ldl
for mode in malloc sleep poll futex segv; do
  start_prog "$mode" "$T/busy" "$mode"
  for round in 1 2 3; do
    attach_to "$PID" -rate=1
    curl -sf "$URL/heap?debug=1" > /dev/null || fail "$mode: no heap profile after attach $round"
    "$CPROF" detach "$PID" 2> "$T/detach.err" || { cat "$T/detach.err"; fail "$mode: detach $round failed"; }
  done
  finish "$mode"
  [ "$(cat "$T/$mode.out")" = "ok $mode" ] || fail "$mode: output '$(cat "$T/$mode.out")'"
  [ -s "$T/$mode.err" ] && { cat "$T/$mode.err"; fail "$mode: unexpected stderr"; }
done
gcc -shared -fPIC -o "$T/slowlib.so" "$PROGS/attach_slowlib.c" || fail "cannot build attach_slowlib.c"
start_prog dlslow "$T/busy" dlslow "$T/slowlib.so"
i=0
while [ ! -e "$D/inctor" ]; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "dlslow: the constructor never ran"
  sleep 0.1
done
attach_to "$PID" -rate=1
grep -q "process $PID did not return from dlsym within 10 s; it may be wedged" "$T/attach.err" ||
  { cat "$T/attach.err"; fail "dlslow: no word about the slow call"; }
curl -sf "$URL/heap?debug=1" > /dev/null || fail "dlslow: no heap profile after attach"
finish dlslow
[ "$(cat "$T/dlslow.out")" = "ok dlslow" ] || fail "dlslow: output '$(cat "$T/dlslow.out")'"
exit 0
