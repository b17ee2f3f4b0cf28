#!/bin/sh
# The memory view's time windows (webwindow.h) in a real browser: the
# two-phase program (tests/progs/record_phases.c: A allocates and frees
# 100 x 1 MiB in phase_a_alloc, B leaks 10 MiB a step in phase_b_leak,
# each boundary logged with its unix time) runs at CPROF_RATE=1 with
# CPROF_RECORD and serves /debug/pprof/; cprof -http -poll 1 charts its
# heap, and only then the phases start. tests/e2e/webui_window.js drags
# over the chart where phase A ran (alloc_space): the flame graph has
# phase_a_alloc with exactly 100 MiB and no phase_b_leak; over step 2
# (inuse_space): phase_b_leak with exactly 10 MiB, no phase_a_alloc (the
# whole heap would show 30 MiB, and alloc_space both functions). Without
# the recorder, and from files, the pages say so in one line. The
# program's output and exit status are its own.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"

need_browser
[ -f "$BUILD/libcprof-http.so" ] || skip "skip: no libcprof-http.so"
ART=$BUILD/test-artifacts/webui-window
rm -rf "$ART"; mkdir -p "$ART"
cc_prog "$T/prog" "$PROGS/record_phases.c"

# run NAME VARS...: the program (3 steps, waiting for DIR/go) serving
# /debug/pprof/ with VARS; sets D, PID, URL.
run() {
  name=$1; shift
  D="$T/$name"; mkdir -p "$D"
  env CPROF_RATE=1 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$D/addr" "$@" \
    LD_PRELOAD="$LIB" "$T/prog" "$D" 3 wait > "$D/out" 2> "$D/err" &
  PID=$!; UI_PIDS="$UI_PIDS $PID"
  wait_for -s "$D/addr" 60 "$name: the program serves no /debug/pprof/ (stderr in $D/err)"
  URL="http://$(cat "$D/addr")"
}
# finish NAME: lets the program end; checks its output and status.
finish() {
  touch "$D/stop"
  wait "$PID" || fail "$1: the program exited $?"
  [ "$(cat "$D/out")" = "record_phases done" ] || fail "$1: output: $(cat "$D/out")"
}
# series_after TIME: waits until the memory view charts a profile taken
# after TIME (unix seconds).
series_after() {
  i=0
  while :; do
    get "/ui/memory"
    t1=$(sed -n 's/.*<svg id="chart"[^>]* data-t1="\([0-9]*\)".*/\1/p' "$T/body")
    [ -n "$t1" ] && awk -v a="$t1" -v b="$1" 'BEGIN { exit !(a / 1e9 > b) }' && break
    i=$((i + 1))
    [ $i -gt 120 ] && fail "the memory view has no profile after $1 (last: ${t1:-none})"
    sleep 0.5
  done
}

run rec CPROF_RECORD=10m
start_ui rec -poll 1 "$URL/debug/pprof/heap"
series_after "$(date +%s.%N)" # two profiles at least, the first before the phases
touch "$D/go"
wait_for -e "$D/done" 120 "the program never finished its phases"
series_after "$(awk '$1 == "STEP_END" && $2 == 3 { print $3 }' "$D/truth")"
expect "/ui/memory" 200 'id="window-hint" data-window="on"'

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_window.js" "$UI" "$ART" "$D/truth" ||
  fail "browser checks (screenshots in $ART)"
# the window's flame graph came from the process, through the tool
grep -q "Fetching profile over HTTP from $URL/debug/pprof/heap?window=" "$T/rec.err" ||
  fail "no window fetched: $(cat "$T/rec.err")"
stop_ui "$UI_PID"
finish rec

# Without CPROF_RECORD: one line that says so
run norec
touch "$D/go"
start_ui norec -poll 1 "$URL/debug/pprof/heap"
expect "/ui/flamegraph?window=1764190000,1764190001" 200 'no flight recorder: set CPROF_RECORD'
[ "$(html_part "$T/body" errors | wc -l)" = 1 ] || fail "no recorder: not one line: $(html_part "$T/body" errors)"
grep -q 'id="flame"' "$T/body" && fail "no recorder: a flame graph is shown anyway"
expect "/ui/flamegraph?window=1;rm" 400 'invalid window'
stop_ui "$UI_PID"
wait_for -e "$D/done" 120 "norec: the program never finished its phases"
curl -s -o "$T/heap.pb.gz" "$URL/debug/pprof/heap" || fail "no heap profile"
finish norec

# From files: the memory view and a window URL say there are no windows
start_ui files "$T/heap.pb.gz" "$T/heap.pb.gz"
expect "/ui/memory" 200 'id="window-hint" data-window="off"'
expect "/ui/flamegraph?window=1764190000,1764190001" 200 'these profiles come from files'
[ "$(html_part "$T/body" errors | wc -l)" = 1 ] || fail "files: not one line"
stop_ui "$UI_PID"
exit 0
