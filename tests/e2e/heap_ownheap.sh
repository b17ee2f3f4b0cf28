#!/bin/sh
# cprof's own work never touches the program's allocator: writing the
# protobuf and text profiles (and reading its stats) leaves glibc's heap
# exactly as it was (mallinfo2: arena size, bytes in use, free chunks, mmapped
# blocks) and counts no allocation of the program; and a program that never
# calls malloc still gets its profile at exit.
# timeout: 60
. "$(dirname "$0")/../lib.sh"

cat > "$T/own.c" <<'C'
#include <cprof.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
__attribute__((noinline)) static void churn(int i) { E(malloc(100 + (i % 50) * 37)); }
int main(void) {
  for (int i = 0; i < 20000; i++) churn(i);          /* many stacks' worth of samples */
  for (int i = 0; i < 2000; i++) free(E(malloc(5000))); /* freed chunks to consolidate */
  int fd = open("/dev/null", O_WRONLY);
  cprof_stats_t s0, s1;
  cprof_stats(&s0);
  struct mallinfo2 a = mallinfo2();
  for (int r = 0; r < 3; r++)
    if (cprof_heap_profile_write_fd(fd, 0) || cprof_heap_profile_write_fd(fd, 1)) return 1;
  struct mallinfo2 b = mallinfo2();
  cprof_stats(&s1);
  if (memcmp(&a, &b, sizeof(a)) != 0) {
    fprintf(stderr, "glibc heap changed: arena %zu->%zu inuse %zu->%zu free chunks %zu->%zu\n",
            a.arena, b.arena, a.uordblks, b.uordblks, a.ordblks, b.ordblks);
    return 2;
  }
  if (s1.mallocs != s0.mallocs || s1.frees != s0.frees) { fprintf(stderr, "counted\n"); return 3; }
  if (s1.profiler_bytes <= s1.stack_buckets) return 4;
  printf("ok\n");
  return 0;
}
C
cc_prog "$T/own" "$T/own.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
CPROF_RATE=1 "$T/own" || fail "the profile writer touched the program's heap"

# The smallest memory limit still leaves room to write the profile: the
# writer's working memory is not the tables'.
CPROF_RATE=1 CPROF_MEMORY_LIMIT=4M CPROF_HEAP_PROFILE="$T/small.pb.gz" LD_PRELOAD="$LIB" "$T/own" >/dev/null ||
  fail "program failed at CPROF_MEMORY_LIMIT=4M"
go tool pprof -raw "$T/small.pb.gz" >/dev/null 2>&1 || fail "no loadable profile at CPROF_MEMORY_LIMIT=4M"

# No malloc at all in the program: the writer must still manage.
CPROF_HEAP_PROFILE="$T/true.pb.gz" LD_PRELOAD="$LIB" /bin/true || fail "/bin/true failed"
go tool pprof -raw "$T/true.pb.gz" >/dev/null 2>&1 || fail "no loadable profile for /bin/true"
exit 0
