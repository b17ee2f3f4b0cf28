#!/bin/sh
# CPROF_DUMP_OOM=1: under ulimit -v, a program allocating until malloc
# fails gets NULL as without cprof (and again at a second try), and before
# the first NULL comes back cprof has written the profiles, once: heap and
# peak dumps whose stacks hold exactly what the program says it held (rate 1),
# announced in one stderr line. The program's output and exit code are
# those of a plain run.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/oom" "$PROGS/dump_oom.c"
KIB=400000
sh -c "ulimit -v $KIB && exec \"\$0\"" "$T/oom" > "$T/plain.out" ||
  skip "the program does not run under ulimit -v $KIB"
mkdir "$T/d"
sh -c "ulimit -v $KIB && exec env LD_PRELOAD=\"$LIB\" CPROF_RATE=1 CPROF_DUMP_OOM=1 \
    CPROF_HEAP_PROFILE=\"$T/d/heap.pb.gz\" CPROF_PEAK_PROFILE=\"$T/d/peak.pb.gz\" \"\$0\"" "$T/oom" > "$T/out" 2> "$T/err" ||
  fail "exit status $?: $(cat "$T/out" "$T/err")"
# The amounts differ (cprof's own memory counts against the limit), the
# lines do not.
sed 's/[0-9][0-9]*/N/g' "$T/plain.out" > "$T/plain.shape"
sed 's/[0-9][0-9]*/N/g' "$T/out" > "$T/shape"
cmp -s "$T/plain.shape" "$T/shape" || fail "output: $(cat "$T/out"), plain: $(cat "$T/plain.out")"
grep -qx 'NULL again' "$T/out" || fail "the second 1 MiB did not fail: $(cat "$T/out")"
big=$(sed -n 's/^NULL after \([0-9]*\) MiB in \([0-9]*\) small blocks$/\1/p' "$T/out")
small=$(sed -n 's/^NULL after \([0-9]*\) MiB in \([0-9]*\) small blocks$/\2/p' "$T/out")
[ "${big:-0}" -gt 50 ] || fail "the program held only ${big:-0} MiB: $(cat "$T/out")"
files=$(ls "$T/d" | grep '^heap\.[0-9]*\.pb\.gz$')
[ "$(echo "$files" | wc -w)" = 1 ] || fail "not one dump: $(ls "$T/d"); $(cat "$T/err")"
[ "$(grep -c '^cprof: dump [0-9]* (out of memory): heap .*, peak ' "$T/err")" = 1 ] || fail "stderr: $(cat "$T/err")"
peak=$(ls "$T/d" | grep '^peak\.[0-9]*\.pb\.gz$')
[ "$(echo "$peak" | wc -w)" = 1 ] || fail "not one peak dump: $(ls "$T/d")"
pk=$(pprof_flat inuse_space "$T/d/$peak" "$T/oom" | awk '$1=="eat_memory" {print $2}')
[ "$pk" = $((big * 1048576)) ] || fail "peak dump: eat_memory ${pk:-none}, $((big * 1048576)) held"
pprof_flat inuse_space "$T/d/$files" "$T/oom" > "$T/flat"
eat=$(awk '$1=="eat_memory" {print $2}' "$T/flat")
sm=$(awk '$1=="eat_small" {print $2}' "$T/flat")
note "NULL after $big MiB + $small x 100 KiB; the dump: eat_memory $eat, eat_small $sm"
[ "$eat" = $((big * 1048576)) ] || fail "eat_memory: ${eat:-none} in the dump, $((big * 1048576)) held"
[ "$sm" = $((small * 102400)) ] || fail "eat_small: ${sm:-none} in the dump, $((small * 102400)) held"
[ -s "$T/d/heap.pb.gz" ] || fail "no exit profile"
exit 0
