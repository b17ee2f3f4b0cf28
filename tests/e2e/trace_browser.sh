#!/bin/sh
# go tool trace's timeline of a cprof trace in a real browser: Debian's
# chromium, headless, driven by playwright-core (as webui_browser.sh does)
# through tests/e2e/trace_browser.js: the trace of tests/progs/trace_prog.c
# (CPROF_TRACE) loads in the trace viewer without an exception, shows a row
# per thread's processor, the workers' goroutines and the heap counter. A
# screenshot is left in build/test-artifacts/trace/.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"
. "$(dirname "$0")/trace_common.inc"
need_browser
ART=$BUILD/test-artifacts/trace
rm -rf "$ART"; mkdir -p "$ART"

cc_prog "$T/tp" "$PROGS/trace_prog.c" -ldl
CPROF_TRACE="$T/run.trace" LD_PRELOAD="$LIB" "$T/tp" work 0.5 > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "program failed"; }
trace_parse "$T/run.trace"
PIDS=""
trace_serve "$T/run.trace"
UI_PIDS="$UI_PIDS $PIDS"
CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/trace_browser.js" "$TRACE_URL" "$ART" || fail "browser checks (screenshot in $ART)"
