#!/bin/sh
# The threads and threadcreate profiles over HTTP, from a preloaded program
# (tests/progs/threads_known.c): go tool pprof and cprof read
# /debug/pprof/goroutine (each named thread in its function, the server's
# own threads left out) and /debug/pprof/threadcreate; curl reads the
# grouped text and the per-thread dump (?debug=2); the index counts the
# program's 8 threads; a delta over 1 s has nothing in it.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go
CPROF=$BUILD/cprof

cc_prog "$T/tk" "$PROGS/threads_known.c"
start_server tk "$T/tk"

# --- goroutine: protobuf --------------------------------------------------------
go tool pprof -traces "$URL/debug/pprof/goroutine" > "$T/traces" 2> "$T/traces.err" ||
  { cat "$T/traces.err"; fail "go tool pprof goroutine"; }
awk '/^-+\+-+$/ { if (name != "") print name stack; name = ""; stack = ""; next }
     $1 == "thread:" { name = $2; next }
     name != "" && NF > 0 { stack = stack " " $NF }
     END { if (name != "") print name stack }' "$T/traces" | sort > "$T/threads"
[ "$(wc -l < "$T/threads")" -eq 8 ] || { cat "$T/threads"; fail "goroutine: not 8 threads (the server's are hidden)"; }
for want in "reader-0 block_in_read" "reader-2 block_in_read" "waiter-1 block_in_cond" \
            "spinner spin_forever" "masked cprof_thread_signal_blocked" "tk main_waits"; do
  thr=${want%% *}; fn=${want#* }
  grep "^$thr " "$T/threads" | grep -q " $fn" || { cat "$T/threads"; fail "goroutine: $thr not in $fn"; }
done
if [ -x "$CPROF" ]; then
  "$CPROF" -top -nodefraction=0 "$URL/debug/pprof/goroutine" > "$T/cprof.top" 2>&1 ||
    { cat "$T/cprof.top"; fail "cprof goroutine"; }
  grep -Eq ' 3 .* block_in_read$' "$T/cprof.top" || { cat "$T/cprof.top"; fail "cprof: block_in_read"; }
  grep -q '^Type: goroutine$' "$T/cprof.top" || fail "cprof: type"
fi
note "goroutine: 8 threads by name and function"

# --- goroutine: text forms ------------------------------------------------------------
req text "$URL/debug/pprof/goroutine?debug=1"
expect text 200 "text/plain; charset=utf-8"
head -n1 "$T/text.body" | grep -qx 'goroutine profile: total 8' || fail "debug=1: header"
grep -q '^# labels: {"thread":"spinner"}$' "$T/text.body" || fail "debug=1: labels"
grep -q '^--- Memory map: ---$' "$T/text.body" || fail "debug=1: memory map"
pprof_flat goroutine "$T/text.body" > "$T/flat.text"
grep -qx 'block_in_read 0' "$T/flat.text" || grep -q '^block_in_read ' "$T/flat.text" ||
  { cat "$T/flat.text"; fail "debug=1: not read by go tool pprof"; }
req dump "$URL/debug/pprof/goroutine?debug=2"
expect dump 200 "text/plain; charset=utf-8"
[ "$(grep -c '^thread [0-9]* ".*" \[.*\]:$' "$T/dump.body")" -eq 8 ] || { cat "$T/dump.body"; fail "debug=2: 8 threads"; }
grep -q '^thread [0-9]* "waiter-0" \[sleeping' "$T/dump.body" || fail "debug=2: waiter-0 state"
grep -Eq '^block_in_cond\+0x[0-9a-f]+$' "$T/dump.body" || fail "debug=2: frames"
grep -Eq '^created by spawn_readers\+0x[0-9a-f]+$' "$T/dump.body" || fail "debug=2: created by"
note "goroutine: debug=1 and debug=2"

# --- threadcreate ------------------------------------------------------------------
pprof_flat threadcreate "$URL/debug/pprof/threadcreate" > "$T/tc"
for want in "spawn_readers 3" "spawn_waiters 2" "spawn_others 2"; do
  grep -qx "$want" "$T/tc" || { cat "$T/tc"; fail "threadcreate: no \"$want\""; }
done
note "threadcreate"

# --- index and delta ------------------------------------------------------------------
req index "$URL/debug/pprof/"
grep -q "^<tr><td>8</td><td><a href='goroutine?debug=1'>goroutine</a></td></tr>\$" "$T/index.body" ||
  { grep goroutine "$T/index.body"; fail "index: goroutine count"; }
grep -q "^<tr><td>7</td><td><a href='threadcreate?debug=1'>threadcreate</a></td></tr>\$" "$T/index.body" ||
  { grep threadcreate "$T/index.body"; fail "index: threadcreate count"; }
go tool pprof -raw -seconds 1 "$URL/debug/pprof/threadcreate" > "$T/delta" 2>&1 || { cat "$T/delta"; fail "delta"; }
grep -q '^Duration: 1' "$T/delta" || { cat "$T/delta"; fail "delta: duration"; }
awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+:/ { n++ } END { exit n > 0 }' "$T/delta" ||
  { cat "$T/delta"; fail "delta: threads created before the window"; }
note "index counts, delta"
stop_server "$PID"
exit 0
