#!/bin/sh
# A stack that allocates several sizes is estimated without bias at the
# default rate: each sampled object is scaled by its own size's probability
# (Go's bucket per stack and size), not by the stack's average size. With
# one bucket per stack, tests/progs/heapsizes.c's site_onestack (1,000,000
# objects of 16 bytes and 8 of 64 MiB from one call) came out at ~40
# objects, and site_mixed (210,300 objects of 32, 1024 and 64 KiB) at ~1000.
# Every profile that scales is checked: heap (alloc, inuse, temporaries),
# its debug=1 text read by go tool pprof, peak and leaks.
#
# Over N seeds, the mean estimate of each (profile, function, type) must lie
# within 4.5 standard errors of the truth: a size class of n objects of s
# bytes sampled with probability p = 1 - exp(-s/R) adds n(1-p)/p to one
# run's variance of the object count and n s^2 (1-p)/p to that of the bytes;
# the mean's variance is the sum over classes divided by N. A class of
# 64 MiB (p = 1 in double precision) is exact. Fixed seeds (CPROF_SEED) make
# each run reproducible; 4.5 sd over ~20 checks leaves a chance near 1e-4
# that a change of the random stream alone fails it.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

R=524288
N=10
cc_prog "$T/sizes" "$PROGS/heapsizes.c" -ldl
: > "$T/got"
seed=1
while [ $seed -le $N ]; do
  mkdir "$T/s$seed"
  CPROF_SEED=$seed LD_PRELOAD="$LIB" "$T/sizes" "$T/s$seed" > "$T/out" 2> "$T/err" ||
    { cat "$T/err"; fail "program failed (seed $seed)"; }
  [ "$(tail -n1 "$T/out")" = ok ] || fail "program output: $(tail -n1 "$T/out")"
  grep '^SIZE ' "$T/out" > "$T/sizes.now"
  [ $seed -eq 1 ] && cp "$T/sizes.now" "$T/sizes.txt"
  cmp -s "$T/sizes.txt" "$T/sizes.now" || fail "the program's allocations differ between runs"
  for check in heap.pb.gz:alloc_objects heap.pb.gz:alloc_space heap.pb.gz:inuse_objects \
               heap.pb.gz:inuse_space heap.pb.gz:temp_objects heap.pb.gz:temp_space \
               heap.txt:alloc_objects heap.txt:alloc_space heap.txt:inuse_objects \
               heap.txt:inuse_space peak.pb.gz:inuse_objects peak.pb.gz:inuse_space \
               leak.pb.gz:inuse_objects leak.pb.gz:inuse_space; do
    file=${check%%:*}; idx=${check#*:}
    [ -s "$T/s$seed/$file" ] || fail "no $file (seed $seed)"
    pprof_flat "$idx" "$T/s$seed/$file" "$T/sizes" |
      awk -v f="$file" -v i="$idx" '$1 ~ /^site_/ { print f, i, $1, $2 }' >> "$T/got"
  done
  seed=$((seed + 1))
done

awk -v R=$R -v N=$N '
  FILENAME ~ /got$/ { sum[$1 " " $2 " " $3] += $4; next }
  $1 == "SIZE" {   # SIZE fn objects size live temporaries leaked
    fn = $2; s = $4; p = 1 - exp(-s / R); q = (1 - p) / p
    fns[fn] = 1
    cnt["alloc", fn] += $3; cnt["inuse", fn] += $5; cnt["temp", fn] += $6; cnt["leak", fn] += $7
    vo["alloc", fn] += $3 * q; vo["inuse", fn] += $5 * q; vo["temp", fn] += $6 * q; vo["leak", fn] += $7 * q
    by["alloc", fn] += $3 * s; by["inuse", fn] += $5 * s; by["temp", fn] += $6 * s; by["leak", fn] += $7 * s
    vb["alloc", fn] += $3 * s * s * q; vb["inuse", fn] += $5 * s * s * q
    vb["temp", fn] += $6 * s * s * q; vb["leak", fn] += $7 * s * s * q
  }
  END {
    n = split("heap.pb.gz:alloc heap.pb.gz:inuse heap.pb.gz:temp heap.txt:alloc heap.txt:inuse " \
              "peak.pb.gz:inuse leak.pb.gz:leak", rows, " ")
    for (r = 1; r <= n; r++) {
      split(rows[r], fk, ":"); file = fk[1]; kind = fk[2]
      type = (kind == "leak") ? "inuse" : kind
      for (fn in fns) for (b = 0; b < 2; b++) {
        idx = type (b ? "_space" : "_objects")
        truth = b ? by[kind, fn] : cnt[kind, fn]
        var = b ? vb[kind, fn] : vo[kind, fn]
        mean = sum[file " " idx " " fn] / N
        sd = sqrt(var / N)
        dev = sd > 0 ? (mean - truth) / sd : (mean == truth ? 0 : 99)
        printf "# %-10s %-13s %-13s truth %11d mean %13.1f sd %10.1f (%+.2f sd)\n", file, idx, fn, truth, mean, sd, dev
        if (dev > 4.5 || dev < -4.5) {
          printf "%s %s %s: mean of %d runs %.1f, truth %d: %.1f sd off\n", file, idx, fn, N, mean, truth, dev
          bad = 1
        }
      }
    }
    exit bad
  }' "$T/got" "$T/sizes.txt" || fail "estimates outside 4.5 standard errors"
exit 0
