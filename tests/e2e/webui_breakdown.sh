#!/bin/sh
# The breakdown view (/ui/breakdown) and memory over time by class in a
# real browser (headless chromium through playwright-core, as
# webui_browser.sh), on memory profiles of programs with known parts:
# tests/progs/memory_known.c's profile at CPROF_RATE=1 (touched and untouched
# heap blocks, an mmap from map_known, threads, a file) and the numbered
# memory profiles of a program whose heap grows (CPROF_HEAP_PROFILE_EVERY).
# tests/e2e/webui_breakdown.js checks: the view is in the View menu; each
# class's value is go tool pprof's sum of that class's samples
# (resident_space), and its bar segment's width its share; clicking the
# mmap segment opens the flame graph of that class alone (tagfocus
# class=^mmap( |$): map_known, no heap frame); the memory view with by=class
# charts the classes, the heap growing, and links to its flame graph. No
# console error, no request but to the server. Screenshots in
# build/test-artifacts/webui-breakdown/.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"

need_browser
need_go() { command -v go > /dev/null 2>&1 || skip "skip: go (golang-go) not installed"; }
need_go

ART=$BUILD/test-artifacts/webui-breakdown
rm -rf "$ART"; mkdir -p "$ART"

cc_prog "$T/mk" "$PROGS/memory_known.c" -ldl -lpthread
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/mk" "$T" > "$T/mk.out" 2> "$T/mk.err" || { cat "$T/mk.err"; fail "memory_known failed"; }
grep -q '^EXPECT map_known ' "$T/mk.out" || fail "memory_known: output $(head -3 "$T/mk.out")"
[ -s "$T/mem.pb.gz" ] || fail "memory_known: no profile"
# the oracle: each class's resident_space (the first sample type) per go tool pprof
go tool pprof -raw "$T/mem.pb.gz" 2> /dev/null | awk '
  /^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
  s && /: / { split($0, a, ": "); split(a[1], v, " "); cur = v[1]; next }
  s && match($0, /class:\[[^]]*\]/) { c = substr($0, RSTART + 7, RLENGTH - 8); sum[c] += cur }
  END { printf "{"; n = 0; for (c in sum) printf "%s\"%s\":%d", n++ ? "," : "", c, sum[c]; print "}" }' > "$T/classes.json"
grep -q '"mmap":[1-9]' "$T/classes.json" && grep -q '"heap":[1-9]' "$T/classes.json" ||
  fail "the oracle has no heap or mmap class: $(cat "$T/classes.json")"

cat > "$T/grow.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void *volatile keep[40];
__attribute__((noinline)) void grow(int i) { keep[i] = malloc(1 << 20); memset(keep[i], 1, 1 << 20); }
int main(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  for (int i = 0; i < 40; i++) { grow(i); nanosleep(&ts, NULL); }
  puts("done");
  return 0;
}
C
cc_prog "$T/grow" "$T/grow.c"
mkdir "$T/snap"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/snap/heap.pb.gz" CPROF_MEMORY_PROFILE="$T/snap/mem.pb.gz" \
  CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/grow" > "$T/grow.out" || fail "grow failed"
[ "$(cat "$T/grow.out")" = done ] || fail "grow: output $(cat "$T/grow.out")"
[ "$(ls "$T/snap" | grep -c '^mem\.[0-9]*\.pb\.gz$')" -ge 3 ] || fail "fewer than 3 memory snapshots"

start_ui one "$T/mem.pb.gz"
ONE=$UI
# shellcheck disable=SC2046
start_ui series $(ls "$T"/snap/mem.[0-9]*.pb.gz)
SERIES=$UI

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_breakdown.js" "$ONE" "$SERIES" "$ART" "$(cat "$T/classes.json")" ||
  fail "browser checks (screenshots in $ART)"
