#!/bin/sh
# Every report names the profile's file as go tool pprof does, with Go's
# filepath.Base (src/base/path.h), even when the mapping's name ends in
# '/': the text report's "File:" line, the DOT graph's name, the flame
# graph's title and the web UI's profile title all say what pprof's -top
# says. tests/progs/filenames.c is
# profiled at rate 1, then the profile's mapping name is rewritten in place
# (same length) from ".../filenames" to ".../filename/".
# timeout: 120
. "$(dirname "$0")/webui_common.inc"
command -v go >/dev/null 2>&1 || skip "skip: go not installed"

cc_prog "$T/filenames" "$PROGS/filenames.c"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/h.pb.gz" LD_PRELOAD="$LIB" "$T/filenames" > "$T/out" ||
  fail "filenames exited with $?"
[ "$(cat "$T/out")" = "kept 262144 bytes" ] || fail "filenames printed: $(cat "$T/out")"
[ -s "$T/h.pb.gz" ] || fail "no profile written"

python3 - "$T/h.pb.gz" "$T/r.pb.gz" "$T/filenames" <<'PY' || fail "cannot rewrite the mapping name"
import gzip, sys
data = gzip.decompress(open(sys.argv[1], "rb").read())
old = sys.argv[3].encode()
new = old[:-1] + b"/"  # .../filenames -> .../filename/: the length stays
if data.count(old) < 1:
    sys.exit("mapping name not in the profile")
open(sys.argv[2], "wb").write(gzip.compress(data.replace(old, new)))
PY

want=$(go tool pprof -top -symbolize=none "$T/r.pb.gz" 2>/dev/null | sed -n 's/^File: //p')
[ "$want" = "filename" ] || fail "go tool pprof -top says File: '$want', expected 'filename'"

got=$("$CPROF" -top -symbolize=none "$T/r.pb.gz" 2>"$T/err" | sed -n 's/^File: //p')
[ "$got" = "$want" ] || fail "-top: File: '$got', go tool pprof: '$want' ($(cat "$T/err"))"
"$CPROF" -top -symbolize=none "$T/r.pb.gz" 2>/dev/null | grep -q 'keep_blocks' ||
  fail "-top: no keep_blocks"

got=$("$CPROF" -dot -symbolize=none "$T/r.pb.gz" 2>"$T/err" | sed -n '1s/^digraph "\(.*\)" {$/\1/p')
[ "$got" = "$want" ] || fail "-dot: digraph '$got', go tool pprof: '$want' ($(cat "$T/err"))"

"$CPROF" -flame "$T/f.html" -symbolize=none "$T/r.pb.gz" 2>"$T/err" ||
  fail "-flame: $(cat "$T/err")"
got=$(sed -n 's|^<title>\([^ ]*\) .*</title>$|\1|p' "$T/f.html" | head -n1)
[ "$got" = "$want" ] || fail "-flame: title '$got', go tool pprof: '$want'"

# A page without a report (here a 404) titles the profile from its mapping.
start_ui ui -symbolize=none "$T/r.pb.gz"
get /ui/nosuchview
[ "$CODE" = 404 ] || fail "/ui/nosuchview: status $CODE"
grep -q ">$want inuse_space</summary>" "$T/body" ||
  fail "/ui/nosuchview: no '$want inuse_space' title: $(grep -o '<summary[^<]*</summary>' "$T/body")"
note "File: $want in -top, -dot, -flame and the web UI, as go tool pprof -top"
