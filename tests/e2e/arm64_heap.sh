#!/bin/sh
# arm64: heap profiles of programs cross-compiled for aarch64, run under
# qemu-aarch64 with build/arm64/libcprof.so preloaded. At CPROF_RATE=1 the
# profile is exact (tests/progs/heapknown.c's truth), built with frame
# pointers and without, through the cfi walk and the frame-pointer walk,
# read by go tool pprof and by the host's cprof, with and without the
# arm64 binary given, and by the arm64 build of cprof under qemu; cprof_stats' counters are exact with glibc behind
# cprof (the hooks read usable sizes from aarch64 glibc's chunk headers:
# tests/progs/counters.c); at the default rate each site's estimate is
# within four standard errors (tests/progs/heapsampled.c).
# timeout: 300
. "$(dirname "$0")/arm64_common.inc"

acc_prog "$T/known" "$PROGS/heapknown.c" -fno-omit-frame-pointer
acc_prog "$T/known_nofp" "$PROGS/heapknown.c" -O2 -fomit-frame-pointer

run() { # NAME PROGRAM [VAR=VALUE...]
  name=$1; prog=$2; shift 2
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" "$@" qemu-aarch64 -L / -E LD_PRELOAD="$A64_LIB" \
    "$prog" > "$T/$name.truth" 2> "$T/$name.err" || { cat "$T/$name.err"; fail "$name: program failed"; }
  [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: stderr not empty"; }
  grep -c '^TRUTH ' "$T/$name.truth" | grep -qx 9 || { cat "$T/$name.truth"; fail "$name: the program's own output"; }
  [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
  check_truth "$T/$name.truth" "$T/$name.pb.gz"
  check_truth "$T/$name.truth" "$T/$name.pb.gz" "$prog"
  PPROF="$BUILD/cprof" check_truth "$T/$name.truth" "$T/$name.pb.gz"
  PPROF="qemu-aarch64 -L / $A64/cprof" check_truth "$T/$name.truth" "$T/$name.pb.gz" "$prog"
  note "$name: exact (go tool pprof, cprof, the arm64 cprof)"
}
run cfi "$T/known"
run fp "$T/known" CPROF_UNWIND=fp
run nofp "$T/known_nofp"
go tool pprof -top -nodefraction=0 "$T/cfi.pb.gz" 2>/dev/null |
  grep -E ' (malloc|calloc|realloc|heap_record_alloc|unwind_capture)$' && fail "allocator or profiler frames in the profile"

acc_prog "$T/counters" "$PROGS/counters.c" -ldl
for rate in 1 524288; do
  out=$(CPROF_RATE=$rate arun "$T/counters" 2>&1)
  [ "$out" = ok ] || fail "counters, rate $rate: $out"
  note "counters, rate $rate: exact"
done

acc_prog "$T/sampled" "$PROGS/heapsampled.c"
for seed in 1 2 3; do
  CPROF_SEED=$seed CPROF_HEAP_PROFILE="$T/s$seed.pb.gz" arun "$T/sampled" > "$T/sites" ||
    fail "sampled: program failed"
  grep -q '^SITE ' "$T/sites" || fail "sampled: no SITE lines from the program"
  check_sampled "$T/sites" "$T/s$seed.pb.gz" $seed "$T/sampled"
done
note "sampled: within 4 standard errors, 3 seeds"
exit 0
