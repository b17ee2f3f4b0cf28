#!/bin/sh
# Bad CPROF_* values never hurt the program: each prints exactly one stderr
# line, `cprof: NAME="value" is not valid: <what it accepts>; <what is
# off>`, the program's stdout and exit status are those of a plain run, and
# what the line says is off is off (and nothing more):
#   rate/unwinder/depth/memory limit -> heap profiling off: a profile with
#     no samples is still written (as with CPROF_RATE=0)
#   a bad file pattern -> no profile file at all
#   a bad snapshot period -> no snapshots, the exit profile as usual
#   a bad seed -> clock-seeded sampling, the exit profile as usual
# An unwritable profile path gives one line naming the path. CPROF_RATE=0
# is quiet and writes a loadable profile with no samples (Go's heap
# profile with MemProfileRate=0 is likewise empty).
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/known" "$PROGS/heapknown.c"
"$T/known" > "$T/plain.out" 2> "$T/plain.err" || fail "plain run failed"
[ -s "$T/plain.err" ] && fail "plain run wrote to stderr"

# samples PROFILE: the number of samples go tool pprof reads (fails if it
# cannot load the profile).
samples() {
  go tool pprof -raw -symbolize=none "$1" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$1: go tool pprof cannot load it"; }
  grep -c -E '^ *-?[0-9]+( +-?[0-9]+){3,6}: ' "$T/raw"
}

# run NAME ASSIGNMENT...: runs known in a fresh directory $T/NAME (cwd), its
# profile there as prof.pb.gz unless an assignment sets CPROF_HEAP_PROFILE.
run() {
  name=$1; shift
  d=$T/$name
  mkdir -p "$d"
  (cd "$d" && env CPROF_HEAP_PROFILE="$d/prof.pb.gz" "$@" LD_PRELOAD="$LIB" "$T/known" > "$d/out" 2> "$d/err")
  rc=$?
  [ $rc = 0 ] || { cat "$d/err"; fail "$name: exit status $rc"; }
  cmp -s "$T/plain.out" "$d/out" || fail "$name: stdout differs from a plain run"
  mv "$d/out" "$d/err" "$T/"
  out=$T/out err=$T/err
}

# bad NAME VALUE EFFECT: one line naming NAME and VALUE, ending in EFFECT.
bad() {
  var=$1 val=$2 effect=$3
  run "bad.$var.$(echo "$val" | tr -c 'a-zA-Z0-9' _)" "$var=$val"
  n=$(wc -l < "$err")
  [ "$n" = 1 ] || { cat "$err"; fail "$var=$val: $n lines on stderr, want 1"; }
  line=$(cat "$err")
  case $line in
    "cprof: $var=\"$val\" is not valid: "*"; $effect") ;;
    *) fail "$var=$val: unexpected message: $line" ;;
  esac
  note "$line"
}

off="heap profiling is off"
for kv in CPROF_RATE=abc CPROF_RATE=-1 CPROF_RATE= CPROF_RATE=12x CPROF_UNWIND=foo CPROF_DEPTH=0 \
          CPROF_DEPTH=999 CPROF_MEMORY_LIMIT=12 CPROF_MEMORY_LIMIT=5X; do
  bad "${kv%%=*}" "${kv#*=}" "$off"
  [ -s "$d/prof.pb.gz" ] || fail "$kv: no profile written"
  [ "$(samples "$d/prof.pb.gz")" = 0 ] || fail "$kv: heap profiling said off, but the profile has samples"
done

# A bad pattern: no profile anywhere (the run's cwd stays empty).
bad CPROF_HEAP_PROFILE 'x%q' "no heap profile is written"
[ -z "$(ls -A "$d")" ] || { ls -A "$d"; fail "CPROF_HEAP_PROFILE=x%q: files written: $(ls -A "$d")"; }

# A bad snapshot period: the exit profile as usual, no snapshots.
for v in 0 -1 abc; do
  bad CPROF_HEAP_PROFILE_EVERY "$v" "no periodic snapshots"
  [ "$(ls -A "$d")" = prof.pb.gz ] || fail "CPROF_HEAP_PROFILE_EVERY=$v: files $(ls -A "$d")"
  [ "$(samples "$d/prof.pb.gz")" -gt 0 ] || fail "CPROF_HEAP_PROFILE_EVERY=$v: no samples"
