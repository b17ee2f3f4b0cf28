#!/bin/sh
# The mutex and block profiles over HTTP, from a preloaded program whose
# threads keep fighting over locks (tests/progs/mutex_fight.c serve) at
# CPROF_MUTEX_RATE=1 and CPROF_BLOCK_RATE=1: go tool pprof and cprof read
# /debug/pprof/mutex and /debug/pprof/block, a -seconds delta holds only
# the window's contentions, the debug=1 texts are read by go tool pprof,
# and the index counts the records.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go
CPROF=$BUILD/cprof

cc_prog "$T/mf" "$PROGS/mutex_fight.c"
start_server mf "$T/mf" CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1
# Until both threads have fought through every kind of lock (a fixed 2 s
# was not always enough on a loaded machine).
# has KIND FN...: every FN is a frame of /debug/pprof/KIND?debug=1.
has() {
  k=$1; shift
  curl -s --max-time 10 "$URL/debug/pprof/$k?debug=1" > "$T/has.$k" || return 1
  for fn; do grep -q "	$fn+" "$T/has.$k" || return 1; done
}
i=0
until has mutex fight fight_rw fight_timed && has block cond_waiter fight fight_rw fight_timed; do
  i=$((i + 1))
  [ $i -gt 600 ] && { cat "$T/has.mutex" "$T/has.block"; fail "not every kind of lock contended within 60 s"; }
  sleep 0.1
done

nonzero() { awk '$2 != 0 { print $1 }' | sort | tr '\n' ' '; }

pprof_flat contentions "$URL/debug/pprof/mutex" | nonzero > "$T/mutex"
[ "$(cat "$T/mutex")" = "fight fight_rw fight_timed " ] || fail "mutex: contentions in \"$(cat "$T/mutex")\""
go tool pprof -top "$URL/debug/pprof/mutex" 2>/dev/null | grep -q '^Type: delay$' || fail "mutex: default type"
pprof_flat delay "$URL/debug/pprof/block" | nonzero > "$T/block"
[ "$(cat "$T/block")" = "cond_waiter fight fight_rw fight_timed " ] || fail "block: delays in \"$(cat "$T/block")\""
if [ -x "$CPROF" ]; then
  "$CPROF" -top -nodefraction=0 "$URL/debug/pprof/mutex" > "$T/cprof.top" 2>&1 || { cat "$T/cprof.top"; fail "cprof mutex"; }
  for fn in fight fight_rw fight_timed; do
    grep -q " $fn\$" "$T/cprof.top" || { cat "$T/cprof.top"; fail "cprof: no $fn"; }
  done
fi
note "mutex and block"

go tool pprof -top -nodefraction=0 -seconds 2 "$URL/debug/pprof/mutex" > "$T/delta" 2> "$T/delta.err" ||
  { cat "$T/delta.err"; fail "delta: go tool pprof failed"; }
grep -q '^Duration: 2' "$T/delta" || { cat "$T/delta"; fail "delta: no 2 s duration"; }
grep -q ' fight$' "$T/delta" || { cat "$T/delta"; fail "delta: no fight"; }
note "delta"

req text "$URL/debug/pprof/mutex?debug=1"
expect text 200 "text/plain; charset=utf-8"
head -n3 "$T/text.body" | tr '\n' '|' | grep -qx -- '--- mutex:|cycles/second=1000000000|sampling period=1|' ||
  fail "mutex text: header"
pprof_flat contentions "$T/text.body" | nonzero | grep -q 'fight ' || fail "mutex text: not read by go tool pprof"
req btext "$URL/debug/pprof/block?debug=1"
head -n1 "$T/btext.body" | grep -qx -- '--- contention:' || fail "block text: header"
pprof_flat delay "$T/btext.body" | nonzero | grep -q 'cond_waiter ' || fail "block text: not read by go tool pprof"
note "debug=1 texts"

req index "$URL/debug/pprof/"
for p in mutex block; do
  n=$(sed -n "s|^<tr><td>\\([0-9]*\\)</td><td><a href='$p?debug=1'>$p</a></td></tr>\$|\\1|p" "$T/index.body")
  [ "${n:-0}" -ge 3 ] || fail "index: $p count \"$n\""
done
expect_progress mf "after the requests"
stop_server "$PID"
exit 0
