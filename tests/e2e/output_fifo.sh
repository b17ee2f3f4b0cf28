#!/bin/sh
# Output to a FIFO whose reader stops reading: the program's exit is
# bounded (it gives up on the trace, or the heap profile, with one
# message), never hung, and the program's own stdout and exit code are
# intact. Then a reader that reads everything gets a whole trace (go tool
# trace parses it).
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/trace_common.inc"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
cc_prog "$T/prog" "$PROGS/trace_prog.c"

mkfifo "$T/fifo" || fail "mkfifo"
# The reader: holds the FIFO open and never reads. The trace must be well
# over the pipe's 64 KiB: a round writes ~73 bytes of it, and 1.5 s of work
# made 56-76 KB beside two busy loops (rounds wait on a lock held 200 us),
# which once fitted and ended with no message. 3600 rounds are ~260 KB.
sleep 300 <> "$T/fifo" &
reader=$!
start=$(date +%s)
timeout -k 5 60 env CPROF_TRACE="$T/fifo" LD_PRELOAD="$LIB" "$T/prog" work 1.5 3600 > "$T/out" 2> "$T/err"
rc=$?
secs=$(( $(date +%s) - start ))
kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "stalled reader: the program ended with $rc after ${secs}s (124: hung)"; }
grep -q '^waited_ns [0-9]' "$T/out" && grep -q '^threads 4$' "$T/out" || { cat "$T/out"; fail "stalled reader: the program's output is lost"; }
n=$(grep -c 'cprof' "$T/err")
[ "$n" -eq 1 ] || { cat "$T/err"; fail "stalled reader: $n cprof messages, not 1"; }
grep -q "cannot write trace $T/fifo: .*gave up after" "$T/err" || { cat "$T/err"; fail "stalled reader: not the message wanted"; }
[ "$secs" -le 45 ] || fail "stalled reader: the exit took ${secs}s"
note "stalled reader: exit after ${secs}s: $(cat "$T/err")"

# A heap profile at exit into a FIFO already full (64 KiB, the pipe's
# size, written first), whose reader never reads.
sleep 300 <> "$T/fifo" &
reader=$!
head -c 65536 /dev/zero > "$T/fifo" || fail "cannot fill the FIFO"
start=$(date +%s)
timeout -k 5 60 env CPROF_HEAP_PROFILE="$T/fifo" LD_PRELOAD="$LIB" "$T/prog" work > "$T/out" 2> "$T/err"
rc=$?
secs=$(( $(date +%s) - start ))
kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "full FIFO: the program ended with $rc after ${secs}s (124: hung)"; }
grep -q '^threads 4$' "$T/out" || fail "full FIFO: the program's output is lost"
[ "$(grep -c cprof "$T/err")" -eq 1 ] && grep -q "cannot write heap profile $T/fifo: .*gave up after" "$T/err" ||
  { cat "$T/err"; fail "full FIFO: not the one message wanted"; }
[ "$secs" -le 45 ] || fail "full FIFO: the exit took ${secs}s"
note "full FIFO: exit after ${secs}s: $(cat "$T/err")"

# A reader that reads: the whole trace, no message.
fifo_reader "$T/fifo" "$T/got.trace"
reader=$READER
timeout -k 5 60 env CPROF_TRACE="$T/fifo" LD_PRELOAD="$LIB" "$T/prog" work > "$T/out" 2> "$T/err"
rc=$?
wait "$reader" || fail "the reader failed"
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "reading reader: the program ended with $rc"; }
grep -q '^threads 4$' "$T/out" || fail "reading reader: the program's output is lost"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "reading reader: messages"; }
trace_parse "$T/got.trace"
note "reading reader: $(wc -c < "$T/got.trace") bytes, parsed"
