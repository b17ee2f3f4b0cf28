#!/bin/sh
# The mutex and block profiles of tests/progs/mutex_fight.c, whose two
# threads fight over locks in fight() (pthread_mutex_lock), fight_timed()
# (timedlock) and fight_rw() (rwlock wrlock), and whose cond_waiter() waits
# on a condition variable for ~100 ms:
#  - preloaded, CPROF_MUTEX_RATE=1: the contentions show under exactly those
#    three functions (go tool pprof -top and cprof -top), with delays;
#  - the block profile (CPROF_BLOCK_RATE=1) has cond_waiter, the three,
#    and main, joining the threads;
#  - and the semaphore waits (sem_wait, sem_timedwait: only those that
#    block) and a pthread_join, with their durations;
#  - an uncontended run, and a run without CPROF_MUTEX_RATE, record nothing;
#  - CPROF_MUTEX_RATE=5: values scaled by the rate (multiples of 5);
#  - linked, rates set through the API: the text forms (--- mutex: /
#    --- contention:) read by go tool pprof give the protobuf's numbers;
#  - the program's results are right in every run.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
CPROF=$BUILD/cprof

cc_prog "$T/mf" "$PROGS/mutex_fight.c"
cc_prog "$T/mfl" "$PROGS/mutex_fight.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof \
  -Wl,-rpath,"$BUILD"

run() { # NAME MODE [ENV...]: preloaded, profiles at exit to $T/NAME.{mutex,block}.pb.gz
  name=$1; mode=$2; shift 2
  env "$@" CPROF_MUTEX_PROFILE="$T/$name.mutex.pb.gz" CPROF_BLOCK_PROFILE="$T/$name.block.pb.gz" \
    LD_PRELOAD="$LIB" "$T/mf" "$mode" > "$T/$name.out" || fail "$name: program failed"
  want="600 600 600 10"; [ "$mode" = alone ] && want="100000 0 0 0"; [ "$mode" = sem ] && want=sem
  [ "$(cat "$T/$name.out")" = "$want" ] || fail "$name: program printed $(cat "$T/$name.out")"
  [ -s "$T/$name.mutex.pb.gz" ] && [ -s "$T/$name.block.pb.gz" ] || fail "$name: no profiles"
}

# flat_exact INDEX PROFILE [BINARY]: "name flat" per node, counts plain and
# delays in whole nanoseconds.
flat_exact() {
  idx=$1; prof=$2; shift 2
  go tool pprof -top -unit=ns -nodefraction=0 -nodecount=100000 -sample_index="$idx" "$@" "$prof" 2>/dev/null |
    awk 'started { v = $1; sub(/ns$/, "", v); print $6, v } /^ *flat  flat%/ { started = 1 }'
}

# flat_nonzero INDEX PROFILE [BINARY]: the functions with a nonzero flat value.
flat_nonzero() {
  pprof_flat "$@" | awk '$2 != 0 { print $1 }' | sort
}

# --- contention under the fighting functions -------------------------------------
run fight fight CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1
go tool pprof -raw "$T/fight.mutex.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "unreadable"; }
grep -q '^PeriodType: contentions count$' "$T/raw" || fail "mutex: period type"
grep -q '^contentions/count delay/nanoseconds$' "$T/raw" || fail "mutex: sample types"
printf 'fight\nfight_rw\nfight_timed\n' > "$T/fighters"
for idx in contentions delay; do
  flat_nonzero $idx "$T/fight.mutex.pb.gz" > "$T/mutex.$idx"
  cmp -s "$T/fighters" "$T/mutex.$idx" || { cat "$T/mutex.$idx"; fail "mutex $idx: not the three fighters"; }
done
go tool pprof -top "$T/fight.mutex.pb.gz" 2>/dev/null | grep -q '^Type: delay$' || fail "mutex: default type is not delay"
if [ -x "$CPROF" ]; then
  "$CPROF" -top -nodefraction=0 -sample_index=contentions "$T/fight.mutex.pb.gz" > "$T/cprof.top" 2>&1 ||
    { cat "$T/cprof.top"; fail "cprof -top"; }
  awk 'started && $1 != 0 { print $6 } /^ *flat  flat%/ { started = 1 }' "$T/cprof.top" | sort > "$T/cprof.flat"
  cmp -s "$T/fighters" "$T/cprof.flat" || { cat "$T/cprof.top"; fail "cprof: not the three fighters"; }
fi
note "mutex: contentions under fight, fight_timed, fight_rw"

