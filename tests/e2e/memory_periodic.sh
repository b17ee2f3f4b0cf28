#!/bin/sh
# With CPROF_HEAP_PROFILE_EVERY, CPROF_MEMORY_PROFILE is written on the
# heap snapshots' schedule too: each round's memory profile has the number
# of its heap snapshot, loads in go tool pprof with its classes, and its
# heap class grows as the program's memory does; the final ones are
# written at exit. The program's own output is intact.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
cat > "$T/grow.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void *volatile keep[60];
static int n;
__attribute__((noinline)) void grow(void) { keep[n] = malloc(1 << 20); memset(keep[n++], 1, 1 << 20); }
int main(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  for (int i = 0; i < 60; i++) { grow(); nanosleep(&ts, NULL); }
  puts("done");
  return 0;
}
C
cc_prog "$T/grow" "$T/grow.c"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/heap.pb.gz" CPROF_MEMORY_PROFILE="$T/mem.pb.gz" \
  CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/grow" > "$T/out" || fail "program failed"
[ "$(cat "$T/out")" = done ] || fail "program output: $(cat "$T/out")"
[ -s "$T/mem.pb.gz" ] && [ -s "$T/heap.pb.gz" ] || fail "no final profiles"
n=$(ls "$T" | grep -c '^mem\.[0-9]*\.pb\.gz$')
[ "$n" -ge 3 ] || fail "expected >= 3 memory snapshots, got $n: $(ls "$T")"
prev=-1
for i in $(ls "$T" | sed -n 's/^mem\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n); do
  [ -s "$T/heap.$i.pb.gz" ] || fail "memory snapshot $i has no heap snapshot $i: $(ls "$T")"
  go tool pprof -raw "$T/mem.$i.pb.gz" > "$T/raw" 2>/dev/null || fail "snapshot $i: go tool pprof cannot read it"
  grep -q 'class:\[code\]' "$T/raw" || fail "snapshot $i: no classes"
  v=$(pprof_flat virtual_space "$T/mem.$i.pb.gz" "$T/grow" | awk '$1 == "grow" { print $2 }')
  [ -n "$v" ] || v=0
  note "memory snapshot $i: grow $v"
  [ "$v" -ge "$prev" ] || fail "snapshot $i: the heap went down ($v < $prev)"
  prev=$v
done
[ "$prev" -gt 0 ] || fail "no snapshot saw grow's memory"
echo "ok: $n memory snapshots on the heap's schedule"
