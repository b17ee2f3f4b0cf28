#!/bin/sh
# Programs linked with lld (clang -fuse-ld=lld, Rust's default linker since
# 1.90) start their executable segment inside the read-only segment's last
# file page, so the r-xp mapping at file offset 0 overlaps both segments.
# cprof must take the executable one for the load bias (pprof's
# ProgramHeadersForMapping), or every frame is named after code a page
# lower (pad() in the program); the runtime must give the mapping its build
# id although it starts below the segment's p_vaddr, and name the frames
# right from its symbol tables. go tool pprof 1.19 is
# no oracle here: its kernel heuristic (kernelBase, offset 0) takes the
# executable segment's p_vaddr for the mapping's start and names nothing.
# timeout: 60
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || skip "no $CPROF (run make)"
[ -f "$LIB" ] || skip "no $LIB (run make)"
command -v ld.lld >/dev/null 2>&1 || skip "skip: lld not installed"
export HOME="$T/home"; mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS CPROF_DEBUG_FILE_DIRECTORY

SRC=$PROGS/symbolize_lld.c
line_of() { grep -n -F -- "$2" "$1" | head -n1 | cut -d: -f1; }
gcc -g -O2 -fno-omit-frame-pointer -fuse-ld=lld -o "$T/lld" "$SRC" || fail "build $SRC with lld"
# The layout this test is about: the executable PT_LOAD's file offset is
# not page aligned (it shares a page with the read-only segment).
XOFF=$(readelf -lW "$T/lld" | awk '$1 == "LOAD" && $8 == "E" { print $2; exit }')
[ -n "$XOFF" ] && [ $((XOFF % 4096)) -ne 0 ] ||
  { readelf -lW "$T/lld"; skip "skip: lld did not share a page between segments"; }

CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/p.pb.gz" LD_PRELOAD="$LIB" "$T/lld" > "$T/out" ||
  fail "the program failed under the preload"
[ "$(cat "$T/out")" = "allocated 6" ] || { cat "$T/out"; fail "the program's output"; }
[ -s "$T/p.pb.gz" ] || fail "no profile written"

# The runtime's mapping carries the binary's build id.
BID=$(readelf -n "$T/lld" | sed -n 's/.*Build ID: *//p')
[ -n "$BID" ] || fail "lld wrote no build id"
"$CPROF" -raw "$T/p.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$p' > "$T/maps"
grep -q " $T/lld $BID" "$T/maps" || { cat "$T/maps"; fail "the program's mapping has no build id $BID"; }

"$CPROF" -top -lines -nodefraction=0 "$T/p.pb.gz" > "$T/top" 2> "$T/err" || fail "cprof -top: $(cat "$T/err")"
[ -s "$T/err" ] && { cat "$T/err"; fail "warnings for a profile whose binaries are all there"; }
grep -q "^ *4096kB .* alloc_a .*symbolize_lld.c:$(line_of "$SRC" @alloc-a)\$" "$T/top" ||
  { cat "$T/top"; fail "alloc_a's 4MB at its malloc line"; }
grep -q "^ *2048kB .* alloc_b .*symbolize_lld.c:$(line_of "$SRC" @alloc-b)\$" "$T/top" ||
  { cat "$T/top"; fail "alloc_b's 2MB at its malloc line"; }
"$CPROF" -top -nodefraction=0 "$T/p.pb.gz" > "$T/fn" 2>/dev/null
# main: the 6 MiB above and stdio's buffer.
awk '$6 == "main" && $4 ~ /kB$/ && $4 + 0 >= 6144 { ok = 1 } END { exit !ok }' "$T/fn" ||
  { cat "$T/fn"; fail "main's 6MB cumulative"; }
if grep -q " pad\$\|\[lld\]" "$T/fn"; then cat "$T/fn"; fail "frames named a page too low or not at all"; fi

# The runtime's own names (its symbol tables, load bias from the loader)
# are right for this layout too.
"$CPROF" -top -nodefraction=0 -symbolize=none "$T/p.pb.gz" > "$T/none" 2>/dev/null
grep -q "^ *4096kB .* alloc_a\$" "$T/none" && grep -q "^ *2048kB .* alloc_b\$" "$T/none" ||
  { cat "$T/none"; fail "the runtime's names: alloc_a 4096kB, alloc_b 2048kB"; }