done

# Seconds are a plain decimal, as strict as the whole numbers: no space,
# sign, exponent, hex or trailing dot (strtod took them all).
for v in ' 5' +5 0x10 1e1 5. inf; do
  bad CPROF_HEAP_PROFILE_EVERY "$v" "no periodic snapshots"
  [ "$(ls -A "$d")" = prof.pb.gz ] || fail "CPROF_HEAP_PROFILE_EVERY=$v: files $(ls -A "$d")"
done

# A bad seed: sampling goes on, seeded from the clock.
bad CPROF_SEED x "sampling is seeded from the clock"
[ "$(samples "$d/prof.pb.gz")" -gt 0 ] || fail "CPROF_SEED=x: no samples"
bad CPROF_SEED 0 "sampling is seeded from the clock"

# Two bad values: one line each.
run two CPROF_RATE=abc CPROF_DEPTH=0
[ "$(wc -l < "$err")" = 2 ] || { cat "$err"; fail "two bad values: want two lines"; }
grep -q '^cprof: CPROF_RATE="abc" is not valid' "$err" && grep -q '^cprof: CPROF_DEPTH="0" is not valid' "$err" ||
  { cat "$err"; fail "two bad values: lines missing"; }

# Unwritable path: one line naming it, program unaffected.
run unwritable CPROF_HEAP_PROFILE=/nonexistent/dir/x.pb.gz
[ "$(wc -l < "$err")" = 1 ] || { cat "$err"; fail "unwritable path: want one line"; }
grep -q '^cprof: .*/nonexistent/dir/x\.pb\.gz' "$err" || { cat "$err"; fail "unwritable path: line does not name it"; }
note "$(cat "$err")"

# A limit the parser takes but the tables do not fit in: one line naming
# the variable, program unaffected.
run smalllimit CPROF_MEMORY_LIMIT=1M
[ "$(wc -l < "$err")" = 1 ] && grep -q 'CPROF_MEMORY_LIMIT' "$err" ||
  { cat "$err"; fail "CPROF_MEMORY_LIMIT=1M: want one line naming the variable"; }
note "$(cat "$err")"

# CPROF_RATE=0: quiet, and a loadable profile without samples.
run rate0 CPROF_RATE=0
[ -s "$err" ] && { cat "$err"; fail "CPROF_RATE=0: stderr not empty"; }
[ -s "$d/prof.pb.gz" ] || fail "CPROF_RATE=0: no profile written"
[ "$(samples "$d/prof.pb.gz")" = 0 ] || fail "CPROF_RATE=0: the profile has samples"

# A program that never calls malloc still gets its profile: at exit
# (preloaded) and through the API as its first action (linked).
cc_prog "$T/noalloc" "$PROGS/noalloc.c"
cc_prog "$T/noalloc_linked" "$PROGS/noalloc.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
env CPROF_HEAP_PROFILE="$T/noalloc.pb.gz" LD_PRELOAD="$LIB" "$T/noalloc" > "$T/out" 2> "$T/err" ||
  fail "noalloc: exit status $?"
[ -s "$T/err" ] && { cat "$T/err"; fail "noalloc: stderr not empty"; }
[ -s "$T/noalloc.pb.gz" ] || fail "noalloc: no profile written"
samples "$T/noalloc.pb.gz" > /dev/null
"$T/noalloc_linked" "$T/noalloc_linked.pb.gz" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "noalloc_linked failed"; }
samples "$T/noalloc_linked.pb.gz" > /dev/null

# Good values are quiet (the limits of each range, suffixes).
run good CPROF_RATE=1 CPROF_UNWIND=fp CPROF_DEPTH=256 CPROF_MEMORY_LIMIT=64M CPROF_SEED=5 \
  CPROF_HEAP_PROFILE_EVERY=1000
[ -s "$err" ] && { cat "$err"; fail "good values: stderr not empty"; }
check_truth "$T/plain.out" "$d/prof.pb.gz"
run good2 CPROF_UNWIND=libunwind CPROF_DEPTH=1 CPROF_MEMORY_LIMIT=1G CPROF_RATE=524288
[ -s "$err" ] && { cat "$err"; fail "good values: stderr not empty"; }
[ "$(samples "$d/prof.pb.gz")" -gt 0 ] || fail "good values: no samples"
exit 0
