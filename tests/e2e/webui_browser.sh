#!/bin/sh
# The web UI in a real browser: Debian's chromium, headless, driven by
# playwright-core (installed here from npm into build/node/, once) through
# tests/e2e/webui_browser.js, against cprof -http on heapknown's profile and
# on the snapshots of a leaking program. Every view loads without a console
# error and contacts nothing but the server; the top view lists use_large
# first and sorts; the sample type menu changes the numbers; the search box
# selects and focuses; double-click focuses; clicking graph nodes and
# Refine > Focus/Ignore reduce the graph; the wheel zooms it; clicking a
# flame graph frame zooms; bad parameters show their message; the memory
# view names the leak and links to its stacks. Screenshots are left in
# build/test-artifacts/webui/ (docs-*.png: examples/leak.c's profile, for
# docs/images/).
# timeout: 300
. "$(dirname "$0")/webui_common.inc"

need_browser

ART=$BUILD/test-artifacts/webui
rm -rf "$ART"; mkdir -p "$ART"

cp "$LIB" "$T/libcprof.so" && LIB=$T/libcprof.so
cc_prog "$T/known" "$PROGS/heapknown.c"
(cd "$T" && CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/known.pb.gz" LD_PRELOAD="$LIB" ./known > /dev/null) ||
  fail "heapknown failed"
cat > "$T/leak.c" <<'C'
#include <stdlib.h>
#include <time.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
static void *keep[100000];
static int nk;
__attribute__((noinline)) void leaky_cache_insert(void) { for (int i = 0; i < 50; i++) keep[nk++] = E(malloc(4096)); }
__attribute__((noinline)) void steady_buffer(void) { static void *b[20]; for (int i = 0; i < 20; i++) { free(b[i]); b[i] = E(malloc(8192)); } }
__attribute__((noinline)) void slow_growth(void) { static int n; if (n++ % 4 == 0) keep[nk++] = E(malloc(2000)); }
int main(void) {
  struct timespec ts = {0, 25 * 1000 * 1000};
  for (int i = 0; i < 48; i++) { leaky_cache_insert(); steady_buffer(); slow_growth(); nanosleep(&ts, NULL); }
  return 0;
}
C
cc_prog "$T/leak" "$T/leak.c"
mkdir "$T/snap"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/snap/heap.pb.gz" CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/leak" ||
  fail "the leaking program failed"

# the demo program (examples/leak.c), for the screenshots of README.md and docs/viewing.md
cc_prog "$T/demo" "$TOP/examples/leak.c"
(cd "$T" && CPROF_HEAP_PROFILE="$T/demo.pb.gz" LD_PRELOAD="$LIB" ./demo > /dev/null) || fail "the demo failed"

start_ui main "$T/known.pb.gz"
MAIN=$UI
# shellcheck disable=SC2046
start_ui memory $(ls "$T"/snap/heap.[0-9]*.pb.gz)
MEMORY=$UI
start_ui demo "$T/demo.pb.gz"
DEMO=$UI

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_browser.js" "$MAIN" "$MEMORY" "$ART" "$DEMO" ||
  fail "browser checks (screenshots in $ART)"
note "screenshots: $(ls "$ART" | tr '\n' ' ')"
exit 0
