#!/bin/sh
# timeout: 120
# The interactive shell driven through a pipe: each command's report equals
# the one-shot flags' report with pprof's interactive defaults (compact
# headers; top shows 10 nodes), and settings (sample_index=, focus=, o,
# help, unknown commands) behave as in go tool pprof.
. "$(dirname "$0")/tool_common.inc"
build_go heapgo
(cd "$T" && ./heapgo h.pb.gz 1) || { echo "FAIL: heapgo"; exit 1; }
p=$T/h.pb.gz
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Reports from the shell: prompts are "(cprof) " at the start of each read;
# strip them (and only them) before comparing.
shell() { printf '%s\n' "$@" | "$CPROF" "$p" 2>"$T/shell.err" | sed 's/^\((cprof) \)*//'; }
oneshot() { "$CPROF" -compact_labels "$@" "$p" 2>/dev/null; }

check() { # NAME: compares $T/s with $T/o
  checks=$((checks + 1))
  cmp -s "$T/s" "$T/o" || { fail "$1"; diff "$T/s" "$T/o" | head -10 | sed 's/^/    /'; }
}
shell "top" "quit" >"$T/s"; oneshot -top -nodecount=10 >"$T/o"; check "top"
shell "top5 -cum" >"$T/s"; oneshot -top -nodecount=5 -cum >"$T/o"; check "top5 -cum"
shell "sample_index=alloc_space" "top3" >"$T/s"; oneshot -top -nodecount=3 -sample_index=alloc_space >"$T/o"; check "sample_index="
shell "alloc_objects" "top" >"$T/s"; oneshot -top -nodecount=10 -alloc_objects >"$T/o"; check "sample type shortcut"
shell "focus=Medium" "top" ":" "top" >"$T/s"
{ oneshot -top -nodecount=10 -focus=Medium; oneshot -top -nodecount=10; } >"$T/o"; check "focus= and :"
shell "top Medium -Large" >"$T/s"; oneshot -top -nodecount=10 -focus=Medium -ignore=Large >"$T/o"; check "top focus -ignore"
shell "traces" >"$T/s"; oneshot -traces >"$T/o"; check "traces"
shell "peek alloc" >"$T/s"; oneshot -peek alloc >"$T/o"; check "peek"
shell "tree" >"$T/s"; oneshot -tree >"$T/o"; check "tree"
shell "list allocMedium" >"$T/s"; oneshot -list allocMedium >"$T/o"; check "list"
shell "granularity=lines" "top" >"$T/s"; oneshot -lines -top -nodecount=10 >"$T/o"; check "granularity=lines"
shell "nodecount=2" "top" >"$T/s"; oneshot -top -nodecount=2 >"$T/o"; check "nodecount="
shell "tags" >"$T/s"; oneshot -tags >"$T/o"; check "tags"

# The same through go tool pprof's shell (its prompt is "(pprof) ").
checks=$((checks + 1))
printf 'top\npeek alloc\nsample_index=1\ntop3 -cum\ntraces\nquit\n' | "$CPROF" "$p" 2>/dev/null | sed 's/^\((cprof) \)*//' >"$T/s"
printf 'top\npeek alloc\nsample_index=1\ntop3 -cum\ntraces\nquit\n' | go tool pprof "$p" 2>/dev/null | sed 's/^\((pprof) \)*//' >"$T/o"
cmp -s "$T/s" "$T/o" || { fail "shell session vs go tool pprof"; diff "$T/s" "$T/o" | head -10; }

# Messages (stderr).
shell "o" >/dev/null
grep -q 'sample_index *= inuse_space' "$T/shell.err" || fail "o lists options"
shell "help" >/dev/null
grep -q 'Commands:' "$T/shell.err" || fail "help lists commands"
shell "frobnicate" >/dev/null
grep -q 'unrecognized command: "frobnicate"' "$T/shell.err" || fail "unknown command"
shell "nodecount" >/dev/null
grep -q 'please specify a value, e.g. nodecount=<val>' "$T/shell.err" || fail "value needed"
shell "sample_index=bogus" >/dev/null
grep -q 'sample_index "bogus" must be one of' "$T/shell.err" || fail "bad sample_index"
# web without a browser or a display: the SVG stays in $TMPDIR, named.
(unset BROWSER DISPLAY WAYLAND_DISPLAY; TMPDIR=$T shell "web" >/dev/null)
svgf=$(sed -n 's/.*the report is in \(.*\.svg\)$/\1/p' "$T/shell.err")
[ -n "$svgf" ] && grep -q '<svg' "$svgf" || fail "web without a browser names its SVG file"
grep -q 'Entering interactive mode' "$T/shell.err" || fail "greeting"
finish
