#!/bin/sh
# /debug/pprof/peak and /debug/pprof/leaks on a live program with known
# lifetimes (tests/progs/heaplife.c, held at its end) at CPROF_RATE=1:
# the peak holds exactly the spike and what was live with it, ?reset=1
# starts a new window (the spike is gone from the next peak), the leak
# scan (run by the server thread, the program's threads stopped) finds
# exactly the dropped blocks and none that a global, a heap block, an
# interior pointer or the other thread's stack keeps; debug=1 is the
# legacy text; the index lists both; go tool pprof reads them over HTTP.
# Then scans while four threads allocate and free without pause (at rate 1
# and the default rate): every one answers, finds no leak (every live block
# is on a thread's stack), stops the five threads (main too), and they go on.
# timeout: 300
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/life" "$PROGS/heaplife.c"
mkfifo "$T/in" || fail "mkfifo"
env CPROF_RATE=1 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/addr" LD_PRELOAD="$LIB" \
  "$T/life" small hold < "$T/in" > "$T/truth" 2> "$T/err" &
PID=$!
PIDS="$PIDS $PID"
exec 3> "$T/in"
i=0
until grep -q '^READY$' "$T/truth" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 300 ] && { cat "$T/err"; fail "the program does not get ready"; }
  sleep 0.1
done
wait_file "$T/addr" || fail "no address file"
URL="http://$(cat "$T/addr")/debug/pprof"

# flat_eq KIND PROFILE: the TRUTH KIND lines equal pprof's inuse values.
flat_eq() {
  pprof_flat inuse_objects "$2" "$T/life" > "$T/o"
  pprof_flat inuse_space "$2" "$T/life" > "$T/b"
  awk -v kind="$1" 'FILENAME ~ /\/o$/ { o[$1]=$2; next } FILENAME ~ /\/b$/ { b[$1]=$2; next }
    $1 == "TRUTH" && $2 == kind && ((o[$3]+0) != $4 || (b[$3]+0) != $5) { printf "%s %s: %s / %s, truth %s / %s\n", kind, $3, o[$3], b[$3], $4, $5; bad=1 }
    $1 == "TRUTH" && $2 == "KEPT" && kind == "LEAK" && (b[$3]+0) != 0 { printf "%s reachable, reported\n", $3; bad=1 }
    END { exit bad }' "$T/o" "$T/b" "$T/truth" || fail "$2: $1 differs from the truth"
}

curl -sf -o "$T/peak.pb.gz" "$URL/peak" || fail "GET peak"
flat_eq PEAK "$T/peak.pb.gz"
curl -sf -o "$T/leaks.pb.gz" "$URL/leaks" || fail "GET leaks"
flat_eq LEAK "$T/leaks.pb.gz"
go tool pprof -raw "$T/leaks.pb.gz" 2>/dev/null | grep -q '^Comment: cprof leaks: 20 unreachable .* 2 threads stopped, 1 missed;' ||
  { go tool pprof -raw "$T/leaks.pb.gz" 2>&1 | grep Comment; fail "leaks: the scan did not stop the two threads that let it (and miss the masked one)"; }
note "peak and leaks exact"

# A new window: the spike is no longer in the peak.
curl -sf -o /dev/null "$URL/peak?reset=1" || fail "GET peak?reset=1"
curl -sf -o "$T/peak2.pb.gz" "$URL/peak" || fail "GET peak after reset"
[ "$(pprof_flat inuse_space "$T/peak2.pb.gz" "$T/life" | awk '$1 == "spike" && $2 != 0 { print $2 }')" = "" ] ||
  fail "peak after reset still holds the spike"
note "peak reset"

# Text forms, the index, and go tool pprof over HTTP.
curl -sf "$URL/leaks?debug=1" | head -1 | grep -q '^heap profile: 20: 60000 \[20: 60001\] @ heap/2$' ||
  fail "leaks?debug=1: not the legacy heap text"
curl -sf "$URL/peak?debug=1" | grep -q '^# cprof_stats_t$' || fail "peak?debug=1: not the legacy heap text"
curl -sf "$URL/" > "$T/index" || fail "GET index"
for p in leaks peak; do
  grep -q "<a href='$p?debug=1'>$p</a>" "$T/index" || fail "index: no row for $p"
done
go tool pprof -raw "$URL/leaks" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "go tool pprof cannot fetch leaks"; }
grep -q 'drop_blocks' "$T/raw" || fail "go tool pprof: no drop_blocks in the leaks"
note "text, index, go tool pprof"

echo >&3
exec 3>&-
wait "$PID" || fail "the program failed"

cc_prog "$T/churn" "$PROGS/leak_churn.c"
for rate in 1 524288; do
  rm -f "$T/caddr"
  env CPROF_RATE=$rate CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/caddr" LD_PRELOAD="$LIB" \
    "$T/churn" 2> "$T/churn.err" &
  CP=$!
  PIDS="$PIDS $CP"
  wait_file "$T/caddr" || fail "churn: no address file"
  CURL="http://$(cat "$T/caddr")/debug/pprof"
  for i in 1 2 3 4 5 6 7 8 9 10; do
    curl -sf --max-time 60 -o "$T/c.leak" "$CURL/leaks" || fail "churn rate $rate: scan $i failed"
    curl -sf --max-time 60 -o /dev/null "$CURL/peak?reset=1" || fail "churn rate $rate: peak $i failed"
    go tool pprof -raw "$T/c.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: 0 unreachable .* 5 threads stopped, 0 missed;' ||
      { go tool pprof -raw "$T/c.leak" 2>&1 | grep Comment; fail "churn rate $rate: scan $i"; }
  done
  # The threads still work: their count moves (within 10 s, however loaded).
  n1=$(tail -n 1 "$T/churn.err"); j=0
  while [ "$(tail -n 1 "$T/churn.err")" -le "$n1" ]; do
    j=$((j + 1))
    [ $j -gt 100 ] && fail "churn rate $rate: the threads stopped working"
    sleep 0.1
  done
  kill "$CP"; wait "$CP" 2>/dev/null
  note "churn rate $rate: 10 scans, no false leak"
done
exit 0
