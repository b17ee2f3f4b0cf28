#!/bin/sh
# timeout: 300
# The format library on real Go profiles and generated ones:
#  1. decode -> encode -> decode is the identity (field by field, and the
#     re-encoded bytes are equal) for every profile Go's runtime writes
#     (heap at rate 1 and 512 KiB, allocs, goroutine, threadcreate, mutex,
#     block, cpu) and for random profiles of tests/gen/profgen;
#  2. our reading of each file is what go tool pprof reads: build/profdump
#     prints exactly what "go tool pprof -raw" prints (Go's
#     Profile.String() after its Merge/compaction), compared byte for byte.
: "${CPROF_TOP:?}" "${CPROF_BUILD:?}"
D=$CPROF_BUILD/profdump G=$CPROF_BUILD/profgen
[ -x "$D" ] && [ -x "$G" ] || { echo "no $D or $G (run make tests)"; exit 1; }
command -v go >/dev/null 2>&1 || { echo "skip: go (golang-go) not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cprof-profio.XXXXXX")
trap 'rm -rf "$T"' EXIT
export GOCACHE="$CPROF_BUILD/go-cache" GO111MODULE=off GOFLAGS= TZ=UTC
export HOME="$T/home" PPROF_BINARY_PATH="$T/none"; mkdir -p "$HOME"
fails=0 checks=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# same_as_go FILE...: profdump FILE... and go tool pprof -raw FILE... agree.
same_as_go() {
  checks=$((checks + 1))
  "$D" "$@" >"$T/ours" 2>"$T/ours.err" || { fail "profdump $*: $(cat "$T/ours.err")"; return; }
  go tool pprof -raw -symbolize=none "$@" >"$T/go" 2>"$T/go.err" ||
    { fail "go tool pprof -raw $*: $(tail -n1 "$T/go.err")"; return; }
  cmp -s "$T/ours" "$T/go" || { fail "profdump $* differs from go tool pprof -raw:"; diff "$T/ours" "$T/go" | head -20; }
}

(cd "$CPROF_TOP/tests/progs/profio_go" && go build -trimpath -o "$T/profio_go" .) ||
  { echo "FAIL: building tests/progs/profio_go"; exit 1; }
for rate in 1 524288; do
  mkdir -p "$T/r$rate"
  (cd "$T" && ./profio_go "$T/r$rate" $rate) || { echo "FAIL: running profio_go $rate"; exit 1; }
done

for f in "$T"/r*/*.pb.gz; do
  checks=$((checks + 1))
  "$D" -roundtrip "$f" >/dev/null || fail "round trip of Go's $(basename "$f")"
  same_as_go "$f"
done

# Generated profiles: sizes, sparse ids, no mappings, many labels, inline
# frames, zero samples, 1..5 sample types.
i=0
for opts in "-seed 1" "-seed 2 -sparse" "-seed 3 -mappings 0" "-seed 4 -labels 4 -inline 60" \
            "-seed 5 -zeros -types 3" "-seed 6 -types 1 -mappings 5" \
            "-seed 7 -samples 3000 -locations 2000 -functions 700 -depth 3-40" \
            "-seed 8 -sparse -zeros -types 5 -labels 3" "-seed 9 -samples 0" \
            "-seed 10 -functions 0 -mappings 1"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$G" $opts -o "$T/g$i.pb.gz" || { fail "profgen $opts"; continue; }
  checks=$((checks + 1))
  "$D" -roundtrip "$T/g$i.pb.gz" >/dev/null || fail "round trip of profgen $opts"
  same_as_go "$T/g$i.pb.gz"
done
# Uncompressed protobuf is read too.
"$G" -seed 11 -raw -o "$T/raw.pb" && same_as_go "$T/raw.pb"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
