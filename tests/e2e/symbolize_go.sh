#!/bin/sh
# Go's legacy text heap profile (?debug=1) holds bare addresses; with the
# binary it symbolizes. A binary linked with -s -w has neither DWARF nor
# symbols, only .gopclntab, which cprof reads as go tool pprof does; an
# unstripped one cprof reads from DWARF (go tool pprof still from
# .gopclntab). Either way every report must be byte-for-byte go tool
# pprof's (Go's runtime already wrote inlined calls as frames of their own).
# Without the binary both tools print the same warning and one <unknown> node.
# timeout: 180
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || skip "no $CPROF (run make)"
command -v go >/dev/null 2>&1 || skip "go (golang-go) not installed"
go tool pprof -h >/dev/null 2>&1 || skip "go tool pprof not usable"
export HOME="$T/home" TZ=UTC; mkdir -p "$HOME"
export GOCACHE="$BUILD/go-cache" GOFLAGS=
unset PPROF_BINARY_PATH DEBUGINFOD_URLS

(cd "$PROGS/symgo" && go build -trimpath -ldflags="-s -w" -o "$T/symgo" . &&
  go build -trimpath -o "$T/symgo_dwarf" .) || fail "building tests/progs/symgo"
(cd "$T" && ./symgo h.txt 1 && ./symgo_dwarf d.txt 1) || fail "running symgo"

fails=0
compare() { # PROFILE FLAGS...: stdout and stderr of both tools must be identical
  prof=$1; shift
  "$CPROF" "$@" "$prof" > "$T/c.out" 2> "$T/c.err"
  go tool pprof "$@" "$prof" > "$T/g.out" 2> "$T/g.err"
  if ! cmp -s "$T/c.out" "$T/g.out" || ! cmp -s "$T/c.err" "$T/g.err"; then
    echo "DIFF: $* $prof"; diff "$T/c.out" "$T/g.out" | head -20; diff "$T/c.err" "$T/g.err" | head -5
    fails=$((fails + 1))
  fi
}
for f in "-top" "-top -lines" "-top -cum" "-traces" "-traces -lines" "-raw" "-tree" \
         "-peek main\." "-top -sample_index=alloc_space" "-top -alloc_objects" \
         "-top -addresses" "-top -files" "-top -nodefraction=0"; do
  # shellcheck disable=SC2086
  compare "$T/h.txt" $f "$T/symgo"
  # shellcheck disable=SC2086
  compare "$T/d.txt" $f "$T/symgo_dwarf"
done
compare "$T/h.txt" -top
[ "$fails" -eq 0 ] || fail "$fails reports differ from go tool pprof"
"$CPROF" -top "$T/symgo" "$T/h.txt" 2>/dev/null | grep -q ' main\.allocBig$' ||
  fail "main.allocBig not named from .gopclntab"
"$CPROF" -top "$T/symgo_dwarf" "$T/d.txt" 2>/dev/null | grep -q ' main\.allocViaInline$' ||
  fail "main.allocViaInline not named from DWARF"
exit 0
