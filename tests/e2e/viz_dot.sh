#!/bin/sh
# timeout: 400
# cprof -dot against go tool pprof -dot: tests/viz_check.py parses both DOT
# files and compares the graphs they describe — the same nodes (printable
# names) with the same labels (flat and cum values), font sizes and colours,
# the same tag nodelets, the same edges with the same value labels, weights,
# pen widths and styles, and the same legend — after pprof's trimming
# (nodecount 80, nodefraction 0.005, edgefraction 0.001, and set by hand),
# on Go heap profiles (exact and sampled, with "bytes" nodelets), a Go CPU
# profile with goroutine labels, random profgen profiles (labels, inline
# frames, several mappings; a bigger one that trimming cuts down), diffs
# (-base, -diff_base), and cprof's own runtime profiles of C programs built
# with -g (heap at CPROF_RATE=1, CPU): those are symbolized once with
# cprof -proto, so both tools name the same functions, and cprof also reads
# the address-only original. It also counts how many outputs are
# byte-identical (all of them, so far), and fails if any is not.
. "$(dirname "$0")/tool_common.inc"
CHECK="python3 $CPROF_TOP/tests/viz_check.py"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not installed"; exit 77; }
GEN=$CPROF_BUILD/profgen
LIB=$CPROF_BUILD/libcprof.so
same=0

# dot_cmp CPROF_PROFILE PPROF_PROFILE FLAGS...: both tools' -dot, compared.
dot_cmp() {
  cp=$1; gp=$2; shift 2
  checks=$((checks + 1))
  "$CPROF" -dot "$@" "$cp" >"$T/c.dot" 2>"$T/c.err"
  go tool pprof -dot "$@" "$gp" >"$T/g.dot" 2>"$T/g.err"
  if ! $CHECK dot "$T/c.dot" "$T/g.dot" >"$T/cmp.out" 2>&1; then
    echo "FAIL: -dot $* $(basename "$cp") differs from go tool pprof:"
    sed 's/^/    /' "$T/cmp.out" | head -20
    sed 's/^/    cprof stderr: /' "$T/c.err" | head -3
    fails=$((fails + 1))
  elif cmp -s "$T/c.dot" "$T/g.dot"; then
    same=$((same + 1))
  else
    echo "FAIL: -dot $* $(basename "$cp"): same graph, but not byte for byte:"
    diff "$T/c.dot" "$T/g.dot" | head -6 | sed 's/^/    /'
    fails=$((fails + 1))
  fi
}

GRAPH_FLAGS='
-nodecount=5
-nodecount=0
-nodefraction=0 -edgefraction=0
-nodefraction=0.05 -edgefraction=0.02
-lines
-addresses
-files
-noinlines
-sample_index=0
-mean
-unit=kb
-divide_by=7
-compact_labels
-focus=main -ignore=Small
-hide=runtime
-drop_negative'

# --- Go heap and CPU profiles ---------------------------------------------------------
build_go heapgo
(cd "$T" && ./heapgo h1.pb.gz 1 && ./heapgo h2.pb.gz 524288) || { echo "FAIL: heapgo"; exit 1; }
build_go cpugo
(cd "$T" && ./cpugo c.pb.gz 300) || { echo "FAIL: cpugo"; exit 1; }
for p in h1 h2 c; do
  dot_cmp "$T/$p.pb.gz" "$T/$p.pb.gz"
  echo "$GRAPH_FLAGS" | while read -r f; do
    [ -n "$f" ] || continue
    # shellcheck disable=SC2086
    dot_cmp "$T/$p.pb.gz" "$T/$p.pb.gz" $f
    echo "$checks $fails $same" >"$T/counts"
  done
  read -r checks fails same <"$T/counts"
done
dot_cmp "$T/c.pb.gz" "$T/c.pb.gz" -tagfocus=phase=a
dot_cmp "$T/c.pb.gz" "$T/c.pb.gz" -taghide=phase
dot_cmp "$T/h1.pb.gz" "$T/h1.pb.gz" -alloc_space -relative_percentages -focus=Medium
dot_cmp "$T/h1.pb.gz" "$T/h1.pb.gz" -base "$T/h2.pb.gz"
dot_cmp "$T/h1.pb.gz" "$T/h1.pb.gz" -diff_base "$T/h2.pb.gz"
dot_cmp "$T/h2.pb.gz" "$T/h2.pb.gz" -drop_negative -base "$T/h1.pb.gz"

