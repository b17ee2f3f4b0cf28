#!/bin/sh
# CPROF_ALLOC_WRAPPERS: the heap-layout profiles name the program's
# allocation wrappers as pprof's drop_frames, so go tool pprof and cprof
# show the wrapper's caller as the allocating function
# (tests/progs/alloc_wrappers.c, CPROF_RATE=1, exact): xmalloc is on the
# built-in list, my_pool_alloc is not until named; "" turns the list off;
# a bad expression is refused with one line and the built-in list kept.
# The memory profile's heap samples follow it too.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/aw" "$PROGS/alloc_wrappers.c"

run() { # NAME [ENV...]
  name=$1; shift
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" CPROF_MEMORY_PROFILE="$T/$name.mem.pb.gz" "$@" \
    LD_PRELOAD="$LIB" "$T/aw" > "$T/$name.out" 2> "$T/$name.err" || fail "$name: program failed"
  grep -q '^TRUTH caller_b 14000$' "$T/$name.out" || fail "$name: program output"
}
flat() { # PROFILE FUNCTION [INDEX]: the function's flat value
  pprof_flat "${3:-inuse_space}" "$1" "$T/aw" | awk -v f="$2" '$1 == f { v = $2 } END { print v + 0 }'
}
expect() { # PROFILE FUNCTION WANT [INDEX]
  got=$(flat "$1" "$2" "${4:-}")
  [ "$got" = "$3" ] || { pprof_flat "${4:-inuse_space}" "$1" "$T/aw"; fail "$1: $2 $got, want $3"; }
}

run builtin
expect "$T/builtin.pb.gz" caller_a 10000
expect "$T/builtin.pb.gz" xmalloc 0
expect "$T/builtin.pb.gz" my_pool_alloc 14000
[ -s "$T/builtin.err" ] && { cat "$T/builtin.err"; fail "builtin: messages on stderr"; }

run named CPROF_ALLOC_WRAPPERS='my_pool_alloc|xmalloc'
for f in "$T/named.pb.gz"; do
  expect "$f" caller_a 10000
  expect "$f" caller_b 14000
  expect "$f" my_pool_alloc 0
done
PPROF="$BUILD/cprof" pprof_flat inuse_space "$T/named.pb.gz" "$T/aw" | grep -qx 'caller_b 14000' ||
  fail "cprof's tool does not honour drop_frames"
expect "$T/named.mem.pb.gz" caller_b 14000 virtual_space

run none CPROF_ALLOC_WRAPPERS=
expect "$T/none.pb.gz" xmalloc 10000

run bad 'CPROF_ALLOC_WRAPPERS=xmalloc('
grep -q 'CPROF_ALLOC_WRAPPERS' "$T/bad.err" || fail "bad expression: no message"
[ "$(grep -c . "$T/bad.err")" = 1 ] || { cat "$T/bad.err"; fail "bad expression: more than one line"; }
expect "$T/bad.pb.gz" caller_a 10000
echo "ok: allocation wrappers dropped as named, by go tool pprof and cprof"
