#!/bin/sh
# The whole-process counters across cprof detach and a second attach
# (tests/progs/attach_counters.c): attached at rate 1, the program keeps
# 1000 blocks and churns; detached, it frees 500 of them, churns 100,000
# malloc/free pairs and keeps 300 new blocks; attached again at the default
# rate. Calls made while detached are not counted (a free of a block
# counted while attached still is), so the counters' live objects
# (HeapObjects = Mallocs - Frees) equal the exact rate-1 profile's 500
# in-use objects, Frees stays below Mallocs and HeapAlloc covers the 500
# blocks of 1000 bytes. Then it frees 20 MB allocated before the first
# attach (frees whose allocations were never counted) and allocates 12 MiB:
# the live bytes stop at 0 instead of wrapping (the peak and the trace's
# HeapAlloc said 16 EiB).
# The program ends with a plain run's output, exit 0.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"

cc_prog "$T/prog" "$PROGS/attach_counters.c"
start_prog plain "$T/prog"
step plain go a
step plain b bdone
step plain c cdone
finish plain

start_prog c "$T/prog"
attach_to "$PID" -rate=1
step c go a
"$CPROF" detach "$PID" 2> "$T/detach.err" || { cat "$T/detach.err"; fail "detach failed"; }
step c b bdone
attach_to "$PID"
curl -sf "$URL/heap?debug=1" > "$T/heap.txt" || fail "no heap?debug=1"
# field NAME: the number after "# NAME = " in the statistics.
field() { sed -n "s/^# $1 = //p" "$T/heap.txt"; }
inuse=$(sed -n '1s/^heap profile: \([0-9]*\): .*/\1/p' "$T/heap.txt")
mallocs=$(field Mallocs); frees=$(field Frees); objects=$(field HeapObjects); alloc=$(field HeapAlloc)
note "profile in use $inuse; Mallocs $mallocs Frees $frees HeapObjects $objects HeapAlloc $alloc"
[ "$inuse" = 500 ] || { head -3 "$T/heap.txt"; fail "the exact profile has $inuse objects in use, want 500"; }
[ "$frees" -lt "$mallocs" ] || fail "Frees $frees not below Mallocs $mallocs"
[ "$objects" = 500 ] || fail "HeapObjects $objects, want the profile's 500"
[ "$(field live_objects)" = 500 ] || fail "live_objects $(field live_objects), want 500"
[ "$alloc" -ge 500000 ] && [ "$alloc" -lt 600000 ] || fail "HeapAlloc $alloc, want 500 blocks of 1000 bytes"
step c c cdone
curl -sf "$URL/peak" > "$T/peak.pb.gz" || fail "no peak profile"
"$CPROF" -comments "$T/peak.pb.gz" > "$T/peak.txt" 2>&1 || { cat "$T/peak.txt"; fail "cprof -comments"; }
peak=$(sed -n 's/.*cprof peak: \([0-9]*\) bytes live.*/\1/p' "$T/peak.txt" | head -1)
note "peak $peak bytes"
[ -n "$peak" ] || { head -5 "$T/peak.txt"; fail "no peak comment"; }
awk -v p="$peak" 'BEGIN { exit !(p < 1e8) }' || fail "peak $peak bytes live: wrapped below 0"
if command -v go > /dev/null 2>&1; then
  curl -sf "$URL/trace?seconds=1" > "$T/trace.out" || fail "no trace"
  go tool trace -d "$T/trace.out" > "$T/trace.txt" 2>&1 || { head "$T/trace.txt"; fail "go tool trace -d"; }
  grep -q " HeapAlloc .*mem=" "$T/trace.txt" || { head "$T/trace.txt"; fail "no HeapAlloc in the trace"; }
  awk '/ HeapAlloc .*mem=/ { v = $0; sub(/.*mem=/, "", v); if (v + 0 >= 1e8) bad = v }
    END { if (bad != "") { print "HeapAlloc mem=" bad; exit 1 } }' "$T/trace.txt" ||
    fail "the trace's HeapAlloc wrapped below 0"
else
  note "skipped: the trace's HeapAlloc (no go)"
fi
finish c
cmp "$T/plain.out" "$T/c.out" || fail "output differs after attach and detach"
[ -s "$T/c.err" ] && { cat "$T/c.err"; fail "unexpected stderr"; }
exit 0
