#!/bin/sh
# The heap's flight recorder (CPROF_RECORD, src/runtime/flightrec.h) on a
# two-phase program (tests/progs/record_phases.c: A allocates and frees
# 100 x 1 MiB, B leaks 10 MiB a second in 3 steps, each boundary logged
# with its unix time): /debug/pprof/heap?window= over A, over B, over one
# step, over both, and window=LAST; alloc, inuse, peak and freed per phase
# function equal the program's truth at CPROF_RATE=1 and lie within four
# standard deviations of the sampler at the default rate; a bad window is
# a 400. A dump on USR2 writes CPROF_WINDOW_PROFILE too. Then 400000
# malloc/free pairs through a ring bounded by CPROF_MEMORY_LIMIT=64M: the
# ring is an eighth of it at most, the oldest events are dropped and said
# so. Each time the program's output and status are its own.
# timeout: 240
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/record_phases.c"
MIB=1048576

# run NAME "VAR=VALUE..." ARGS...: starts the program with a server and
# those variables; waits until it logged its phases (DIR/done); sets PID,
# URL, D.
run() {
  name=$1; vars=$2; shift 2
  D="$T/$name"; mkdir -p "$D"
  env CPROF_RECORD=10m CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$D/addr" $vars \
    LD_PRELOAD="$LIB" "$T/prog" "$D" "$@" > "$D/out" 2> "$D/err" &
  PID=$!; PIDS="$PIDS $PID"
  wait_for -e "$D/done" 120 "$name: the program never finished its phases: $(cat "$D/err")"
  wait_file "$D/addr" || fail "$name: no address file"
  URL="http://$(cat "$D/addr")"
}

# finish NAME: lets the program end; checks its output and status.
finish() {
  touch "$D/stop"
  wait $PID || fail "$1: the program exited $?"
  [ "$(cat "$D/out")" = "record_phases done" ] || fail "$1: output: $(cat "$D/out")"
}

# t KEY [N]: the logged unix time of KEY (step N).
t() { awk -v k="$1" -v n="${2:-0}" '$1 == k && $2 == n { print $3 }' "$D/truth"; }
# shift TIME DELTA: TIME + DELTA seconds, in full.
shift_t() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }

# window NAME SPEC: fetches heap?window=SPEC into $D/NAME.pb.gz, and
# "fn alloc inuse peak freed" (bytes) per phase function into $D/NAME.
window() {
  code=$(curl -s -o "$D/$1.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap?window=$2")
  [ "$code" = 200 ] || fail "window=$2: HTTP $code: $(cat "$D/$1.pb.gz")"
  for idx in alloc_space inuse_space peak_space freed_space; do
    pprof_flat "$idx" "$D/$1.pb.gz" "$T/prog" > "$D/$1.$idx" || fail "window=$2: pprof cannot read it"
  done
  for fn in phase_a_alloc phase_b_leak; do
    printf '%s' "$fn"
    for idx in alloc_space inuse_space peak_space freed_space; do
      printf ' %s' "$(awk -v f="$fn" '$1 == f { v = $2 } END { print v + 0 }' "$D/$1.$idx")"
    done
    echo
  done > "$D/$1"
}

# The truth: "fn alloc inuse peak freed" in MiB, per window.
cat > "$T/truth" <<'TRUTH'
A phase_a_alloc 100 0 100 100
A phase_b_leak 0 0 0 0
B phase_a_alloc 0 0 0 0
B phase_b_leak 30 30 30 0
S2 phase_a_alloc 0 0 0 0
S2 phase_b_leak 10 10 10 0
AB phase_a_alloc 100 0 100 100
AB phase_b_leak 30 30 0 0
LAST phase_a_alloc 100 0 100 100
LAST phase_b_leak 30 30 0 0
TRUTH

# query_all: the five windows of the run in $D.
query_all() {
  a0=$(shift_t "$(t A_START)" -0.05); a1=$(shift_t "$(t A_END)" 0.05)
  b0=$(shift_t "$(t B_START)" -0.05); now=$(date +%s)
  s0=$(shift_t "$(t STEP_START 2)" -0.5); s1=$(shift_t "$(t STEP_END 2)" 0.5)
  window A "$a0,$a1"
  window B "$b0,$((now + 1))"
  window S2 "$s0,$s1"
  window AB "$a0,0s"
  window LAST 1h
}

# --- rate 1: exact --------------------------------------------------------------
run exact CPROF_RATE=1 3
query_all
for w in A B S2 AB LAST; do
  awk -v w=$w -v M=$MIB '$1 == w { print $2, $3 * M, $4 * M, $5 * M, $6 * M }' "$T/truth" > "$D/$w.want"
  cmp -s "$D/$w" "$D/$w.want" || fail "rate 1, window $w: got
