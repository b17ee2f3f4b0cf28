#!/bin/sh
# timeout: 240
# cprof vs go tool pprof on random profiles from tests/gen/profgen (inline
# frames, labels, several mappings, sparse ids): every report and
# granularity. Mappings of generated profiles name no real files, so both
# tools warn about symbolization on stderr; only stdout is compared.
. "$(dirname "$0")/tool_common.inc"
GEN=$CPROF_BUILD/profgen
[ -x "$GEN" ] || { echo "skip: no $GEN (make tests builds it)"; exit 77; }
for seed in 1 2 3 7; do
  extra=""
  [ "$seed" = 3 ] && extra="-sparse"
  [ "$seed" = 7 ] && extra="-zeros"
  # shellcheck disable=SC2086
  "$GEN" -seed $seed -samples 300 -locations 120 -functions 60 -depth 1-14 -labels 2 -inline 30 $extra \
    -o "$T/g$seed.pb.gz" || { echo "FAIL: profgen"; exit 1; }
  for f in "-top" "-top -cum" "-traces" "-tree" "-raw" "-tags" "-top -lines" "-top -files" \
           "-top -addresses" "-top -filefunctions" "-top -noinlines" "-top -sample_index=0" \
           "-top -sample_index=1 -mean" "-top -nodecount=7" "-tree -nodecount=5" \
           "-top -nodefraction=0.02 -edgefraction=0.01" "-peek ." "-top -focus=1 -ignore=2" \
           "-top -hide=3" "-top -show=[13]" "-top -show_from=2" "-top -prune_from=4"; do
    # shellcheck disable=SC2086
    cmp_tools "$T/g$seed.pb.gz" $f
  done
done
finish
