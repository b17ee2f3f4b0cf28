#!/bin/sh
# CPROF_DUMP_CGROUP=0.5: a program in a cgroup v2 child with memory.max 64M
# that grows its heap (touched) until the kernel kills it gets a dump when
# memory.current reaches half of memory.max, before it is killed: a heap
# dump holding its growing stack, announced with the cgroup's numbers.
# Needs root and a cgroup v2 whose memory controller this test may enable
# for a child it makes; otherwise it says why it skips. (The cgroup files'
# reading and the crossing rule are also tests/unit/test_cgroupmem.c's.)
# timeout: 120
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip "making a cgroup needs root"
fs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)
[ "$fs" = cgroup2fs ] || skip "/sys/fs/cgroup is ${fs:-absent}, not cgroup v2 (a cgroup v1 machine)"
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
parent=/sys/fs/cgroup${own%/}
grep -qw memory "$parent/cgroup.controllers" 2>/dev/null ||
  skip "the memory controller is not delegated to $parent"
child=$parent/cprof-test-$$
mkdir "$child" 2>/dev/null || skip "cannot make a child cgroup in $parent"
trap 'rmdir "$child" 2>/dev/null; rm -rf "$T"' EXIT
if [ ! -e "$child/memory.max" ]; then
  # A cgroup v2 with processes of its own cannot give controllers to children.
  echo +memory > "$parent/cgroup.subtree_control" 2>/dev/null && [ -e "$child/memory.max" ] ||
    skip "the memory controller cannot be enabled for children of $parent (it has processes)"
fi
echo 64M > "$child/memory.max" || fail "cannot set memory.max"
[ -e "$child/memory.swap.max" ] && echo 0 > "$child/memory.swap.max"

cat > "$T/grow.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void *volatile kept[256];
__attribute__((noinline)) static void *grow_touched(void) {
  void *p = malloc(2 << 20);
  if (p) memset(p, 1, 2 << 20);
  return p;
}
int main(void) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  for (int i = 0; i < 256; i++) {
    kept[i] = grow_touched();
    nanosleep(&ts, NULL);
  }
  printf("not killed\n");
  return 0;
}
C
cc_prog "$T/grow" "$T/grow.c"
mkdir "$T/d"
sh -c "echo \$\$ > \"$child/cgroup.procs\" && exec env LD_PRELOAD=\"$LIB\" CPROF_RATE=1 \
  CPROF_DUMP_CGROUP=0.5 CPROF_HEAP_PROFILE=\"$T/d/heap.pb.gz\" \"$T/grow\"" > "$T/out" 2> "$T/err"
rc=$?
note "exit status $rc; $(cat "$T/err")"
[ $rc = 137 ] || fail "expected the kernel to kill the program (137), got $rc: $(cat "$T/out" "$T/err")"
grep -q '^cprof: dump [0-9]* (cgroup memory.current [0-9]* of memory.max 67108864)' "$T/err" ||
  fail "no announcement of the cgroup's dump: $(cat "$T/err")"
f=$(ls "$T/d" | grep '^heap\.[0-9]*\.pb\.gz$' | head -n1)
[ -n "$f" ] || fail "no dump: $(ls "$T/d")"
v=$(pprof_flat inuse_space "$T/d/$f" "$T/grow" | awk '$1=="grow_touched" {print $2}')
# Half of 64 MiB reached, less what the program and cprof held besides.
[ "${v:-0}" -ge $((16 << 20)) ] || fail "the dump holds grow_touched ${v:-0} bytes"
note "dump $f: grow_touched $v bytes in use"
exit 0
