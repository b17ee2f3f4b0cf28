#!/bin/sh
# CPROF_HEAP_PROFILE_EVERY writes numbered snapshots from a profiler thread
# while the program runs (the series a memory-over-time view needs): each
# loads in go tool pprof, the in-use bytes of a growing site increase, no
# temporary file is left behind, and the final profile is written at exit.
# A forked child (a worker of a preforking server) writes its own series
# (%p), with its own allocations in it.
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

# --- a forked worker ----------------------------------------------------------------------
cat > "$T/worker.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
__attribute__((noinline)) void work(void) { for (int i = 0; i < 100; i++) E(malloc(10000)); }
int main(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 60; i++) { work(); nanosleep(&ts, NULL); }
    return 0;
  }
  printf("%d\n", (int)pid);
  int st;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
C
cc_prog "$T/worker" "$T/worker.c"
mkdir "$T/w"
child=$(CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/w/heap.%p.pb.gz" CPROF_HEAP_PROFILE_EVERY=0.2 LD_PRELOAD="$LIB" "$T/worker") ||
  fail "worker program failed"
n=$(ls "$T/w" | grep -c "^heap\.$child\.[0-9]*\.pb\.gz\$")
[ "$n" -ge 3 ] || fail "forked child: expected >= 3 snapshots of its own, got $n: $(ls "$T/w")"
last=$(ls "$T/w" | sed -n "s/^heap\.$child\.\([0-9]*\)\.pb\.gz\$/\1/p" | sort -n | tail -n1)
v=$(pprof_flat inuse_space "$T/w/heap.$child.$last.pb.gz" | awk '$1=="work" {print $2}')
[ "${v:-0}" -gt 0 ] || fail "forked child: its last snapshot has no work()"
note "forked child $child: $n snapshots, the last with work() inuse $v"
exit 0
