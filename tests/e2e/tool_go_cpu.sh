#!/bin/sh
# timeout: 180
# cprof vs go tool pprof on a Go CPU profile with goroutine labels
# (tests/progs/cpugo): reports, Duration header, tags and tag filters.
. "$(dirname "$0")/tool_common.inc"
build_go cpugo
(cd "$T" && ./cpugo c.pb.gz 500) || { echo "FAIL: cpugo"; exit 1; }
p=$T/c.pb.gz
for f in "-top" "-top -cum" "-traces" "-tree" "-peek hotLoop" "-raw" "-tags" \
         "-top -sample_index=samples" "-top -sample_index=0" "-top -lines" "-top -addresses" \
         "-top -tagfocus=phase=a" "-top -tagfocus=a" "-top -tagignore=phase:b" "-traces -tagfocus=phase=b" \
         "-tags -tagfocus=phase=a" "-top -tagshow=phase" "-top -taghide=phase" "-top -unit=s" \
         "-top -unit=ms -cum" "-top -focus=hotLoopA" "-top -show_from=main.work" \
         "-top -nodecount=2" "-tree -nodecount=2" "-list hotLoopB" "-top -mean" "-top -files"; do
  # shellcheck disable=SC2086
  cmp_tools "$p" $f
done
finish
