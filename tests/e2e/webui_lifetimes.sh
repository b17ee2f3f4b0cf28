#!/bin/sh
# The lifetime histogram (/ui/lifetimes, src/tool/ui/weblife.h) in a real
# browser, on the lifetime profile of tests/progs/lifetimes_known.c at
# CPROF_RATE=1, which logs every object's lifetime (clock_gettime after
# malloc, before free): life_same's objects live 200..650 us, life_other's
# about 5 ms, life_live's are never freed (about 300 ms at the end).
# tests/e2e/webui_lifetimes.js selects a function in the top view and opens
# View > Lifetimes: each octave's bar holds exactly the objects whose
# logged lifetime lies in it, nothing of the other functions (cprof times
# the events inside malloc and free: between the program's lifetime
# measured inside and outside them, so only an object whose two straddle
# an octave's edge may fall either side); life_live's bars are all "still
# live"; the view is offered only for a lifetime profile. The program's
# output and status are its own.
# timeout: 240
. "$(dirname "$0")/webui_common.inc"

need_browser
ART=$BUILD/test-artifacts/webui-lifetimes
rm -rf "$ART"; mkdir -p "$ART"
cc_prog "$T/prog" "$PROGS/lifetimes_known.c"
CPROF_RATE=1 CPROF_RECORD=1m CPROF_LIFETIME_PROFILE="$T/life.pb.gz" CPROF_HEAP_PROFILE="$T/heap.pb.gz" \
  LD_PRELOAD="$LIB" "$T/prog" "$T/truth" "$T/objs" > "$T/out" 2> "$T/err" ||
  fail "the program exited $?: $(cat "$T/err")"
[ "$(cat "$T/out")" = "lifetimes_known done" ] || fail "output: $(cat "$T/out")"
[ -s "$T/life.pb.gz" ] || fail "no lifetime profile: $(cat "$T/err")"
[ "$(grep -c '^OBJ ' "$T/objs")" = 3700 ] || fail "the program logged $(grep -c '^OBJ ' "$T/objs") objects"

start_ui life "$T/life.pb.gz"
expect "/ui/top" 200 'id="lifetimesbtn"'
expect "/ui/lifetimes?f=%5Eno_such%28%20%7C%24%29" 200 'No sample with a lifetime here'
start_ui heap "$T/heap.pb.gz"
HEAP=$UI
expect "/ui/top" 200
grep -q 'id="lifetimesbtn"' "$T/body" && fail "the heap profile offers the lifetime view"
expect "/ui/lifetimes" 200 'No sample with a lifetime here'

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_lifetimes.js" "$(sed -n 's/^Serving web UI on //p' "$T/life.err")" "$ART" "$T/objs" ||
  fail "browser checks (screenshots in $ART)"
exit 0
