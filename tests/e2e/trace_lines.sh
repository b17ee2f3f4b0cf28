#!/bin/sh
# Trace stacks carry file and line (DWARF line tables, read at the trace's
# end in the writer thread): tests/progs/trace_prog.c built with -g, traced
# for its whole run; its mutex waits in contend() are at the line of its
# pthread_mutex_lock call, in Go 1.19's sync blocking profile (go tool
# pprof -lines) and in Go 1.23's trace dump (-d=1) when installed; frames
# in objects without DWARF keep the object as the file.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"

cc_prog "$T/tp" "$PROGS/trace_prog.c" -ldl
src="$PROGS/trace_prog.c"
line=$(awk '/^__attribute__\(\(noinline\)\) static void contend\(void\)/ { f = 1 }
  f && /pthread_mutex_lock\(&mu\)/ { print NR; exit }' "$src")
[ -n "$line" ] || fail "no pthread_mutex_lock in contend() in $src"
CPROF_TRACE="$T/l.trace" LD_PRELOAD="$LIB" "$T/tp" work 1 > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "the program failed"; }
grep -q '^threads 4$' "$T/out" || fail "program wrote $(cat "$T/out")"
trace_parse "$T/l.trace"

go tool trace -pprof=sync "$T/l.trace" > "$T/sync.pb" 2> "$T/e" || { cat "$T/e"; fail "-pprof=sync"; }
go tool pprof -top -lines -nodefraction=0 "$T/sync.pb" > "$T/top" 2> "$T/e" || { cat "$T/e"; fail "pprof -lines"; }
grep -q " contend $src:$line\$" "$T/top" ||
  { head -20 "$T/top"; fail "go 1.19: no contend at $src:$line in the sync profile"; }
note "go 1.19: contend at $src:$line"

go123=/usr/lib/go-1.23/bin/go
if [ -x "$go123" ]; then
  "$go123" tool trace -d=1 "$T/l.trace" > "$T/d123" 2> "$T/e123" || { tail -3 "$T/e123"; fail "go 1.23 cannot read the trace"; }
  grep -A1 '^	contend @' "$T/d123" | grep -qx "		$src:$line" ||
    fail "go 1.23: no contend frame at $src:$line"
  grep -q '^		/.*libc\.so\.6:0$' "$T/d123" || fail "go 1.23: no libc frame with its object as the file"
  note "go 1.23: contend at $src:$line"
fi
