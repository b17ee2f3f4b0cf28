#!/bin/sh
# Memory over time in the web UI (/ui/memory): a C program under
# libcprof.so leaks from a known function (and grows slowly from another,
# holds a steady buffer, frees its temporaries) while
# CPROF_HEAP_PROFILE_EVERY writes numbered snapshots. Given the snapshots
# (in reverse order: the view orders them by time), the page lists the
# leaking function first, the slow one second and nothing else; its first
# and last values are the snapshots' own (cprof -top); its stacks page
# shows the stack through main; the URL's filters and sample index apply.
# Then the same program serving /debug/pprof/heap, polled with -poll 1:
# the series grows while it runs and the leak is still first.
# timeout: 180
. "$(dirname "$0")/webui_common.inc"

cp "$LIB" "$T/libcprof.so" && LIB=$T/libcprof.so
cat > "$T/leak.c" <<'C'
#include <stdlib.h>
#include <time.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
static void *keep[200000];
static int nk;
__attribute__((noinline)) void leaky_cache_insert(void) { for (int i = 0; i < 50; i++) keep[nk++] = E(malloc(4096)); }
__attribute__((noinline)) void steady_buffer(void) { static void *b[20]; for (int i = 0; i < 20; i++) { free(b[i]); b[i] = E(malloc(8192)); } }
__attribute__((noinline)) void temp_work(void) { for (int i = 0; i < 100; i++) free(E(malloc(1000))); }
__attribute__((noinline)) void slow_growth(void) { static int n; if (n++ % 4 == 0) keep[nk++] = E(malloc(2000)); }
int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 48;
  struct timespec ts = {0, 25 * 1000 * 1000};
  steady_buffer();
  for (int i = 0; i < rounds && nk < 190000; i++) { leaky_cache_insert(); steady_buffer(); temp_work(); slow_growth(); nanosleep(&ts, NULL); }
  return 0;
}
C
cc_prog "$T/leak" "$T/leak.c"
mkdir "$T/snap"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/snap/heap.pb.gz" CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/leak" ||
  fail "the program failed"
ls "$T/snap" | grep -q '^heap\.[0-9]*\.pb\.gz$' || fail "no snapshots: $(ls "$T/snap")"
# numbered snapshots, oldest first
snaps=$(ls "$T/snap" | sed -n 's/^heap\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | sed "s|.*|$T/snap/heap.&.pb.gz|")
n=$(echo "$snaps" | wc -l)
[ "$n" -ge 4 ] || fail "only $n snapshots"
oldest=$(echo "$snaps" | head -n 1)
newest=$(echo "$snaps" | tail -n 1)
note "$n snapshots"

# shellcheck disable=SC2046
start_ui mem $(echo "$snaps" | sort -r)
expect "/ui/memory" 200 "inuse_space over $n profiles"
grep -q '<svg id="chart"' "$T/body" || fail "no chart"
grep -q '<polyline' "$T/body" || fail "no line in the chart"
# The peak is marked: the snapshot with the highest total (the heap only
# grows here: the newest one's total).
peak=$(sed -n 's|^<g id="peak"><title>peak: \([^:]*\): .*|\1|p' "$T/body")
[ -n "$peak" ] || fail "no peak marker"
tot() { "$CPROF" -top -sample_index=inuse_space "$1" 2>/dev/null | sed -n 's/.* of \(.*\) total$/\1/p'; }
[ "$(tot "$peak")" = "$(tot "$newest")" ] || fail "the peak marker is at $peak ($(tot "$peak")), not at the highest total ($(tot "$newest"))"
html_part "$T/body" sites > "$T/sites"
[ "$(sed -n 1p "$T/sites")" = leaky_cache_insert ] || { cat "$T/sites"; fail "the leak is not the top grower"; }
[ "$(sed -n 2p "$T/sites")" = slow_growth ] || { cat "$T/sites"; fail "slow_growth is not second"; }
[ "$(wc -l < "$T/sites")" = 2 ] || { cat "$T/sites"; fail "other call sites are listed as growing"; }
# Profiles in time order, whatever the order of the command line
grep -o '<div>Profile [0-9]*: [^ <]*' "$T/body" | sed 's|<div>Profile \([0-9]*\): |\1 |' > "$T/order"
echo "$snaps" | awk '{ print NR, $0 }' > "$T/want.order"
cmp -s "$T/order" "$T/want.order" || { diff "$T/order" "$T/want.order"; fail "profiles not in time order"; }
# First and last values are the snapshots' own
flat_of() { # FILE FUNCTION: exact inuse_space flat
  "$CPROF" -top -nodecount=500 -unit=byte -sample_index=inuse_space "$1" 2>/dev/null |
    awk -v f="$2" '$6 == f && NF == 6 { v=$1; sub(/B$/, "", v); print v }'
}
row=$(grep -o '<tr data-name="leaky_cache_insert" data-first="[0-9]*" data-last="[0-9]*"' "$T/body")
first=$(echo "$row" | sed 's/.*data-first="\([0-9]*\)".*/\1/')
last=$(echo "$row" | sed 's/.*data-last="\([0-9]*\)".*/\1/')
[ "$first" = "$(flat_of "$oldest" leaky_cache_insert)" ] || fail "first value $first, cprof -top says $(flat_of "$oldest" leaky_cache_insert)"
[ "$last" = "$(flat_of "$newest" leaky_cache_insert)" ] || fail "last value $last, cprof -top says $(flat_of "$newest" leaky_cache_insert)"
[ "$last" -gt "$first" ] || fail "no growth: $first -> $last"
note "top grower leaky_cache_insert: $first -> $last bytes"
grep -q 'href="./memory?site=leaky_cache_insert"' "$T/body" || fail "no link to the leak's stacks"
grep -q 'href="./flamegraph?f=%5Eleaky_cache_insert%28%20%7C%24%29"' "$T/body" || fail "no flame graph link"
grep -q 'href="./peek?f=%5Eleaky_cache_insert%28%20%7C%24%29"' "$T/body" || fail "no peek link"
get "/ui/peek?f=%5Eleaky_cache_insert%28%20%7C%24%29"
[ "$CODE" = 200 ] || fail "the peek link of the leak: $CODE"

# Its stacks
expect "/ui/memory?site=leaky_cache_insert" 200 'Its stacks, by growth'
python3 - "$T/body" <<'EOF' || fail "stacks page"
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r'<tr data-first="(\d+)" data-last="(\d+)"><td class="stack">(.*?)</td>', page, re.S)
assert rows, "no stack rows"
frames = [re.sub(r"<[^>]*>", "", f) for f in re.findall(r"<div>(.*?)</div>", rows[0][2])]
assert frames[-1] == "leaky_cache_insert", frames
assert "main" in frames, frames
assert int(rows[0][1]) > int(rows[0][0]), rows[0][:2]
EOF
expect "/ui/memory?site=no_such_site" 200 'No sample ends at this call site'

