#!/bin/sh
# CPROF_HEAP_PROFILE_EVERY writes numbered snapshots from a profiler thread
# while the program runs (the series a memory-over-time view needs): each
# loads in go tool pprof, the in-use bytes of a growing site increase, no
# temporary file is left behind, and the final profile is written at exit.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cat > "$T/grow.c" <<'C'
#include <stdlib.h>
#include <time.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
__attribute__((noinline)) void grow(void) { for (int i = 0; i < 100; i++) E(malloc(10000)); }
int main(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  for (int i = 0; i < 60; i++) { grow(); nanosleep(&ts, NULL); }
  return 0;
}
C
cc_prog "$T/grow" "$T/grow.c"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/heap.pb.gz" CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/grow" ||
  fail "program failed"
[ -s "$T/heap.pb.gz" ] || fail "no final profile"
ls "$T" | grep -q tmp && fail "temporary files left: $(ls "$T")"
n=$(ls "$T" | grep -c '^heap\.[0-9]*\.pb\.gz$')
[ "$n" -ge 3 ] || fail "expected >= 3 snapshots, got $n: $(ls "$T")"
prev=-1
for i in $(ls "$T" | sed -n 's/^heap\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n); do
  v=$(pprof_flat inuse_space "$T/heap.$i.pb.gz" | awk '$1=="grow" {print $2}')
  [ -n "$v" ] || v=0
  note "snapshot $i: grow inuse $v"
  [ "$v" -ge "$prev" ] || fail "snapshot $i: inuse went down ($v < $prev)"
  prev=$v
done
[ "$(pprof_flat inuse_space "$T/heap.pb.gz" | awk '$1=="grow" {print $2}')" = 60000000 ] || fail "final profile"
exit 0
