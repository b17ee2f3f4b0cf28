#!/bin/sh
# timeout: 300
# Legacy profile formats, read by the format library and by go tool pprof
# 1.19 from the same files, must give the same profile (build/profdump
# prints what "go tool pprof -raw" prints; compared byte for byte):
#  - Go's ?debug=1 text of heap (at rate 1 and 512 KiB: unbiasing with the
#    "@ heap/2R" rate), allocs, goroutine, mutex and block (contention);
#    threadcreate's "N @" line with no stack is refused by both;
#  - gperftools' tcmalloc HEAPPROFILE text (@ heapprofile, MAPPED_LIBRARIES)
#    of a C program, and libprofiler's binary CPUPROFILE.
: "${CPROF_TOP:?}" "${CPROF_BUILD:?}"
D=$CPROF_BUILD/profdump
[ -x "$D" ] || { echo "no $D (run make tests)"; exit 1; }
command -v go >/dev/null 2>&1 || { echo "skip: go (golang-go) not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cprof-legacy.XXXXXX")
trap 'rm -rf "$T"' EXIT
export GOCACHE="$CPROF_BUILD/go-cache" GO111MODULE=off GOFLAGS= TZ=UTC
export HOME="$T/home" PPROF_BINARY_PATH="$T/none"; mkdir -p "$HOME"
fails=0 checks=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

same_as_go() {
  checks=$((checks + 1))
  "$D" "$@" >"$T/ours" 2>"$T/ours.err" || { fail "profdump $*: $(cat "$T/ours.err")"; return; }
  go tool pprof -raw -symbolize=none "$@" >"$T/go" 2>"$T/go.err" ||
    { fail "go tool pprof -raw $*: $(tail -n1 "$T/go.err")"; return; }
  cmp -s "$T/ours" "$T/go" || { fail "profdump $* differs from go tool pprof -raw:"; diff "$T/ours" "$T/go" | head -20; }
}

# --- Go's text profiles -----------------------------------------------------
(cd "$CPROF_TOP/tests/progs/profio_go" && go build -trimpath -o "$T/profio_go" .) ||
  { echo "FAIL: building tests/progs/profio_go"; exit 1; }
for rate in 1 524288; do
  mkdir -p "$T/r$rate"
  (cd "$T" && ./profio_go "$T/r$rate" $rate) || { echo "FAIL: running profio_go $rate"; exit 1; }
  for p in heap allocs goroutine mutex block; do
    same_as_go "$T/r$rate/$p.txt"
  done
  checks=$((checks + 1))
  if "$D" "$T/r$rate/threadcreate.txt" >/dev/null 2>&1; then
    fail "threadcreate.txt (a record without stack) should be refused, as go tool pprof does"
  fi
done
# The text and the protobuf of one heap hold the same numbers at rate 1.
checks=$((checks + 1))
t=$("$D" "$T/r1/heap.txt" | awk '/^Samples:/{s=1;next} /^Locations/{s=0} s && /:/{a+=$1;b+=$2;c+=$3;d+=$4} END{print a,b,c,d}')
p=$("$D" "$T/r1/heap.pb.gz" | awk '/^Samples:/{s=1;next} /^Locations/{s=0} s && /:/{a+=$1;b+=$2;c+=$3;d+=$4} END{print a,b,c,d}')
[ "$t" = "$p" ] || fail "rate 1 heap totals: text $t vs protobuf $p"

# --- gperftools -------------------------------------------------------------
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
PR=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
if [ -e "$TC" ] && [ -e "$PR" ] && command -v cc >/dev/null; then
  cc -g -O1 -fno-omit-frame-pointer -o "$T/profio_c" "$CPROF_TOP/tests/progs/profio_c.c" ||
    { echo "FAIL: building profio_c"; exit 1; }
  (cd "$T" && LD_PRELOAD=$TC HEAPPROFILE=$T/hp ./profio_c >/dev/null 2>&1)
  h=$(ls "$T"/hp.*.heap 2>/dev/null | tail -n1)
  if [ -z "$h" ]; then
    fail "tcmalloc wrote no heap profile"
  else
    same_as_go "$h"
    # The numbers the program allocated: 8 x 1 MiB kept, 32 x 64 KiB kept
    # (of 64), 10000 x 128 B freed, 200 x 4 KiB kept; period 1, no scaling.
    checks=$((checks + 1))
    "$D" "$h" >"$T/h.raw"
    for want in "  8    8388608          8    8388608:" "  64    4194304         32    2097152:" \
                "  10000    1280000          0          0:" "  200     819200        200     819200:"; do
      grep -q -- "$want" "$T/h.raw" || fail "heap profile lacks \"$want\""
    done
    grep -q '^Period: 1$' "$T/h.raw" || fail "heapprofile period is not 1"
  fi
  (cd "$T" && LD_PRELOAD=$PR CPUPROFILE=$T/cpu.prof ./profio_c 0.4 >/dev/null 2>&1)
  if [ -s "$T/cpu.prof" ]; then
    same_as_go "$T/cpu.prof"
  else
    fail "libprofiler wrote no CPU profile"
  fi
else
  echo "note: google-perftools not installed, gperftools formats not checked"
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
