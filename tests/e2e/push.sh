#!/bin/sh
# CPROF_PUSH (src/runtime/push.h) against tests/push_receiver.py, a local
# Pyroscope /ingest receiver: a CPU delta and a heap snapshot arrive at each
# interval and once more at exit, with the name, static labels and bearer
# or Basic credentials asked for; each loads in go tool pprof; the CPU
# deltas add up, sample for sample, to the whole-run CPROF_CPU_PROFILE.
# A receiver that stalls or refuses never holds the program: its own work
# completes and it exits well inside a bound (without the exit bound a
# stalled receiver would hold it for minutes), with one line saying what
# was not delivered. A bad CPROF_PUSH is one line, and the program runs.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
cc_prog "$T/work" "$PROGS/push_work.c"

# receiver DIR MODE [GOAL]: starts one, its pid in RPID, its port in PORT.
receiver() {
  mkdir -p "$1"
  python3 "$TOP/tests/push_receiver.py" "$@" &
  RPID=$!
  wait_for -s "$1/port" 30 "receiver $2 did not start"
  PORT=$(cat "$1/port")
}
trap 'kill $RPID 2>/dev/null; rm -rf "$T"' EXIT

# --- delivered: a profile per interval, deltas adding up ---------------------
GOAL=4
receiver "$T/ok" ok $GOAL
CPROF_PUSH="http://127.0.0.1:$PORT" CPROF_PUSH_INTERVAL=0.2 CPROF_PUSH_NAME=pushwork \
  CPROF_PUSH_LABELS=env=test,region=eu CPROF_PUSH_TOKEN=s3cret CPROF_CPU_PROFILE="$T/whole.pb.gz" \
  LD_PRELOAD="$LIB" "$T/work" "$T/ok/goal" > "$T/ok.out" 2> "$T/ok.err" || fail "program failed: $(cat "$T/ok.err")"
grep -q '^rounds [1-9][0-9]*$' "$T/ok.out" || fail "program output: $(cat "$T/ok.out")"
[ -s "$T/ok.err" ] && fail "unexpected messages: $(cat "$T/ok.err")"
[ -e "$T/ok/rejected" ] && fail "the receiver rejected requests: $(cat "$T/ok/rejected")"
ncpu=$(awk '$2 == "cpu"' "$T/ok/log" | wc -l)
nheap=$(awk '$2 == "heap"' "$T/ok/log" | wc -l)
# GOAL interval pushes made the program stop; then at least the exit's.
[ "$ncpu" -ge $((GOAL + 1)) ] && [ "$nheap" -ge $((GOAL + 1)) ] ||
  fail "$ncpu CPU and $nheap heap profiles, want at least $((GOAL + 1)) of each"
awk '$3 != "pushwork{env=test,region=eu}" || $6 != "Bearer_s3cret" || $4 > $5 { bad = 1; print }
     END { exit bad }' "$T/ok/log" || fail "wrong name, labels, credentials or span (above)"
sum=0
for n in $(awk '$2 == "cpu" { print $1 }' "$T/ok/log"); do
  set -- $(raw_totals "$T/ok/$n.pb.gz")
  sum=$((sum + $1))
  go tool pprof -raw "$T/ok/$n.pb.gz" 2>/dev/null | grep -q '^samples/count cpu/nanoseconds$' ||
    fail "$n: not a CPU profile"
done
set -- $(raw_totals "$T/whole.pb.gz")
[ "$1" -gt 0 ] && [ "$sum" -eq "$1" ] || fail "CPU deltas add up to $sum samples, the whole run has $1"
for n in $(awk '$2 == "heap" { print $1 }' "$T/ok/log"); do
  raw_totals "$T/ok/$n.pb.gz" > /dev/null
done
last=$(awk '$2 == "heap" { n = $1 } END { print n }' "$T/ok/log")
go tool pprof -top -sample_index=alloc_objects "$T/work" "$T/ok/$last.pb.gz" 2>/dev/null | grep -q ' churn$' ||
  fail "the last heap snapshot does not show churn"
note "$ncpu CPU deltas ($sum samples = the whole run's) and $nheap heap snapshots, all loaded by go tool pprof"

# Basic credentials instead of a token.
CPROF_PUSH="http://127.0.0.1:$PORT/" CPROF_PUSH_INTERVAL=10 CPROF_PUSH_BASIC_AUTH=user:pw \
  LD_PRELOAD="$LIB" "$T/work" - 3 > "$T/basic.out" 2> "$T/basic.err" || fail "basic: program failed"
grep -q ' work .* Basic_dXNlcjpwdw==$' "$T/ok/log" || fail "basic: no Basic credentials: $(tail -2 "$T/ok/log")"
kill $RPID

# --- a receiver that stalls, one that refuses ---------------------------------
# bounded RUN...: the program does its 100 rounds and exits within 60 s (its
# exit waits at most 2 s for the queue; a stalled request alone takes 5 s).
bounded() {
  rc=0
  timeout 60 env CPROF_PUSH_INTERVAL=0.05 LD_PRELOAD="$LIB" "$T/work" - 100 > "$T/b.out" 2> "$T/b.err" || rc=$?
  [ $rc -eq 124 ] && fail "$1: the program did not exit within 60 s"
  [ $rc -eq 0 ] || fail "$1: status $rc: $(cat "$T/b.err")"
  grep -qx 'rounds 100' "$T/b.out" || fail "$1: the work did not complete: $(cat "$T/b.out")"
  [ "$(wc -l < "$T/b.err")" -eq 1 ] && grep -q "^cprof: CPROF_PUSH: .* profiles not delivered to .*$2" "$T/b.err" ||
    fail "$1: not one line about the undelivered profiles: $(cat "$T/b.err")"
}
receiver "$T/stall" stall
CPROF_PUSH="http://127.0.0.1:$PORT" bounded stall "still unsent at exit"
kill $RPID
note "stalled receiver: $(cat "$T/b.err")"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
CPROF_PUSH="http://127.0.0.1:$port" bounded refused "failed, the last: Connection refused"
note "refusing receiver: $(cat "$T/b.err")"

# --- a bad variable: one line, the program runs --------------------------------
for bad in "CPROF_PUSH=https://127.0.0.1:1" "CPROF_PUSH=http://example.com:4040" \
    "CPROF_PUSH_INTERVAL=0" "CPROF_PUSH_LABELS=a=b," "CPROF_PUSH_NAME=a{b}"; do
  env CPROF_PUSH=http://127.0.0.1:1 "$bad" LD_PRELOAD="$LIB" "$T/work" - 2 > "$T/c.out" 2> "$T/c.err" ||
    fail "$bad: program failed"
  grep -qx 'rounds 2' "$T/c.out" || fail "$bad: $(cat "$T/c.out")"
  [ "$(wc -l < "$T/c.err")" -eq 1 ] && grep -q "is not valid: .*; profiles are not pushed$" "$T/c.err" ||
    fail "$bad: $(cat "$T/c.err")"
done
note "bad variables: one line each"
exit 0
