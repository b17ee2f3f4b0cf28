#!/bin/sh
# The custom-allocator API (include/cprof_heap.h) on a bump arena,
# tests/progs/heap_arena.c, built without -lcprof: at CPROF_RATE=1 its
# objects are exact in the heap profile with their stacks (site_node: 600
# of 1000 objects of 64 bytes live), labelled heap=arena, which go tool
# pprof's -tagfocus isolates; the arena's own malloc block (site_backing,
# 1 MiB) stays live though the first object has its address (the objects'
# own live-map keys). The peak profile (at site_big's 2 MiB) has all 1000
# objects, labelled. The leak scan (leak profile) reports exactly the 100
# objects of site_lost the program says it leaked, a chain only they link,
# labelled heap=arena, and not site_kept's chain that a static reaches, nor
# the arena's live nodes or block; so also with the block declared as
# backing memory (cprof_heap_backing), when it leaves the in-use values
# (not alloc_space). The memory profile has the same objects, exact and
# labelled, in class heap, taken out of the block that holds them (its
# sample is 1 MiB less their bytes; none when it is backing memory).
# Without cprof the program runs and the API is off.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/ha" "$PROGS/heap_arena.c" -I"$TOP/include" -ldl
"$T/ha" > "$T/out0" 2> "$T/err0" || { cat "$T/err0"; fail "program failed without cprof"; }
[ -s "$T/err0" ] && { cat "$T/err0"; fail "unexpected stderr without cprof"; }
[ "$(cat "$T/out0")" = "heap off
leaked 100 objects 6400 bytes
ok" ] || fail "output without cprof: $(cat "$T/out0")"

# The leak profile ($1) against what the program's output ($2) says it
# leaked: that alone, at site_lost, labelled heap=arena.
check_leaks() {
  lost=$(sed -n 's/^leaked \([0-9]*\) objects \([0-9]*\) bytes$/site_lost \1 \2/p' "$2")
  [ -n "$lost" ] || fail "no leak count in $2"
  for go in "${GO:-go}" /usr/lib/go-1.23/bin/go; do
    command -v "$go" > /dev/null || [ -x "$go" ] || continue
    PPROF="$go tool pprof" pprof_flat inuse_objects "$1" "$T/ha" | grep -v ' 0$' | sort > "$T/lo"
    PPROF="$go tool pprof" pprof_flat inuse_space "$1" "$T/ha" | grep -v ' 0$' | sort > "$T/ls"
    PPROF="$go tool pprof" pprof_flat inuse_space "$1" -tagfocus=heap=arena "$T/ha" |
      grep -v ' 0$' > "$T/lt"
    [ "$(join "$T/lo" "$T/ls")" = "$lost" ] ||
      { cat "$T/lo" "$T/ls"; fail "$go: leaks in $1 are not the program's: $lost"; }
    [ "$(cat "$T/lt")" = "site_lost ${lost##* }" ] || { cat "$T/lt"; fail "$go: leaks, heap=arena"; }
  done
}

# The memory profile ($1), -tagfocus=heap=arena, and site_backing's
# bytes in it ($2: want, or none).
check_memory() {
  for go in "${GO:-go}" /usr/lib/go-1.23/bin/go; do
    command -v "$go" > /dev/null || [ -x "$go" ] || continue
    for idx in virtual_space resident_space; do
      PPROF="$go tool pprof" pprof_flat $idx "$1" -tagfocus=heap=arena "$T/ha" | grep -v ' 0$' > "$T/mf"
      [ "$(cat "$T/mf")" = "site_node 38400
site_lost 6400
site_kept 640" ] || { cat "$T/mf"; fail "$go: memory profile $idx, heap=arena"; }
    done
    PPROF="$go tool pprof" pprof_flat virtual_space "$1" -tagfocus=class=heap "$T/ha" > "$T/mb"
    if [ "$2" = none ]; then
      grep -q '^site_backing [1-9]' "$T/mb" && { cat "$T/mb"; fail "$go: memory profile: backing block"; }
    else
      grep -q "^site_backing $2\$" "$T/mb" || { cat "$T/mb"; fail "$go: memory profile: site_backing not $2"; }
    fi
  done
}

CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/ha" "$T/h.pb.gz" "$T/p.pb.gz" "$T/l.pb.gz" "$T/m.pb.gz" > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "program failed"; }
[ -s "$T/err" ] && { cat "$T/err"; fail "unexpected stderr"; }
[ "$(cat "$T/out")" = "heap on
leaked 100 objects 6400 bytes
ok" ] || fail "output: $(cat "$T/out")"
check_leaks "$T/l.pb.gz" "$T/out"
check_memory "$T/m.pb.gz" $((1048576 - 38400 - 6400 - 640))

for go in "${GO:-go}" /usr/lib/go-1.23/bin/go; do
  command -v "$go" > /dev/null || [ -x "$go" ] || continue
  PPROF="$go tool pprof" pprof_flat inuse_objects "$T/h.pb.gz" "$T/ha" > "$T/io"
  PPROF="$go tool pprof" pprof_flat inuse_space "$T/h.pb.gz" "$T/ha" > "$T/is"
  PPROF="$go tool pprof" pprof_flat alloc_objects "$T/h.pb.gz" "$T/ha" > "$T/ao"
  grep -q '^site_node 600$' "$T/io" || { cat "$T/io"; fail "$go: site_node inuse_objects"; }
  grep -q '^site_node 38400$' "$T/is" || { cat "$T/is"; fail "$go: site_node inuse_space"; }
  grep -q '^site_node 1000$' "$T/ao" || { cat "$T/ao"; fail "$go: site_node alloc_objects"; }
  grep -q '^site_backing 1048576$' "$T/is" || { cat "$T/is"; fail "$go: site_backing inuse_space"; }
  PPROF="$go tool pprof" pprof_flat inuse_space "$T/h.pb.gz" -tagfocus=heap=arena "$T/ha" |
    grep -v ' 0$' > "$T/tf"
  [ "$(cat "$T/tf")" = "site_node 38400
site_lost 6400
site_kept 640" ] || { cat "$T/tf"; fail "$go: -tagfocus heap=arena"; }
  PPROF="$go tool pprof" pprof_flat inuse_space "$T/p.pb.gz" -tagfocus=heap=arena "$T/ha" |
    grep -v ' 0$' > "$T/pk"
  [ "$(cat "$T/pk")" = "site_node 64000" ] || { cat "$T/pk"; fail "$go: peak, heap=arena"; }
  PPROF="$go tool pprof" pprof_flat inuse_space "$T/p.pb.gz" "$T/ha" > "$T/pa"
  grep -q '^site_big 2097152$' "$T/pa" || { cat "$T/pa"; fail "$go: peak site_big"; }
done
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/ha" "$T/b.pb.gz" "$T/bp.pb.gz" "$T/bl.pb.gz" "$T/bm.pb.gz" backing \
  > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "program failed (backing)"; }
[ -s "$T/err" ] && { cat "$T/err"; fail "unexpected stderr (backing)"; }
check_leaks "$T/bl.pb.gz" "$T/out"
check_memory "$T/bm.pb.gz" none
pprof_flat inuse_space "$T/b.pb.gz" "$T/ha" > "$T/bis"
pprof_flat alloc_space "$T/b.pb.gz" "$T/ha" > "$T/bas"
grep -q '^site_backing [1-9]' "$T/bis" && { cat "$T/bis"; fail "backing still in use"; }
grep -q '^site_node 38400$' "$T/bis" || { cat "$T/bis"; fail "site_node inuse_space (backing)"; }
grep -q '^site_backing 1048576$' "$T/bas" || { cat "$T/bas"; fail "site_backing alloc_space (backing)"; }
note "arena objects exact and labelled, in the memory profile too; backing block kept its own entry; leaks exact"
exit 0
