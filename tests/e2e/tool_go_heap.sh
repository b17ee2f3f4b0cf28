#!/bin/sh
# timeout: 240
# cprof vs go tool pprof on Go heap profiles written by tests/progs/heapgo
# (rate 1: exact numbers; rate 512 KiB: unbiased estimates): every report,
# granularity, sample index and filter, compared byte for byte.
. "$(dirname "$0")/tool_common.inc"
build_go heapgo
(cd "$T" && ./heapgo h1.pb.gz 1 && ./heapgo h2.pb.gz 524288) || { echo "FAIL: heapgo"; exit 1; }

for p in "$T/h1.pb.gz" "$T/h2.pb.gz"; do
  for f in "-top" "-text" "-top -cum" "-traces" "-tree" "-peek main\." "-peek alloc" "-raw" \
           "-top -functions" "-top -lines" "-top -files" "-top -addresses" "-top -filefunctions" \
           "-traces -lines" "-tree -lines" "-top -noinlines" "-top -lines -noinlines" \
           "-top -sample_index=0" "-top -sample_index=alloc_space" "-top -sample_index=inuse_objects" \
           "-top -inuse_space" "-top -inuse_objects" "-top -alloc_space" "-top -alloc_objects" \
           "-top -mean" "-top -alloc_space -mean" "-tags" "-tags -alloc_objects" \
           "-top -focus=Medium" "-top -ignore=Medium|Large" "-top -hide=main\.main" \
           "-top -show=^main" "-top -show_from=allocNested" "-top -prune_from=nestedHelper" \
           "-top -focus=alloc -ignore=Small -hide=runtime" "-traces -focus=Nested" \
           "-top -tagfocus=64kb" "-top -tagfocus=bytes=1kb:128kb" "-top -tagignore=1mb:" \
           "-top -nodecount=2" "-top -nodecount=3 -cum" "-tree -nodecount=3" \
           "-top -nodefraction=0.1" "-top -nodefraction=0 -edgefraction=0" "-tree -edgefraction=0.2" \
           "-top -unit=kb" "-top -unit=mb -alloc_space" "-top -divide_by=1024" "-top -unit=auto" \
           "-top -relative_percentages -focus=Medium" "-top -trim=false" "-top -drop_negative" \
           "-list allocMedium" "-list nestedHelper" "-list ^main\\.main$" "-comments" \
           "-top -granularity=lines"; do
    # shellcheck disable=SC2086
    cmp_tools "$p" $f
  done
done
# -base / -diff_base: the rate-1 profile against the sampled one (and itself).
cmp_tools "$T/h1.pb.gz" -top -base "$T/h2.pb.gz"
cmp_tools "$T/h1.pb.gz" -top -cum -diff_base "$T/h2.pb.gz"
cmp_tools "$T/h1.pb.gz" -top -base "$T/h1.pb.gz"
cmp_tools "$T/h1.pb.gz" -traces -diff_base "$T/h2.pb.gz"
cmp_tools "$T/h1.pb.gz" -top -drop_negative -base "$T/h2.pb.gz"
cmp_tools "$T/h1.pb.gz" -top -normalize -base "$T/h2.pb.gz"
# Two sources merged.
checks=$((checks + 1))
"$CPROF" -top "$T/h1.pb.gz" "$T/h2.pb.gz" >"$T/c.out" 2>&1
go tool pprof -top "$T/h1.pb.gz" "$T/h2.pb.gz" >"$T/g.out" 2>&1
cmp -s "$T/c.out" "$T/g.out" || { echo "FAIL: two sources"; diff "$T/c.out" "$T/g.out" | head; fails=$((fails+1)); }
finish
