#!/bin/sh
# cprof's messages reach the user whole:
# - exit-time messages of a program that closes its stderr first (ls does,
#   from atexit) go to the copy of stderr taken at start; a program that
#   closed every descriptor and reused the copy's number gets nothing
#   written into its own file;
# - a long bad value is cut, not what the line says is accepted;
# - CPROF_TRACE_BUFFER over the memory limit says which limit, and what to do.
# Each time the program's own output and exit status are those of a plain run.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/cs" "$PROGS/close_stderr.c"
mkdir "$T/list" && touch "$T/list/a" "$T/list/b"
ls "$T/list" > "$T/ls.plain" || fail "plain ls failed"

# lsrun NAME VAR=VALUE...: ls under the preload; its stdout and status as a
# plain run's; its stderr in $T/NAME.err.
lsrun() {
  n=$1; shift
  env "$@" LD_PRELOAD="$LIB" ls "$T/list" > "$T/$n.out" 2> "$T/$n.err"
  rc=$?
  [ $rc -eq 0 ] || { cat "$T/$n.err"; fail "$n: ls exited $rc"; }
  cmp -s "$T/ls.plain" "$T/$n.out" || fail "$n: ls's output differs from a plain run"
}
# one NAME: exactly one line on stderr, printed.
one() {
  [ "$(wc -l < "$T/$1.err")" -eq 1 ] || { cat "$T/$1.err"; fail "$1: $(wc -l < "$T/$1.err") lines on stderr, want 1"; }
  note "$1: $(cat "$T/$1.err")"
}

# --- stderr closed before exit -------------------------------------------------------
lsrun ls CPROF_HEAP_PROFILE="$T/nodir/heap.pb.gz"
one ls
grep -qx "cprof: cannot write heap profile $T/nodir/heap.pb.gz: No such file or directory" "$T/ls.err" ||
  fail "ls: not the message wanted"

env CPROF_HEAP_PROFILE="$T/nodir/heap.pb.gz" LD_PRELOAD="$LIB" "$T/cs" close > "$T/cs.out" 2> "$T/cs.err"
[ $? -eq 0 ] && [ "$(cat "$T/cs.out")" = closed ] || fail "close_stderr close: output $(cat "$T/cs.out")"
one cs
grep -q "^cprof: cannot write heap profile $T/nodir/heap.pb.gz: " "$T/cs.err" || fail "close_stderr: not the message wanted"

env CPROF_HEAP_PROFILE="$T/nodir/heap.pb.gz" LD_PRELOAD="$LIB" "$T/cs" reuse "$T/reused" > "$T/re.out" 2> "$T/re.err"
[ $? -eq 0 ] || fail "close_stderr reuse: exit status"
grep -q '^reused [1-9][0-9]*$' "$T/re.out" || fail "close_stderr reuse: output $(cat "$T/re.out")"
[ -e "$T/reused" ] && [ ! -s "$T/reused" ] || { head -c 300 "$T/reused"; fail "close_stderr reuse: cprof wrote into the program's file"; }
[ ! -s "$T/re.err" ] || { cat "$T/re.err"; fail "close_stderr reuse: stderr"; }
note "reused descriptor: nothing written into the program's file"

# --- long values: the line keeps what is accepted --------------------------------------
long=$(printf 'x%.0s' $(seq 1 600))
lsrun long CPROF_RATE="$long"
one long
grep -q '^cprof: CPROF_RATE="x*\.\.\." is not valid: expected bytes between samples.*; heap profiling is off$' "$T/long.err" ||
  fail "long value: the message lost its end"
lsrun longpat CPROF_TRACE="$T/nodir/$long"
one longpat
grep -q '^cprof: CPROF_TRACE=".*\.\.\.": cannot start: No such file or directory; no trace is written$' "$T/longpat.err" ||
  fail "long pattern: the message lost its end"

# --- trace buffers over the memory limit ------------------------------------------------
lsrun tb CPROF_TRACE="$T/t.trace" CPROF_TRACE_BUFFER=1G
one tb
grep -q 'CPROF_MEMORY_LIMIT, 1024M.*raise CPROF_MEMORY_LIMIT or lower CPROF_TRACE_BUFFER; no trace is written$' "$T/tb.err" ||
  fail "CPROF_TRACE_BUFFER=1G: the message does not say which limit"
[ ! -e "$T/t.trace" ] || fail "CPROF_TRACE_BUFFER=1G: a trace was written"
