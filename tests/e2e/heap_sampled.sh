#!/bin/sh
# At the default rate (512 KiB) the profile is an estimate: each site's
# alloc_space and inuse_space must lie within four standard errors of the
# truth, for several seeds, and an object far larger than the rate is
# reported at its exact size. With n objects of size s sampled with
# probability p = 1 - exp(-s/R), the estimate's sd is s*sqrt(n(1-p)/p)
# (about truth/sqrt(truth/R) for s << R). CPROF_SEED makes each run
# reproducible, so this test cannot fail by chance from one run to the next.
# timeout: 240
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/sampled" "$PROGS/heapsampled.c"
for seed in 1 2 3 4 5; do
  CPROF_SEED=$seed CPROF_HEAP_PROFILE="$T/s$seed.pb.gz" LD_PRELOAD="$LIB" "$T/sampled" > "$T/sites" ||
    fail "program failed"
  check_sampled "$T/sites" "$T/s$seed.pb.gz" $seed
done
exit 0
