#!/bin/sh
# timeout: 240
# cprof vs go tool pprof with -tagroot / -tagleaf (label values as pseudo
# frames): Go heap profiles (the numeric "bytes" label, scaled to -unit), a
# Go CPU profile (goroutine labels) and profgen profiles (string and numeric
# labels, several per key, mixed units). stdout and stderr (the "matched no
# samples" warnings) must both be identical.
. "$(dirname "$0")/tool_common.inc"
GEN=$CPROF_BUILD/profgen
[ -x "$GEN" ] || { echo "skip: no $GEN (make tests builds it)"; exit 77; }
build_go heapgo
build_go cpugo
(cd "$T" && ./heapgo h.pb.gz 1 && ./cpugo c.pb.gz 300) || { echo "FAIL: Go profile writers"; exit 1; }
"$GEN" -seed 5 -samples 300 -locations 120 -functions 60 -depth 1-14 -labels 3 -inline 30 \
  -o "$T/g.pb.gz" || { echo "FAIL: profgen"; exit 1; }

# cmp_both PROFILE FLAGS...: stdout and stderr identical. profgen's keys mix
# units, and pprof lists those conflicts in Go's random map order, so
# stderr is compared sorted.
cmp_both() {
  prof=$1; shift
  checks=$((checks + 1))
  "$CPROF" "$@" "$prof" >"$T/c.out" 2>"$T/c.err"
  go tool pprof "$@" "$prof" >"$T/g.out" 2>"$T/g.err"
  sort "$T/c.err" >"$T/c.serr"
  sort "$T/g.err" >"$T/g.serr"
  if ! cmp -s "$T/c.out" "$T/g.out" || ! cmp -s "$T/c.serr" "$T/g.serr"; then
    echo "FAIL: cprof $* $(basename "$prof") differs from go tool pprof:"
    diff "$T/c.out" "$T/g.out" | head -20 | sed 's/^/    /'
    diff "$T/c.serr" "$T/g.serr" | head -10 | sed 's/^/    stderr: /'
    fails=$((fails + 1))
  fi
}

for f in "-top -tagroot=bytes" "-top -tagleaf=bytes" "-traces -tagroot=bytes" \
         "-traces -tagleaf=bytes -unit=kb" "-tree -tagroot=bytes -unit=mb" \
         "-top -tagroot=bytes -tagleaf=bytes" "-dot -tagleaf=bytes" "-dot -tagroot=bytes" \
         "-top -tagroot=nothere" "-traces -tagleaf=nothere" "-top -tagroot=bytes -tagleaf=nothere" \
         "-top -tagroot=, -tagleaf=,bytes," "-top -tagroot=bytes -focus=kB" \
         "-top -tagleaf=bytes -sample_index=alloc_space -cum" "-raw -tagroot=bytes"; do
  # shellcheck disable=SC2086
  cmp_both "$T/h.pb.gz" $f
done
for f in "-top -tagroot=phase" "-traces -tagleaf=phase" "-tree -tagroot=phase -tagleaf=phase" \
         "-dot -tagroot=phase" "-top -tagroot=phase,nothere" "-peek hotLoop -tagroot=phase"; do
  # shellcheck disable=SC2086
  cmp_both "$T/c.pb.gz" $f
done
for f in "-top -tagroot=thread" "-traces -tagleaf=handler" "-traces -tagroot=thread,bytes -tagleaf=span,request" \
         "-tree -tagroot=request -tagleaf=bytes" "-dot -tagleaf=bytes,thread" "-dot -tagroot=span,handler" \
         "-traces -tagroot=handler -unit=ms" "-top -tagroot=span -unit=kb" "-top -tagleaf=nothere,also" \
         "-top -tagroot=thread -hide=thread" "-top -tagroot=thread -show_from=thread-3" \
         "-traces -tagroot=request -tagfocus=request=request-1"; do
  # shellcheck disable=SC2086
  cmp_both "$T/g.pb.gz" $f
done
finish
