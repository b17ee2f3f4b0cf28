#!/bin/sh
# Every /debug/pprof/ endpoint with curl, against what Go's net/http/pprof
# answers: status codes, content types, X-Content-Type-Options,
# Content-Disposition, the index page, cmdline's exact bytes, the debug=1
# text (which go tool pprof must parse into the protobuf's numbers), the
# symbol table (GET and POST), HEAD, redirects, the threads, threadcreate,
# mutex and block profiles, and the trace's headers (trace_http.sh tests
# the trace itself).
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv" CPROF_RATE=1
grep -qx "cprof: serving /debug/pprof/ on $URL/debug/pprof/" "$T/srv.err" ||
  { cat "$T/srv.err"; fail "the address is not announced on stderr"; }
[ "$(grep -c . "$T/srv.err")" = 1 ] || { cat "$T/srv.err"; fail "more than one line on stderr"; }

nosniff() { [ "$(header "$1" X-Content-Type-Options)" = nosniff ] || fail "$1: no nosniff"; }
disposition() {
  d=$(header "$1" Content-Disposition)
  [ "$d" = "$2" ] || fail "$1: Content-Disposition \"$d\", want \"$2\""
}

# --- index ------------------------------------------------------------------
req index "$URL/debug/pprof/"
expect index 200 "text/html; charset=utf-8"
nosniff index
grep -q '^<title>/debug/pprof/</title>$' "$T/index.body" || fail "index: no title"
grep -q '^Types of profiles available:$' "$T/index.body" || fail "index: no table"
for p in allocs block cmdline goroutine heap mutex profile threadcreate trace; do
  grep -Eq "^<tr><td>[0-9]+</td><td><a href='$p\\?debug=1'>$p</a></td></tr>\$" "$T/index.body" ||
    { cat "$T/index.body"; fail "index: no row for $p"; }
  grep -q "^<li><div class=profile-name>$p: </div> " "$T/index.body" || fail "index: no description of $p"
done
heap_count=$(sed -n "s|^<tr><td>\\([0-9]*\\)</td><td><a href='heap?debug=1'>.*|\\1|p" "$T/index.body")
[ "$heap_count" -ge 3 ] || fail "index: heap count $heap_count"
# Rows sorted by name, as Go sorts them.
sed -n "s|^<tr><td>[0-9]*</td><td><a href='\\([a-z]*\\)?.*|\\1|p" "$T/index.body" > "$T/rows"
sort "$T/rows" | cmp -s - "$T/rows" || fail "index: rows not sorted"
tail -c 7 "$T/index.body" | grep -q '</html>' || fail "index: not a whole page"
grep -q '^<a href="goroutine?debug=2">full goroutine stack dump</a>$' "$T/index.body" ||
  fail "index: no link to the full stack dump"
note "index"