# The URL's filters and sample index apply
get "/ui/memory?i=leaky"; html_part "$T/body" sites > "$T/sites"
[ "$(sed -n 1p "$T/sites")" = slow_growth ] || { cat "$T/sites"; fail "ignore=leaky: slow_growth is not first"; }
get "/ui/memory?si=alloc_space"; html_part "$T/body" sites > "$T/sites"
grep -qx temp_work "$T/sites" || { cat "$T/sites"; fail "alloc_space: temp_work does not grow"; }
grep -q 'alloc_space over' "$T/body" || fail "alloc_space: not the sample shown"
expect "/ui/memory?f=(" 400 'parsing focus regexp'
expect "/ui/memory?si=bogus" 400 'must be one of'
# every other view still shows the merged profiles, and the menu has the memory view
expect "/ui/top" 200 'id="memory" class="viewlink"'
stop_ui "$UI_PID"

# One profile: the page explains
start_ui one "$newest"
expect "/ui/memory" 200 'several heap profiles'
stop_ui "$UI_PID"
note "memory view from files"

# --- -poll against a running program -------------------------------------------------------
[ -f "$BUILD/libcprof-http.so" ] || { note "no libcprof-http.so: -poll not checked"; exit 0; }
cp "$BUILD/libcprof-http.so" "$T/libcprof-http.so"
CPROF_RATE=4096 CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/addr" LD_PRELOAD="$LIB" \
  "$T/leak" 100000 2> "$T/leak.err" &
LEAK=$!
UI_PIDS="$UI_PIDS $LEAK"
i=0; while [ ! -s "$T/addr" ]; do i=$((i+1)); [ $i -gt 100 ] && { cat "$T/leak.err"; fail "the program serves no /debug/pprof/"; }; sleep 0.1; done
start_ui poll -poll 1 "http://$(cat "$T/addr")/debug/pprof/heap"
grep -q '^Fetching profile over HTTP from' "$T/poll.err" || fail "-poll: nothing fetched"
i=0
while :; do
  get "/ui/memory"
  np=$(sed -n 's/.*inuse_space over \([0-9]*\) profiles.*/\1/p' "$T/body")
  [ -n "$np" ] && [ "$np" -ge 4 ] && break
  i=$((i + 1))
  [ $i -gt 40 ] && fail "-poll: the series does not grow ($np profiles after 20 s)"
  sleep 0.5
done
html_part "$T/body" sites > "$T/sites"
[ "$(sed -n 1p "$T/sites")" = leaky_cache_insert ] || { cat "$T/sites"; fail "-poll: the leak is not the top grower"; }
get "/ui/top"; html_part "$T/body" rows > "$T/rows"
[ "$(head -n 1 "$T/rows" | cut -f 2)" = leaky_cache_insert ] || { cat "$T/rows"; fail "-poll: top does not show the newest profile"; }
note "-poll: $np profiles, leak first"
stop_ui "$UI_PID"
kill "$LEAK" 2>/dev/null
exit 0
