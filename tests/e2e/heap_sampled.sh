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
  pprof_flat alloc_space "$T/s$seed.pb.gz" > "$T/alloc"
  pprof_flat inuse_space "$T/s$seed.pb.gz" > "$T/inuse"
  pprof_flat inuse_objects "$T/s$seed.pb.gz" > "$T/inuse_obj"
  awk -v R=524288 -v seed=$seed '
    FILENAME ~ /alloc$/ { alloc[$1]=$2; next }
    FILENAME ~ /inuse$/ { inuse[$1]=$2; next }
    FILENAME ~ /inuse_obj$/ { iobj[$1]=$2; next }
    $1 == "SITE" {
      fn=$2; n=$3; s=$4; kept=$5; p=1-exp(-s/R)
      if (s >= 40*R) {   # exact: one object, its size
        if (inuse[fn] != s*kept || iobj[fn] != kept) { printf "seed %d %s: inuse %s B / %s objects, want exactly %d / %d\n", seed, fn, inuse[fn], iobj[fn], s*kept, kept; bad=1 }
        next
      }
      split("alloc inuse", kinds, " ")
      for (k=1; k<=2; k++) {
        cnt = (k==1) ? n : kept; got = (k==1) ? alloc[fn] : inuse[fn]; truth = cnt*s
        if (cnt == 0) { if (got+0 != 0) { printf "seed %d %s %s: %s, want 0\n", seed, fn, kinds[k], got; bad=1 }; continue }
        sd = s*sqrt(cnt*(1-p)/p); dev = (got - truth)/sd
        printf "# seed %d %-12s %-5s truth %10d got %10d (%+.2f sd)\n", seed, fn, kinds[k], truth, got, dev
        if (dev > 4 || dev < -4) { printf "seed %d %s %s: %s is %.1f sd from %d\n", seed, fn, kinds[k], got, dev, truth; bad=1 }
      }
    }
    END { exit bad }' "$T/alloc" "$T/inuse" "$T/inuse_obj" "$T/sites" || fail "estimate outside 4 standard errors (seed $seed)"
done
exit 0