flat_nonzero delay "$T/fight.block.pb.gz" > "$T/block.delay"
# main blocks too: in pthread_join, for the fighters and the waiter.
printf 'cond_waiter\nfight\nfight_rw\nfight_timed\nmain\n' | cmp -s - "$T/block.delay" ||
  { cat "$T/block.delay"; fail "block: not cond_waiter, the fighters and main's joins"; }
# cond_waiter waited ten times for a signal sent 10 ms later.
w=$(flat_exact delay "$T/fight.block.pb.gz" | awk '$1 == "cond_waiter" { print $2 }')
awk -v w="$w" 'BEGIN { exit !(w + 0 >= 50000000) }' || fail "block: cond_waiter waited only $w ns"
note "block: cond_waiter and the lock waits"

# --- semaphores and joins (block profile) ------------------------------------------
run sem sem CPROF_BLOCK_RATE=1
# sem_waiter's first sem_wait found a token (no wait: not recorded), then
# it waited ten times for a post 10 ms after it said it would wait (all
# ten block, but for a waiter held up longer than that before its call:
# at least one, at most ten); joiner joined a thread that slept 50 ms.
n=$(flat_exact contentions "$T/sem.block.pb.gz" | awk '$1 == "sem_waiter" { print $2 }')
[ "${n:-0}" -ge 1 ] && [ "$n" -le 10 ] || fail "sem: sem_waiter blocked ${n:-0} times, want 1 to 10"
w=$(flat_exact delay "$T/sem.block.pb.gz" | awk '$1 == "sem_waiter" { print $2 }')
awk -v w="$w" 'BEGIN { exit !(w + 0 >= 5000000) }' || fail "sem: sem_waiter waited only $w ns"
j=$(flat_exact delay "$T/sem.block.pb.gz" | awk '$1 == "joiner" { print $2 }')
awk -v j="$j" 'BEGIN { exit !(j + 0 >= 25000000) }' || fail "sem: joiner waited only $j ns"
note "block: sem_wait/sem_timedwait ($n waits, $w ns) and pthread_join ($j ns)"

# --- nothing to record ------------------------------------------------------------
run alone alone CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1
go tool pprof -top -sample_index=contentions "$T/alone.mutex.pb.gz" 2>/dev/null |
  grep -q '^Showing nodes accounting for 0, 0% of 0 total$' || fail "uncontended: something recorded"
run off fight
go tool pprof -top -sample_index=contentions "$T/off.mutex.pb.gz" 2>/dev/null |
  grep -q '^Showing nodes accounting for 0, 0% of 0 total$' || fail "rate 0: something recorded"
note "uncontended, and off by default: nothing"

# --- sampling: one in 5, values scaled by 5 ------------------------------------------
run five fight CPROF_MUTEX_RATE=5
go tool pprof -raw "$T/five.mutex.pb.gz" > "$T/five.raw" 2>&1
awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
     s && /^ *[0-9]+ +[0-9]+:/ { n++; if ($1 % 5) bad = 1 }
     END { exit bad || n == 0 }' "$T/five.raw" || { cat "$T/five.raw"; fail "rate 5: counts not scaled"; }
note "rate 5: scaled"

# --- linked, through the API: the text forms -------------------------------------------
mkdir "$T/api"
"$T/mfl" fight "$T/api" > "$T/api.out" || fail "linked: program failed"
[ "$(cat "$T/api.out")" = "600 600 600 10" ] || fail "linked: program printed $(cat "$T/api.out")"
head -n3 "$T/api/mutex.txt" | tr '\n' '|' | grep -qx -- '--- mutex:|cycles/second=1000000000|sampling period=1|' ||
  { head -n3 "$T/api/mutex.txt"; fail "mutex text: header"; }
head -n2 "$T/api/block.txt" | tr '\n' '|' | grep -qx -- '--- contention:|cycles/second=1000000000|' ||
  { head -n2 "$T/api/block.txt"; fail "block text: header"; }
grep -Eq '^#	0x[0-9a-f]+	fight_timed\+0x[0-9a-f]+	' "$T/api/mutex.txt" || fail "mutex text: frame lines"
for p in mutex block; do
  for idx in contentions delay; do
    pprof_flat_dwarf $idx "$T/api/$p.pb.gz" > "$T/api/$p.$idx.proto"
    pprof_flat_dwarf $idx "$T/api/$p.txt" "$T/mfl" > "$T/api/$p.$idx.text"
    [ -s "$T/api/$p.$idx.proto" ] || fail "linked $p: empty"
    cmp -s "$T/api/$p.$idx.proto" "$T/api/$p.$idx.text" ||
      { diff "$T/api/$p.$idx.proto" "$T/api/$p.$idx.text"; fail "linked $p $idx: text and protobuf differ"; }
  done
done
note "linked: API rates; text forms read as the protobuf"
exit 0
