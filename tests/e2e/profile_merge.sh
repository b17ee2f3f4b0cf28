#!/bin/sh
# timeout: 300
# Merging, -base and -diff_base as go tool pprof does them: for the same
# inputs, build/profdump (profile_merge / profile_apply_base) prints exactly
# what "go tool pprof -raw" prints, and the merged profile it writes
# (-proto) reads back in go tool pprof as go's own -proto output does.
# Inputs: two runs of a Go program (different heaps, same binary), Go text
# and protobuf forms mixed, and generated profiles with shared names.
: "${CPROF_TOP:?}" "${CPROF_BUILD:?}"
D=$CPROF_BUILD/profdump G=$CPROF_BUILD/profgen
[ -x "$D" ] && [ -x "$G" ] || { echo "no $D or $G (run make tests)"; exit 1; }
command -v go >/dev/null 2>&1 || { echo "skip: go (golang-go) not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cprof-merge.XXXXXX")
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

# same_proto_as_go ARGS...: our merged protobuf and go's -proto output read
# back identically (in go tool pprof, and in profdump).
same_proto_as_go() {
  checks=$((checks + 1))
  "$D" -proto "$T/ours.pb.gz" "$@" 2>"$T/ours.err" || { fail "profdump -proto $*: $(cat "$T/ours.err")"; return; }
  go tool pprof -proto -symbolize=none "$@" >"$T/go.pb.gz" 2>"$T/go.err" ||
    { fail "go tool pprof -proto $*: $(tail -n1 "$T/go.err")"; return; }
  go tool pprof -raw -symbolize=none "$T/ours.pb.gz" >"$T/p.ours" 2>/dev/null
  go tool pprof -raw -symbolize=none "$T/go.pb.gz" >"$T/p.go" 2>/dev/null
  cmp -s "$T/p.ours" "$T/p.go" ||
    { fail "-proto $*: our output differs from go's:"; diff "$T/p.ours" "$T/p.go" | head -20; }
  "$D" "$T/go.pb.gz" >"$T/p.read" 2>&1
  cmp -s "$T/p.read" "$T/p.go" ||
    { fail "-proto $*: we read go's output differently:"; diff "$T/p.read" "$T/p.go" | head -20; }
}

# must_fail_like_go WANT GOWANT ARGS...: both refuse, ours saying WANT, go
# GOWANT (go tool pprof's driver words some of these checks differently).
must_fail_like_go() {
  want=$1 gowant=$2; shift 2
  checks=$((checks + 1))
  if "$D" "$@" >/dev/null 2>"$T/ours.err"; then fail "profdump $* should fail"; return; fi
  grep -q -- "$want" "$T/ours.err" || fail "profdump $*: \"$(cat "$T/ours.err")\" lacks \"$want\""
  if go tool pprof -raw -symbolize=none "$@" >/dev/null 2>"$T/go.err"; then
    fail "go tool pprof $* unexpectedly succeeded"
  fi
  grep -q -- "$gowant" "$T/go.err" || fail "go tool pprof $*: \"$(tail -n1 "$T/go.err")\" lacks \"$gowant\""
}

(cd "$CPROF_TOP/tests/progs/profio_go" && go build -trimpath -o "$T/profio_go" .) ||
  { echo "FAIL: building tests/progs/profio_go"; exit 1; }
for run in a b; do
  mkdir -p "$T/$run"
  (cd "$T" && ./profio_go "$T/$run" 524288) || { echo "FAIL: running profio_go"; exit 1; }
done
A=$T/a B=$T/b
same_as_go "$A/heap.pb.gz" "$B/heap.pb.gz"
same_as_go "$A/heap.pb.gz" "$A/heap.pb.gz" "$B/heap.pb.gz"
same_as_go "$A/heap.txt" "$B/heap.pb.gz"
same_as_go -base "$A/heap.pb.gz" "$B/heap.pb.gz"
same_as_go -base "$A/heap.pb.gz" "$A/heap.pb.gz"
same_as_go -diff_base "$A/heap.pb.gz" "$B/heap.pb.gz"
same_as_go -base "$A/heap.txt" "$B/heap.txt"
same_as_go -base "$A/allocs.pb.gz" "$B/heap.pb.gz"  # base's default_sample_type wins
same_as_go "$A/goroutine.pb.gz" "$B/goroutine.txt"
same_as_go -diff_base "$A/mutex.pb.gz" "$B/mutex.txt"
same_as_go -normalize -base "$A/block.pb.gz" "$B/block.pb.gz"
same_proto_as_go "$A/heap.pb.gz" "$B/heap.pb.gz"
same_proto_as_go -diff_base "$A/heap.pb.gz" "$B/heap.txt"
must_fail_like_go "incompatible period types" "period type: incompatible types" "$A/heap.pb.gz" "$A/cpu.pb.gz"
must_fail_like_go "incompatible period types" "period type: incompatible types" -base "$A/goroutine.pb.gz" "$A/heap.pb.gz"

# Generated profiles: same seed family shares names, so stacks, locations
# and functions overlap; sparse ids and no-mapping profiles included.
"$G" -seed 21 -o "$T/g1.pb.gz" && "$G" -seed 21 -samples 120 -o "$T/g2.pb.gz" &&
"$G" -seed 22 -sparse -zeros -o "$T/g3.pb.gz" && "$G" -seed 23 -mappings 0 -o "$T/g4.pb.gz" &&
"$G" -seed 23 -mappings 0 -labels 4 -samples 80 -o "$T/g5.pb.gz" &&
"$G" -seed 24 -types 2 -o "$T/g6.pb.gz" || { echo "FAIL: profgen"; exit 1; }
same_as_go "$T/g1.pb.gz" "$T/g2.pb.gz" "$T/g3.pb.gz"
same_as_go "$T/g4.pb.gz" "$T/g5.pb.gz"
same_as_go -base "$T/g1.pb.gz" "$T/g2.pb.gz"
same_as_go -diff_base "$T/g2.pb.gz" "$T/g1.pb.gz" "$T/g3.pb.gz"
same_as_go -normalize -base "$T/g3.pb.gz" "$T/g1.pb.gz"
same_proto_as_go "$T/g1.pb.gz" "$T/g2.pb.gz" "$T/g3.pb.gz"
same_proto_as_go -base "$T/g4.pb.gz" "$T/g5.pb.gz"
must_fail_like_go "incompatible sample types" "inconsistent samples type count" "$T/g1.pb.gz" "$T/g6.pb.gz"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