# --- heap and allocs --------------------------------------------------------
for p in heap allocs; do
  req $p "$URL/debug/pprof/$p"
  expect $p 200 "application/octet-stream"
  nosniff $p
  disposition $p "attachment; filename=\"$p\""
  [ "$(head -c 2 "$T/$p.body" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "$p: not gzip"
  [ "$(header $p Content-Length)" = "$(wc -c < "$T/$p.body")" ] || fail "$p: Content-Length"
  go tool pprof -raw "$T/$p.body" > /dev/null 2>&1 || fail "$p: go tool pprof cannot read it"
done
req gc "$URL/debug/pprof/heap?gc=1"
expect gc 200 "application/octet-stream"

# debug=1: the legacy text, which pprof reads into the same numbers.
for p in heap allocs; do
  req ${p}1 "$URL/debug/pprof/$p?debug=1"
  expect ${p}1 200 "text/plain; charset=utf-8"
  nosniff ${p}1
  [ -z "$(header ${p}1 Content-Disposition)" ] || fail "$p?debug=1: Content-Disposition"
  head -n1 "$T/${p}1.body" | grep -Eq '^heap profile: [0-9]+: [0-9]+ \[[0-9]+: [0-9]+\] @ heap/2$' ||
    fail "$p?debug=1: header \"$(head -n1 "$T/${p}1.body")\""
  grep -q '^# cprof_stats_t$' "$T/${p}1.body" || fail "$p?debug=1: no statistics block"
done
req debug2 "$URL/debug/pprof/heap?debug=2"
expect debug2 200 "text/plain; charset=utf-8"
for idx in inuse_space inuse_objects; do
  pprof_flat $idx "$T/heap1.body" "$T/srv" | grep -E '^keep_(small|large) ' | sort > "$T/text.$idx"
  pprof_flat $idx "$T/heap.body" "$T/srv" | grep -E '^keep_(small|large) ' | sort > "$T/proto.$idx"
  [ -s "$T/proto.$idx" ] || fail "$idx: nothing in the protobuf profile"
  cmp -s "$T/text.$idx" "$T/proto.$idx" || { cat "$T/text.$idx" "$T/proto.$idx"; fail "debug=1: $idx differs"; }
done
note "heap, allocs, debug=1"

# --- delta -------------------------------------------------------------------
req delta "$URL/debug/pprof/heap?seconds=1"
expect delta 200 "application/octet-stream"
disposition delta 'attachment; filename="heap-delta"'
go tool pprof -raw "$T/delta.body" > "$T/delta.raw" 2>&1 || fail "delta: unreadable"
req delta2 "$URL/debug/pprof/allocs?seconds=1"
disposition delta2 'attachment; filename="allocs-delta"'
note "delta"

# --- cmdline: os.Args joined with NUL ----------------------------------------
req cmdline "$URL/debug/pprof/cmdline"
expect cmdline 200 "text/plain; charset=utf-8"
nosniff cmdline
printf '%s\000%s' "$T/srv" "$T/srv.count" > "$T/cmdline.want"
cmp -s "$T/cmdline.want" "$T/cmdline.body" || { od -c "$T/cmdline.body"; fail "cmdline bytes"; }
note "cmdline"

# --- symbol ---------------------------------------------------------------------
req sym0 "$URL/debug/pprof/symbol"
expect sym0 200 "text/plain; charset=utf-8"
printf 'num_symbols: 1\n' | cmp -s - "$T/sym0.body" || fail "symbol: GET without addresses"
# keep_small is static: only .symtab names it. Its address: load base + nm.
base=$(awk -v exe="$T/srv" '$6 == exe { split($1, r, "-"); print r[1]; exit }' /proc/$PID/maps)
off=$(nm "$T/srv" | awk '$3 == "keep_small" { print $1 }')
[ -n "$base" ] && [ -n "$off" ] || fail "symbol: cannot find keep_small"
a=$(printf '0x%x' $((0x$base + 0x$off + 4)))
req sym1 --data-binary "$a+0+junk+0x1+$a" "$URL/debug/pprof/symbol"
expect sym1 200 "text/plain; charset=utf-8"
printf 'num_symbols: 1\n%s keep_small\n%s keep_small\n' "$a" "$a" | cmp -s - "$T/sym1.body" ||
  { cat "$T/sym1.body"; fail "symbol: POST"; }
req sym2 "$URL/debug/pprof/symbol?$a"
printf 'num_symbols: 1\n%s keep_small\n' "$a" | cmp -s - "$T/sym2.body" || fail "symbol: GET"
# Every frame the text form names through dladdr gets the same name.
awk '$1 == "#" && $2 ~ /^0x/ && NF >= 4 { sub(/\+0x[0-9a-f]+$/, "", $3); print $2, $3 }' "$T/heap1.body" | sort -u > "$T/named"
[ -s "$T/named" ] || fail "symbol: no named frames in the text form"
req sym3 --data-binary "$(cut -d' ' -f1 "$T/named" | paste -sd+ -)" "$URL/debug/pprof/symbol"
tail -n +2 "$T/sym3.body" | sort -u > "$T/got"
cmp -s "$T/named" "$T/got" || { diff "$T/named" "$T/got"; fail "symbol: names differ from dladdr's"; }
# A word longer than Go's 4096-byte buffer ends the request as Go's does.
long=$(head -c 5000 /dev/zero | tr '\0' 1)
req sym4 --data-binary "$a+$long+$a" "$URL/debug/pprof/symbol"
printf 'num_symbols: 1\n%s keep_small\nreading request: bufio: buffer full\n' "$a" | cmp -s - "$T/sym4.body" ||
  { cat "$T/sym4.body"; fail "symbol: long word"; }
note "symbol"

# --- HEAD, redirects ---------------------------------------------------------------
req head -I "$URL/debug/pprof/heap"
expect head 200 "application/octet-stream"
# curl -I writes the headers as the output: nothing may follow them.
cmp -s "$T/head.body" "$T/head.raw" || fail "HEAD: a body"
[ -n "$(header head Content-Length)" ] || fail "HEAD: no Content-Length"
req redir "$URL/debug/pprof"
expect redir 301
[ "$(header redir Location)" = /debug/pprof/ ] || fail "redirect: Location $(header redir Location)"
req clean "$URL/debug//pprof/./heap?debug=1"
expect clean 301
[ "$(header clean Location)" = "/debug/pprof/heap?debug=1" ] || fail "clean path: Location"
note "HEAD, redirects"

# --- the CPU profile (more in cpu_http.sh) ----------------------------------------------
req cpu "$URL/debug/pprof/profile?seconds=1"
expect cpu 200 "application/octet-stream"
[ "$(header cpu Content-Disposition)" = 'attachment; filename="profile"' ] ||
  fail "profile: Content-Disposition \"$(header cpu Content-Disposition)\""
nosniff cpu
head -c 2 "$T/cpu.body" | od -An -tx1 | grep -q '1f 8b' || fail "profile: not gzip"

# --- threads, threadcreate, mutex, block (more in threads_*.sh, mutex_*.sh) ----------
for p in goroutine threadcreate mutex block; do
  req $p "$URL/debug/pprof/$p"
  expect $p 200 "application/octet-stream"
  nosniff $p
  disposition $p "attachment; filename=\"$p\""
  head -c 2 "$T/$p.body" | od -An -tx1 | grep -q '1f 8b' || fail "$p: not gzip"
  go tool pprof -raw "$T/$p.body" > /dev/null 2>&1 || fail "$p: go tool pprof cannot read it"
  req ${p}1 "$URL/debug/pprof/$p?debug=1"
  expect ${p}1 200 "text/plain; charset=utf-8"
  [ -z "$(header ${p}1 Content-Disposition)" ] || fail "$p?debug=1: Content-Disposition"
  req ${p}d "$URL/debug/pprof/$p?seconds=1"
  expect ${p}d 200 "application/octet-stream"
  disposition ${p}d "attachment; filename=\"$p-delta\""
  req ${p}x "$URL/debug/pprof/$p?seconds=1&debug=1"
  expect_error ${p}x 400 "seconds and debug params are incompatible"
done
head -n1 "$T/goroutine1.body" | grep -Eq '^goroutine profile: total [0-9]+$' || fail "goroutine?debug=1: header"
head -n1 "$T/threadcreate1.body" | grep -Eq '^threadcreate profile: total [0-9]+$' || fail "threadcreate?debug=1: header"
head -n3 "$T/mutex1.body" | tr '\n' '|' | grep -Eq '^--- mutex:\|cycles/second=1000000000\|sampling period=[0-9]+\|$' ||
  fail "mutex?debug=1: header"
head -n2 "$T/block1.body" | tr '\n' '|' | grep -qx -- '--- contention:|cycles/second=1000000000|' ||
  fail "block?debug=1: header"
req goroutine2 "$URL/debug/pprof/goroutine?debug=2"
expect goroutine2 200 "text/plain; charset=utf-8"
grep -Eq '^thread [0-9]+ ".*" \[.*\]:$' "$T/goroutine2.body" || fail "goroutine?debug=2: no thread"
note "goroutine, threadcreate, mutex, block"

# --- the trace: Go's headers ----------------------------------------------------------
req trace "$URL/debug/pprof/trace?seconds=0.2"
expect trace 200 "application/octet-stream"
nosniff trace
disposition trace 'attachment; filename="trace"'
[ "$(head -c 13 "$T/trace.body")" = "go 1.19 trace" ] || fail "trace: no Go 1.19 trace header"
note "profile, goroutine, threadcreate, mutex, block, trace"
stop_server "$PID"
exit 0
