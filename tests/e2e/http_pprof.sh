#!/bin/sh
# go tool pprof against /debug/pprof/ of a preloaded C program (tests/progs/
# http_server.c at CPROF_RATE=1): heap and allocs profiles with exact
# numbers, functions and source lines; a -seconds delta profile; and, with
# the binary gone from its mapping path, names through /debug/pprof/symbol.
# The server's own allocations (libmicrohttpd, the encoder) never appear.
# timeout: 180
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv" CPROF_RATE=1

# --- heap: in-use, exact at rate 1 -----------------------------------------
pprof_flat inuse_space "$URL/debug/pprof/heap" > "$T/inuse_space"
pprof_flat inuse_objects "$URL/debug/pprof/heap" > "$T/inuse_objects"
for want in "keep_small 1000000" "keep_large 1000000"; do
  grep -qx "$want" "$T/inuse_space" || { cat "$T/inuse_space"; fail "heap: no \"$want\" in inuse_space"; }
done
for want in "keep_small 100" "keep_large 20"; do
  grep -qx "$want" "$T/inuse_objects" || { cat "$T/inuse_objects"; fail "heap: no \"$want\" in inuse_objects"; }
done
grep -q '^churn ' "$T/inuse_space" && fail "heap: churn frees everything it allocates"
go tool pprof -top "$URL/debug/pprof/heap" 2>/dev/null > "$T/heap.top"
grep -q '^Type: inuse_space$' "$T/heap.top" || fail "heap: default sample type is not inuse_space"

# Source lines of the allocating calls.
go tool pprof -top -lines -nodefraction=0 "$URL/debug/pprof/heap" 2>/dev/null > "$T/lines"
for fn in keep_small keep_large; do
  grep -Eq " $fn .*http_server\.c:$(line_of $fn)\$" "$T/lines" ||
    { cat "$T/lines"; fail "heap: $fn not at http_server.c:$(line_of $fn)"; }
done
note "heap: exact numbers and lines"

# --- allocs: alloc_space by default --------------------------------------
go tool pprof -top -nodefraction=0 "$URL/debug/pprof/allocs" 2>/dev/null > "$T/allocs.top"
grep -q '^Type: alloc_space$' "$T/allocs.top" || { cat "$T/allocs.top"; fail "allocs: default sample type is not alloc_space"; }
grep -Eq ' churn$' "$T/allocs.top" || fail "allocs: no churn"
pprof_flat alloc_objects "$URL/debug/pprof/allocs" > "$T/alloc_objects"
grep -qx "keep_small 100" "$T/alloc_objects" || fail "allocs: keep_small alloc_objects"
note "allocs: alloc_space default"

# --- the server's own work is not profiled --------------------------------
for i in 1 2 3 4 5; do curl -s -o /dev/null "$URL/debug/pprof/heap?debug=1"; done
go tool pprof -traces "$URL/debug/pprof/allocs" 2>/dev/null > "$T/traces"
grep -Ei 'MHD_|microhttpd|libcprof-http|gnutls|pprof_|symtab_|profile_' "$T/traces" &&
  fail "the server's allocations are in the profile"
note "server allocations: not profiled"

# --- delta profile over 2 seconds ------------------------------------------
go tool pprof -top -nodefraction=0 -seconds 2 "$URL/debug/pprof/allocs" > "$T/delta.top" 2> "$T/delta.err" ||
  { cat "$T/delta.err"; fail "delta: go tool pprof failed"; }
grep -q '^Duration: 2' "$T/delta.top" || { cat "$T/delta.top"; fail "delta: no 2 s duration"; }
grep -Eq ' churn$' "$T/delta.top" || { cat "$T/delta.top"; fail "delta: no churn"; }
grep -Eq ' keep_(small|large)$' "$T/delta.top" && { cat "$T/delta.top"; fail "delta: allocations from before the window"; }
note "delta: churn only, 2 s"
expect_progress srv "after the requests"
stop_server "$PID"

# --- binary gone: names through /debug/pprof/symbol ------------------------
mkdir -p "$T/gone"
cp "$T/srv" "$T/gone/srv"
start_server gone "$T/gone/srv" CPROF_RATE=1
rm -f "$T/gone/srv"
go tool pprof -top -nodefraction=0 "$URL/debug/pprof/heap" > "$T/gone.top" 2> "$T/gone.err" ||
  { cat "$T/gone.err"; fail "gone: go tool pprof failed"; }
grep -q 'Local symbolization failed' "$T/gone.err" || { cat "$T/gone.err"; fail "gone: the binary was still found"; }
for fn in keep_small keep_large main; do
  grep -Eq " $fn\$" "$T/gone.top" || { cat "$T/gone.top"; fail "gone: $fn not named"; }
done
pprof_flat inuse_space "$URL/debug/pprof/heap" > "$T/gone.flat"
grep -qx "keep_small 1000000" "$T/gone.flat" || fail "gone: keep_small numbers"
note "symbol: names without the binary"
stop_server "$PID"
exit 0
