#!/bin/sh
# The legacy text form (debug=1, Go's /debug/pprof/heap?debug=1) written by
# cprof_heap_profile_write_fd(fd, 1): go tool pprof parses it and, at rate
# 1 (no unbiasing), gives the same per-function numbers as the protobuf
# profile of the same moment. Its memory map section lets pprof find the
# binary without being told.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cat > "$T/text.c" <<'C'
#include <cprof.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
__attribute__((noinline)) void keep_some(void) { for (int i = 0; i < 300; i++) E(malloc(4096)); }
__attribute__((noinline)) void free_some(void) { for (int i = 0; i < 500; i++) free(E(malloc(100))); }
int main(int argc, char **argv) {
  (void)argc;
  keep_some(); free_some();
  /* Nothing allocates between the two writes: they describe one state. */
  int t = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int p = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (cprof_heap_profile_write_fd(t, 1) || cprof_heap_profile_write_fd(p, 0)) return 1;
  cprof_stats_t st;
  if (cprof_stats(&st) || st.mallocs < 800 || st.frees < 500 || st.live_bytes < 300 * 4096) return 2;
  printf("ok %llu mallocs\n", (unsigned long long)st.mallocs);
  return close(t) || close(p);
}
C
cc_prog "$T/text" "$T/text.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
CPROF_RATE=1 "$T/text" "$T/h.txt" "$T/h.pb.gz" > /dev/null || fail "program failed"
head -n1 "$T/h.txt" | grep -Eq '^heap profile: [0-9]+: [0-9]+ \[[0-9]+: [0-9]+\] @ heap/2$' ||
  fail "bad header: $(head -n1 "$T/h.txt")"
grep -q '^# cprof_stats_t$' "$T/h.txt" || fail "no statistics block"
grep -q '^# mallocs = [0-9]' "$T/h.txt" || fail "no mallocs line"
for idx in alloc_objects alloc_space inuse_objects inuse_space; do
  pprof_flat $idx "$T/h.pb.gz" | grep -E '^(keep_some|free_some) ' | sort > "$T/proto.$idx"
  pprof_flat $idx "$T/h.txt" | grep -E '^(keep_some|free_some) ' | sort > "$T/text.$idx"
  pprof_flat $idx "$T/h.txt" "$T/text" | grep -E '^(keep_some|free_some) ' | sort > "$T/textbin.$idx"
  [ -s "$T/proto.$idx" ] || fail "$idx: nothing in the protobuf profile"
  cmp -s "$T/proto.$idx" "$T/text.$idx" || { cat "$T/proto.$idx" "$T/text.$idx"; fail "$idx: text form differs"; }
  cmp -s "$T/proto.$idx" "$T/textbin.$idx" || fail "$idx: text form with binary differs"
done
grep -q '^keep_some 1228800$' "$T/proto.inuse_space" || fail "keep_some inuse_space"

# Records sampled at several rates (CPROF_RATE=1, then cprof_set_rate): the
# text, read by pprof, gives each its own estimate, as the protobuf does
# (the text's one header rate unbiased all of them once: 32768 times the
# bytes for the blocks kept at rate 1).
cat > "$T/rates.c" <<'C'
#include <cprof.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
__attribute__((noinline)) void at_rate_1(void) { for (int i = 0; i < 1000; i++) E(malloc(16)); }
__attribute__((noinline)) void at_rate_512k(void) { for (int i = 0; i < 40000; i++) E(malloc(64)); }
__attribute__((noinline)) void big_512k(void) { for (int i = 0; i < 4; i++) E(malloc(1 << 20)); }
int main(int argc, char **argv) {
  (void)argc;
  at_rate_1();
  if (cprof_set_rate(524288)) return 1;
  at_rate_512k(); big_512k();
  int t = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int p = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (cprof_heap_profile_write_fd(t, 1) || cprof_heap_profile_write_fd(p, 0)) return 1;
  printf("ok\n");
  return close(t) || close(p);
}
C
cc_prog "$T/rates" "$T/rates.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
CPROF_RATE=1 "$T/rates" "$T/r.txt" "$T/r.pb.gz" > "$T/r.out" || fail "rates: program failed"
[ "$(cat "$T/r.out")" = ok ] || fail "rates: output '$(cat "$T/r.out")'"
for idx in alloc_objects alloc_space inuse_objects inuse_space; do
  pprof_flat $idx "$T/r.pb.gz" "$T/rates" | grep -E '^(at_rate_1|at_rate_512k|big_512k) ' | sort > "$T/rproto.$idx"
  pprof_flat $idx "$T/r.txt" "$T/rates" | grep -E '^(at_rate_1|at_rate_512k|big_512k) ' | sort > "$T/rtext.$idx"
  cmp -s "$T/rproto.$idx" "$T/rtext.$idx" || { cat "$T/rproto.$idx" "$T/rtext.$idx"; fail "rates: $idx: text form differs"; }
done
grep -q '^at_rate_1 16000$' "$T/rproto.inuse_space" || { cat "$T/rproto.inuse_space"; fail "rates: at_rate_1 inuse_space"; }
note "several rates: the text gives each record its estimate, as the protobuf"
exit 0
