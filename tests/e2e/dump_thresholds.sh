#!/bin/sh
# CPROF_DUMP_INUSE and CPROF_DUMP_RSS: a program whose heap (resident set)
# grows in three steps of the threshold's size, waiting after each for its
# dump, gets exactly three dumps. The k-th is asked for when the exact live
# bytes (usable sizes, as the peak profile's; exact at rate 1) reach k*STEP,
# which its announcement gives, in [k*STEP, (k+1)*STEP); its profile is
# taken within the k-th step: grow_step holds all of the first k-1 steps
# and at most the k-th, the total in use is below (k+1)*STEP. (Where the
# crossing falls inside the step depends on what was live before the first:
# little in the plain build, where the dump sees the whole step; more under
# UBSan.) The resident set's dumps likewise, from their announcements. The
# program's output and exit code are its own.
# timeout: 240
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/steps" "$PROGS/dump_steps.c"
STEP=4194304
mkdir "$T/plain"
"$T/steps" inuse "$T/plain" 0 $STEP > "$T/plain.out" || fail "program failed without cprof"

# in_step K VALUE STEP: VALUE in [K*STEP, (K+1)*STEP).
in_step() { [ "$2" -ge $(($1 * $3)) ] && [ "$2" -lt $((($1 + 1) * $3)) ]; }

# --- the live heap ------------------------------------------------------------------------
mkdir "$T/i"
CPROF_RATE=1 CPROF_DUMP_INUSE=4M CPROF_HEAP_PROFILE="$T/i/heap.pb.gz" LD_PRELOAD="$LIB" \
  "$T/steps" inuse "$T/i" 3 $STEP > "$T/i.out" 2> "$T/i.err" || fail "program failed: $(cat "$T/i.err")"
grep -q '^steps 3$' "$T/i.out" || fail "program output: $(cat "$T/i.out")"
files=$(ls "$T/i" | grep '^heap\.[0-9]*\.pb\.gz$' | sort -t. -k2 -n)
[ "$(echo "$files" | wc -w)" = 3 ] || fail "live heap: not three dumps: $(ls "$T/i"); $(cat "$T/i.err")"
[ "$(grep -c '^cprof: dump [0-9]* (live heap [0-9]* bytes)' "$T/i.err")" = 3 ] ||
  fail "live heap: not three announcements: $(cat "$T/i.err")"
k=1
for f in $files; do
  inuse=$(raw_totals "$T/i/$f" | awk '{print $4}')
  grow=$(pprof_flat inuse_space "$T/i/$f" | awk '$1=="grow_step" {print $2}')
  said=$(grep '^cprof: dump' "$T/i.err" | sed -n "${k}s/.*live heap \([0-9]*\) bytes.*/\1/p")
  note "live heap dump $k ($f): inuse $inuse, grow_step $grow, announced $said"
  in_step $k "$said" $STEP || fail "dump $k: announced $said outside step $k"
  [ "$inuse" -lt $(((k + 1) * STEP)) ] || fail "dump $k: inuse $inuse past step $k"
  # grow_step holds whole blocks: steps of ceil(STEP / 65528) blocks.
  stepb=$((((STEP + 65527) / 65528) * 65528))
  [ "${grow:-0}" -gt $(((k - 1) * stepb)) ] && [ "${grow:-0}" -le $((k * stepb)) ] ||
    fail "dump $k: grow_step ${grow:-0} not within step $k ($(((k - 1) * stepb)), $((k * stepb))]"
  k=$((k + 1))
done

# --- the resident set ---------------------------------------------------------------------
RSTEP=16777216
mkdir "$T/r"
CPROF_DUMP_RSS=16M CPROF_HEAP_PROFILE="$T/r/heap.pb.gz" LD_PRELOAD="$LIB" \
  "$T/steps" rss "$T/r" 3 $RSTEP > "$T/r.out" 2> "$T/r.err" || fail "program failed: $(cat "$T/r.err")"
grep -q '^steps 3$' "$T/r.out" || fail "program output: $(cat "$T/r.out")"
r0=$(awk '$1=="rss" && $2==0 {print $3}' "$T/r.out")
# The counts hold when the program starts below the first step; it does by
# far (about 3 MiB), but a libc that maps more would make it one more.
[ "$r0" -lt $RSTEP ] || skip "the program starts with $r0 bytes resident, above the 16 MiB step"
n=$(ls "$T/r" | grep -c '^heap\.[0-9]*\.pb\.gz$')
[ "$n" = 3 ] || fail "resident set: $n dumps, not three: $(ls "$T/r"); $(cat "$T/r.err")"
k=1
for said in $(sed -n 's/^cprof: dump [0-9]* (resident \([0-9]*\) bytes).*/\1/p' "$T/r.err"); do
  note "resident dump $k: announced $said; the program's steps: $(awk '$1=="rss" {printf "%s ", $3}' "$T/r.out")"
  in_step $k "$said" $RSTEP || fail "resident dump $k: $said outside step $k"
  k=$((k + 1))
done
[ $k = 4 ] || fail "resident set: $((k - 1)) announcements: $(cat "$T/r.err")"
exit 0
