#!/bin/sh
# The thread creation profile (Go's threadcreate): tests/progs/threads_known.c
# creates 3 threads in spawn_readers, 2 in spawn_waiters, 2 in spawn_others,
# and one in spawn_brief that has ended before the profile is taken. The
# live threads count under the function that called pthread_create, in the
# protobuf (go tool pprof -top, cprof -top) and in the text form (read by
# go tool pprof into the same numbers). In a fork child only the forking
# thread is left, in both profiles (tests/progs/threads_fork.c).
# timeout: 60
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
CPROF=$BUILD/cprof

cc_prog "$T/tk" "$PROGS/threads_known.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof \
  -Wl,-rpath,"$BUILD"
"$T/tk" "$T" || fail "program failed"

check() { # FLATFILE WHAT
  for want in "spawn_readers 3" "spawn_waiters 2" "spawn_others 2"; do
    grep -qx "$want" "$1" || { cat "$1"; fail "$2: no \"$want\""; }
  done
  grep -q '^spawn_brief ' "$1" && { cat "$1"; fail "$2: the ended thread is counted"; }
  [ "$(awk '{ s += $2 } END { print s }' "$1")" = 7 ] || { cat "$1"; fail "$2: total is not 7"; }
}

go tool pprof -raw "$T/threadcreate.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "unreadable"; }
grep -q '^PeriodType: threadcreate count$' "$T/raw" || fail "period type"
grep -q '^threadcreate/count$' "$T/raw" || fail "sample type"
pprof_flat threadcreate "$T/threadcreate.pb.gz" > "$T/flat.proto"
check "$T/flat.proto" "go tool pprof, protobuf"

head -n1 "$T/threadcreate.txt" | grep -qx 'threadcreate profile: total 7' ||
  fail "text header \"$(head -n1 "$T/threadcreate.txt")\""
grep -Eq '^#	0x[0-9a-f]+	spawn_readers\+0x[0-9a-f]+	' "$T/threadcreate.txt" || fail "text frame lines"
pprof_flat threadcreate "$T/threadcreate.txt" "$T/tk" > "$T/flat.text"
check "$T/flat.text" "go tool pprof, text"

if [ -x "$CPROF" ]; then
  "$CPROF" -top -nodefraction=0 "$T/threadcreate.pb.gz" > "$T/cprof.top" 2>&1 || { cat "$T/cprof.top"; fail "cprof -top"; }
  awk 'started { print $6, $1 } /^ *flat  flat%/ { started = 1 }' "$T/cprof.top" > "$T/flat.cprof"
  check "$T/flat.cprof" "cprof -top"
  "$CPROF" -top -nodefraction=0 "$T/tk" "$T/threadcreate.txt" > "$T/cprof.ttop" 2>&1 || { cat "$T/cprof.ttop"; fail "cprof -top text"; }
  awk 'started { print $6, $1 } /^ *flat  flat%/ { started = 1 }' "$T/cprof.ttop" > "$T/flat.ctext"
  check "$T/flat.ctext" "cprof -top, text"
fi
note "threadcreate: 3 + 2 + 2 live threads by creating function"

# --- fork: the child has the forking thread only ---------------------------------------
cc_prog "$T/tf" "$PROGS/threads_fork.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
mkdir "$T/fork"
"$T/tf" "$T/fork" || fail "fork: program failed"
[ "$(grep -c '^thread [0-9]* ' "$T/fork/child.threads")" -eq 1 ] || { cat "$T/fork/child.threads"; fail "fork: the child lists other threads"; }
grep -Eq '^fork_and_profile\+0x' "$T/fork/child.threads" || { cat "$T/fork/child.threads"; fail "fork: child stack"; }
grep -Eq '^created by spawn_forker\+0x' "$T/fork/child.threads" || fail "fork: child creator"
head -n1 "$T/fork/child.threadcreate" | grep -qx 'threadcreate profile: total 1' ||
  { cat "$T/fork/child.threadcreate"; fail "fork: child threadcreate"; }
grep -q 'spawn_forker+' "$T/fork/child.threadcreate" || fail "fork: child threadcreate stack"
head -n1 "$T/fork/parent.threadcreate" | grep -qx 'threadcreate profile: total 3' ||
  { cat "$T/fork/parent.threadcreate"; fail "fork: parent threadcreate"; }
grep -q 'spawn_sleepers+' "$T/fork/parent.threadcreate" || fail "fork: parent threadcreate stack"
note "fork: the child sees only the forking thread"
exit 0