# --- generated profiles -------------------------------------------------------------------
if [ -x "$GEN" ]; then
  for seed in 1 2 3; do
    "$GEN" -seed $seed -samples 400 -locations 150 -functions 70 -depth 1-14 -labels 2 -inline 30 \
      -o "$T/g$seed.pb.gz" || { echo "FAIL: profgen"; exit 1; }
    for f in "" "-nodecount=10" "-nodefraction=0 -nodecount=0" "-lines" "-sample_index=0" "-edgefraction=0.05"; do
      # shellcheck disable=SC2086
      dot_cmp "$T/g$seed.pb.gz" "$T/g$seed.pb.gz" $f
    done
  done
  dot_cmp "$T/g1.pb.gz" "$T/g1.pb.gz" -base "$T/g2.pb.gz"
  # bigger: trimming to 80 nodes (entropy order, nodelets counted as nodes)
  "$GEN" -seed 5 -samples 20000 -locations 4000 -functions 1500 -depth 5-30 -labels 1 -inline 15 \
    -o "$T/big.pb.gz" || { echo "FAIL: profgen"; exit 1; }
  dot_cmp "$T/big.pb.gz" "$T/big.pb.gz"
  dot_cmp "$T/big.pb.gz" "$T/big.pb.gz" -nodecount=200 -cum
else
  echo "# no $GEN: generated profiles skipped"
fi

# --- cprof runtime profiles of C programs -------------------------------------------------
if [ -f "$LIB" ] && command -v gcc >/dev/null 2>&1; then
  gcc -std=gnu11 -g -O1 -o "$T/heapknown" "$CPROF_TOP/tests/progs/heapknown.c" -lpthread ||
    { echo "FAIL: building heapknown.c"; exit 1; }
  CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/ck.pb.gz" LD_PRELOAD="$LIB" "$T/heapknown" >/dev/null ||
    { echo "FAIL: heapknown under libcprof.so"; exit 1; }
  "$CPROF" -proto -output "$T/cks.pb.gz" "$T/ck.pb.gz" 2>/dev/null ||
    { echo "FAIL: cprof -proto of the C heap profile"; exit 1; }
  for f in "" "-alloc_space" "-alloc_objects" "-nodecount=4" "-lines" "-nodefraction=0"; do
    # shellcheck disable=SC2086
    dot_cmp "$T/cks.pb.gz" "$T/cks.pb.gz" $f
    # shellcheck disable=SC2086
    dot_cmp "$T/ck.pb.gz" "$T/cks.pb.gz" $f
  done
  gcc -std=gnu11 -g -O1 -o "$T/share" "$CPROF_TOP/tests/progs/cpu_share.c" -lpthread ||
    { echo "FAIL: building cpu_share.c"; exit 1; }
  CPROF_CPU_PROFILE="$T/cc.pb.gz" LD_PRELOAD="$LIB" "$T/share" 100 >/dev/null ||
    { echo "FAIL: cpu_share under libcprof.so"; exit 1; }
  "$CPROF" -proto -output "$T/ccs.pb.gz" "$T/cc.pb.gz" 2>/dev/null ||
    { echo "FAIL: cprof -proto of the C CPU profile"; exit 1; }
  for f in "" "-sample_index=0" "-lines" "-nodefraction=0 -nodecount=0"; do
    # shellcheck disable=SC2086
    dot_cmp "$T/ccs.pb.gz" "$T/ccs.pb.gz" $f
    # shellcheck disable=SC2086
    dot_cmp "$T/cc.pb.gz" "$T/ccs.pb.gz" $f
  done
else
  echo "# no $LIB or gcc: runtime profiles skipped"
fi

echo "# $same of $checks DOT outputs byte-identical to go tool pprof's"
finish
