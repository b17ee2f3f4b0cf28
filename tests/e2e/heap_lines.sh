#!/bin/sh
# Source lines: go tool pprof -lines must name the line of each allocating
# call (addresses are return address - 1, so no line shifts to the next
# statement), and the callers' lines in -traces; with the recorded path and
# with the binary given on the command line after the original is gone.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

src="$PROGS/heapknown.c"
cp "$src" "$T/heapknown.c"
(cd "$T" && gcc -g -O1 -o known heapknown.c -lpthread) || fail "build"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/h.pb.gz" LD_PRELOAD="$LIB" "$T/known" >/dev/null || fail "run"

line_of() { grep -n -F -- "$1" "$src" | head -n1 | cut -d: -f1; }
expect() { # FUNCTION PATTERN-IN-SOURCE [PPROF ARGS...]
  fn=$1; l=$(line_of "$2"); shift 2
  go tool pprof -top -lines -nodefraction=0 -sample_index=alloc_space "$@" 2>/dev/null |
    grep -q " $fn .*heapknown.c:$l\$" || fail "$fn: expected line $l ($*)"
}
for args in "$T/h.pb.gz" "$T/known $T/h.pb.gz"; do
  # shellcheck disable=SC2086
  set -- $args
  expect use_malloc_keep "KEEP(malloc(1000))" "$@"
  expect use_malloc_free "E(malloc(333))" "$@"
  expect use_calloc "E(calloc(10, 77))" "$@"
  expect use_realloc "E(realloc(p, 4096))" "$@"
  expect use_aligned "posix_memalign(&p, 64, 5000)" "$@"
  expect thread_work "E(malloc(2048))" "$@"
done

# Callers: main's line calling use_large, in -traces -lines.
l=$(line_of "    use_large();")
go tool pprof -traces -lines "$T/h.pb.gz" 2>/dev/null | grep -q "main .*heapknown.c:$l\$" ||
  fail "caller line $l of use_large not in -traces"

# The binary moved away from its mapping path: given explicitly, it still
# symbolizes; without it, pprof shows [known] and says why.
mv "$T/known" "$T/known.moved"
expect use_malloc_keep "KEEP(malloc(1000))" "$T/known.moved" "$T/h.pb.gz"
go tool pprof -top "$T/h.pb.gz" 2>&1 | grep -q "Local symbolization failed for known" ||
  fail "expected pprof's warning for the missing binary"
exit 0