$(cat "$D/$w")
want
$(cat "$D/$w.want")"
done
note "rate 1: windows A, B, step 2, A..now and 1h equal the truth (alloc inuse peak freed)"
code=$(curl -s -o "$T/bad" -w '%{http_code}' "$URL/debug/pprof/heap?window=5s,yesterday")
[ "$code" = 400 ] || fail "a bad window: HTTP $code, want 400"
finish exact

# --- the default rate: within the sampler's four sigma --------------------------
run sampled CPROF_SEED=7 3
query_all
# An object of s = 1 MiB is sampled with p = 1 - exp(-s/R); n of them are
# estimated at k*s/p for k sampled, of sd s*sqrt(n(1-p)/p).
for w in A B S2 AB LAST; do
  awk -v w=$w -v M=$MIB -v R=524288 'NR == FNR { if ($1 == w) { want[$2] = $3 " " $4 " " $5 " " $6 }; next }
    { split(want[$1], x, " "); p = 1 - exp(-M / R)
      for (i = 1; i <= 4; i++) {
        n = x[i]; got = $(i + 1) / M; sd = sqrt(n * (1 - p) / p)
        if ((got - n) > 4 * sd + 1e-9 || (n - got) > 4 * sd + 1e-9) {
          printf "window %s %s column %d: %.2f MiB, truth %d MiB, 4 sd %.2f\n", w, $1, i, got, n, 4 * sd; bad = 1 } } }
    END { exit bad }' "$T/truth" "$D/$w" || fail "default rate: a window lies outside 4 sigma"
done
note "default rate: every window within 4 sigma of the truth"
finish sampled

# --- a dump writes the window profile -------------------------------------------
D="$T/dump"; mkdir -p "$D"
CPROF_RATE=1 CPROF_RECORD=1m CPROF_DUMP_SIGNAL=USR2 CPROF_WINDOW_PROFILE="$D/window.pb.gz" \
  LD_PRELOAD="$LIB" "$T/prog" "$D" 1 > "$D/out" 2> "$D/err" &
PID=$!; PIDS="$PIDS $PID"
wait_for -e "$D/done" 120 "dump: the program never finished its phases"
kill -USR2 $PID
# the file's number is the runtime's file sequence: the first dump's
i=0
until f=$(ls "$D" | grep '^window\.[0-9]*\.pb\.gz$') && grep -q '^cprof: dump ' "$D/err"; do
  i=$((i + 1)); [ $i -gt 6000 ] && fail "dump: no window file: $(ls "$D"); $(cat "$D/err")"
  sleep 0.01
done
pprof_flat alloc_space "$D/$f" "$T/prog" > "$D/flat"
grep -qx "phase_a_alloc $((100 * MIB))" "$D/flat" || fail "dump: phase A: $(cat "$D/flat")"
grep -qx "phase_b_leak $((10 * MIB))" "$D/flat" || fail "dump: phase B: $(cat "$D/flat")"
finish dump
note "a USR2 dump writes the recorded minute: phase A 100 MiB, B 10 MiB allocated"

# --- the ring's bound: the oldest events go ---------------------------------------
run churn "CPROF_RATE=1 CPROF_MEMORY_LIMIT=64M" churn 400000
window C 1h
go tool pprof -raw "$D/C.pb.gz" 2>/dev/null | grep -m1 'flight recorder' > "$D/comment"
set -- $(sed -n 's/.* \([0-9]*\) events kept in a ring of \([0-9]*\) bytes, \([0-9]*\) older.*/\1 \2 \3/p' "$D/comment")
[ $# = 3 ] || fail "churn: no recorder comment: $(cat "$D/comment")"
kept=$1; ring=$2; lost=$3
[ "$ring" -le $((64 * MIB / 8)) ] || fail "churn: a ring of $ring bytes, over an eighth of the limit"
[ "$kept" -gt 0 ] && [ $((kept * 40)) -le "$ring" ] || fail "churn: $kept events in $ring bytes"
[ $((kept + lost)) -ge 800000 ] && [ "$lost" -gt 0 ] || fail "churn: $kept kept + $lost dropped < 800000 events"
pprof_flat freed_space "$D/C.pb.gz" "$T/prog" > "$D/flat"
freed=$(awk '$1 == "phase_churn" { print $2 }' "$D/flat")
[ "${freed:-0}" -gt 0 ] && [ "$freed" -le $((kept * 64)) ] || fail "churn: freed $freed B from $kept events"
grep -q "incomplete" "$D/comment" || fail "churn: the window reaches before the ring and does not say so"
note "churn: $kept events kept in a ring of $ring B (limit 64M), $lost dropped, and said so"
finish churn
