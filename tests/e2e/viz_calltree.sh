#!/bin/sh
# timeout: 300
# cprof -dot -call_tree against go tool pprof -dot -call_tree: one node per
# calling context, trimmed as pprof's TrimTree does (dropped nodes' children
# moved up to their parent through residual edges). tests/viz_check.py
# --tree names each node by its path from its root and compares nodes,
# nodelets and edges as multisets, since pprof orders nodes that tie at
# random (its tree nodes come out of maps). Go heap and CPU profiles,
# profgen profiles (recursion, inline frames, labels, one that trimming cuts
# down), diffs with negative values, -mean (samples that add no value, whose
# edges still count), and -tagroot/-tagleaf frames. It also checks that
# the tree differs from the plain graph, and counts byte-identical outputs.
. "$(dirname "$0")/tool_common.inc"
CHECK="python3 $CPROF_TOP/tests/viz_check.py"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not installed"; exit 77; }
GEN=$CPROF_BUILD/profgen
[ -x "$GEN" ] || { echo "skip: no $GEN (make tests builds it)"; exit 77; }
same=0

# tree_cmp PROFILE FLAGS...: both tools' -dot -call_tree, compared.
tree_cmp() {
  prof=$1; shift
  checks=$((checks + 1))
  "$CPROF" -dot -call_tree "$@" "$prof" >"$T/c.dot" 2>"$T/c.err"
  go tool pprof -dot -call_tree "$@" "$prof" >"$T/g.dot" 2>"$T/g.err"
  if ! $CHECK dot "$T/c.dot" "$T/g.dot" --tree >"$T/cmp.out" 2>&1; then
    echo "FAIL: -dot -call_tree $* $(basename "$prof") differs from go tool pprof:"
    sed 's/^/    /' "$T/cmp.out" | head -20
    sed 's/^/    cprof stderr: /' "$T/c.err" | head -3
    fails=$((fails + 1))
  elif cmp -s "$T/c.dot" "$T/g.dot"; then
    same=$((same + 1))
  fi
}

build_go heapgo
build_go cpugo
(cd "$T" && ./heapgo h1.pb.gz 1 && ./heapgo h2.pb.gz 524288 && ./cpugo c.pb.gz 300) ||
  { echo "FAIL: Go profile writers"; exit 1; }
for seed in 1 2; do
  "$GEN" -seed $seed -samples 400 -locations 150 -functions 70 -depth 1-14 -labels 2 -inline 30 \
    -o "$T/g$seed.pb.gz" || { echo "FAIL: profgen"; exit 1; }
done
"$GEN" -seed 11 -samples 3000 -locations 800 -functions 300 -depth 3-30 -labels 2 -inline 30 \
  -o "$T/big.pb.gz" || { echo "FAIL: profgen"; exit 1; }

for p in h1 h2 c g1 g2; do
  for f in "" "-nodecount=10" "-nodefraction=0 -edgefraction=0 -nodecount=0" \
           "-nodefraction=0.05 -edgefraction=0.02" "-lines" "-noinlines" "-sample_index=0"; do
    # shellcheck disable=SC2086
    tree_cmp "$T/$p.pb.gz" $f
  done
done
for f in "" "-nodecount=200 -cum" "-nodefraction=0.001" "-addresses" "-noinlines -nodecount=30" \
         "-tagroot=thread"; do
  # shellcheck disable=SC2086
  tree_cmp "$T/big.pb.gz" $f
done
tree_cmp "$T/g1.pb.gz" -mean
tree_cmp "$T/g2.pb.gz" -mean
tree_cmp "$T/g1.pb.gz" -drop_negative
tree_cmp "$T/g1.pb.gz" -focus=fn_1 -hide=fn_2
tree_cmp "$T/h1.pb.gz" -base "$T/h2.pb.gz"
tree_cmp "$T/h1.pb.gz" -diff_base "$T/h2.pb.gz"
tree_cmp "$T/h1.pb.gz" -tagroot=bytes
tree_cmp "$T/c.pb.gz" -tagleaf=phase
tree_cmp "$T/c.pb.gz" -tagroot=phase -nodecount=4

# The tree is not the graph: the same function in two contexts is two nodes.
checks=$((checks + 1))
"$CPROF" -dot -call_tree "$T/g1.pb.gz" >"$T/c.dot" 2>/dev/null
"$CPROF" -dot "$T/g1.pb.gz" >"$T/n.dot" 2>/dev/null
if $CHECK dot "$T/c.dot" "$T/n.dot" >/dev/null 2>&1; then
  echo "FAIL: -call_tree gives the plain graph"
  fails=$((fails + 1))
fi

echo "# $same of $checks DOT outputs byte-identical to go tool pprof's"
finish
