#!/bin/sh
# timeout: 180
# `cprof -proto -output F` round trips: go tool pprof loads F and prints the
# same -raw as for the original (Go heap and CPU profiles, random profgen
# profiles with labels, inline frames, several mappings and sparse ids),
# and cprof -raw F agrees with go tool pprof -raw F. For an address-only C
# profile written by libcprof.so, F comes out symbolized: with the binary
# gone, go tool pprof -raw F equals cprof -raw of the original (symbolized
# from the binary while it was there), and go tool pprof -top F names the
# functions.
. "$(dirname "$0")/tool_common.inc"
GEN=$CPROF_BUILD/profgen
LIB=$CPROF_BUILD/libcprof.so

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# same NAME A B: files A and B are identical
same() {
  checks=$((checks + 1))
  cmp -s "$2" "$3" || { fail "$1"; diff "$2" "$3" | head -20 | sed 's/^/    /'; }
}
# roundtrip NAME PROFILE: -proto of cprof, then -raw through both tools.
roundtrip() {
  name=$1; prof=$2
  "$CPROF" -proto -output "$T/$name.rt.pb.gz" "$prof" 2>"$T/$name.err" ||
    { fail "$name: cprof -proto: $(cat "$T/$name.err")"; return; }
  go tool pprof -raw "$prof" >"$T/$name.g0" 2>/dev/null || { fail "$name: go tool pprof -raw original"; return; }
  go tool pprof -raw "$T/$name.rt.pb.gz" >"$T/$name.g1" 2>"$T/$name.gerr" ||
    { fail "$name: go tool pprof cannot load -proto output: $(head -3 "$T/$name.gerr")"; return; }
  "$CPROF" -raw "$T/$name.rt.pb.gz" >"$T/$name.c1" 2>/dev/null
  same "$name: go tool pprof -raw differs between the original and cprof's -proto" "$T/$name.g0" "$T/$name.g1"
  same "$name: cprof -raw and go tool pprof -raw of cprof's -proto differ" "$T/$name.g1" "$T/$name.c1"
}

build_go heapgo
(cd "$T" && ./heapgo h.pb.gz 1) || { echo "FAIL: heapgo"; exit 1; }
roundtrip goheap "$T/h.pb.gz"
build_go cpugo
(cd "$T" && ./cpugo c.pb.gz 300) || { echo "FAIL: cpugo"; exit 1; }
roundtrip gocpu "$T/c.pb.gz"
if [ -x "$GEN" ]; then
  for seed in 1 4; do
    extra=""; [ $seed = 4 ] && extra="-sparse"
    # shellcheck disable=SC2086
    "$GEN" -seed $seed -samples 300 -locations 200 -functions 80 -labels 3 -inline 30 $extra \
      -o "$T/gen$seed.pb.gz" || { echo "FAIL: profgen"; exit 1; }
    roundtrip "gen$seed" "$T/gen$seed.pb.gz"
  done
fi

# --- an address-only C profile: -proto writes it symbolized ---------------------
if [ -f "$LIB" ] && command -v gcc >/dev/null 2>&1; then
  mkdir -p "$T/c"
  gcc -g -O1 -o "$T/c/prog" "$CPROF_TOP/tests/progs/record_prog.c" || { echo "FAIL: build record_prog"; exit 1; }
  CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/addr.pb.gz" LD_PRELOAD="$LIB" "$T/c/prog" >/dev/null ||
    { echo "FAIL: record_prog"; exit 1; }
  "$CPROF" -raw "$T/addr.pb.gz" >"$T/addr.c0" 2>/dev/null
  "$CPROF" -proto -output "$T/addr.rt.pb.gz" "$T/addr.pb.gz" 2>/dev/null || fail "C: cprof -proto"
  rm -f "$T/c/prog"   # from here on only F's own functions can name anything
  go tool pprof -raw "$T/addr.rt.pb.gz" >"$T/addr.g1" 2>"$T/addr.gerr" || fail "C: go tool pprof -raw F"
  same "C: go tool pprof -raw F (binary gone) differs from cprof -raw of the original" "$T/addr.c0" "$T/addr.g1"
  go tool pprof -top -nodefraction=0 "$T/addr.rt.pb.gz" >"$T/addr.top" 2>&1
  for fn in keep_a keep_b main; do
    checks=$((checks + 1))
    grep -Eq " $fn\$" "$T/addr.top" || { fail "C: go tool pprof -top F does not name $fn"; cat "$T/addr.top"; }
  done
  checks=$((checks + 1))
  grep -q '\[prog\]' "$T/addr.top" && fail "C: F left frames of the program unsymbolized"
  grep -q 'Local symbolization failed' "$T/addr.gerr" && fail "C: go tool pprof still needed the binary"
fi
finish
