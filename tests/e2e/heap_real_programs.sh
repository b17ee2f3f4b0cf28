#!/bin/sh
# Programs nobody here wrote run unchanged under the preload and leave a
# profile go tool pprof loads: python3 (PYTHONMALLOC=malloc), sqlite3, jq
# and an STL-heavy C++ program, at the default rate and at rate 1, with
# glibc malloc and with jemalloc / tcmalloc preloaded after cprof. Their
# stdout, stderr and exit status must equal a plain run's; every profile
# must have samples; with jemalloc and tcmalloc a program with known counts
# (heapknown.c) must come out exact at rate 1.
# timeout: 180
. "$(dirname "$0")/../lib.sh"

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

# The programs, each as "name|command", run from $T with its inputs there.
cd "$T" || fail "no scratch dir"
cat > script.py <<'EOF'
d = {}
for i in range(20000):
    d["k%d" % i] = [i, str(i) * 3, {"x": i, "y": (i, i + 1)}]
rows = sorted(d.items(), key=lambda kv: -kv[1][0])[:3]
s = set(v[1] for v in d.values() if v[0] % 3 == 0)
print(len(d), [k for k, _ in rows], len(s), sum(v[0] for v in d.values()))
EOF
gen_inputs .
cc_prog "$T/stl" "$PROGS/real_stlchurn.cc"

PY=$(command -v python3) && PY=$(python3 -c 'import sys; print(sys.executable)') || PY=
SQLITE=$(command -v sqlite3) || SQLITE=
JQ=$(command -v jq) || JQ=
[ -n "$PY" ] || note "no python3: skipping it"
[ -n "$SQLITE" ] || note "no sqlite3: skipping it"
[ -n "$JQ" ] || note "no jq: skipping it"

progs=""
[ -n "$PY" ] && progs="$progs python"
[ -n "$SQLITE" ] && progs="$progs sqlite"
[ -n "$JQ" ] && progs="$progs jq"
progs="$progs stl"

# run_prog NAME [ENV...]: runs program NAME with extra environment, writing
# NAME.out, NAME.err and returning its status.
run_prog() {
  p=$1; shift
  case $p in
    python) env "$@" PYTHONMALLOC=malloc "$PY" script.py ;;
    sqlite) env "$@" "$SQLITE" :memory: < script.sql ;;
    jq) env "$@" "$JQ" -c '[.[] | select(.v > 6) | {id, t: .tags[1]}] | group_by(.t) | map({t: .[0].t, n: length})' data.json ;;
    stl) env "$@" "$T/stl" 20 ;;
  esac
}

for p in $progs; do
  run_prog "$p" > "$p.plain.out" 2> "$p.plain.err"
  echo $? > "$p.plain.rc"
  [ -s "$p.plain.out" ] || fail "$p: no output from the plain run"
done

allocs=""
[ -r "$JEMALLOC" ] && allocs="$allocs jemalloc" || note "no jemalloc: skipping it"
[ -r "$TCMALLOC" ] && allocs="$allocs tcmalloc" || note "no tcmalloc: skipping it"

for alloc in glibc $allocs; do
  case $alloc in
    glibc) pre=$LIB ;;
    jemalloc) pre="$LIB $JEMALLOC" ;;
    tcmalloc) pre="$LIB $TCMALLOC" ;;
  esac
  for p in $progs; do
    for rate in default 1; do
      name=$p.$alloc.$rate
      if [ $rate = default ]; then r=""; else r="CPROF_RATE=$rate"; fi
      run_prog "$p" $r CPROF_SEED=7 CPROF_HEAP_PROFILE="$T/$name.pb.gz" LD_PRELOAD="$pre" \
        > "$name.out" 2> "$name.err"
      rc=$?
      [ "$rc" = "$(cat "$p.plain.rc")" ] || { cat "$name.err"; fail "$name: exit status $rc, plain run $(cat "$p.plain.rc")"; }
      cmp -s "$p.plain.out" "$name.out" || { diff "$p.plain.out" "$name.out" | head; fail "$name: stdout differs from the plain run"; }
      cmp -s "$p.plain.err" "$name.err" || { diff "$p.plain.err" "$name.err" | head; fail "$name: stderr differs from the plain run"; }
      [ -s "$name.pb.gz" ] || fail "$name: no profile written"
      set -- $(raw_totals "$name.pb.gz")
      [ "$1" -gt 0 ] && [ "$2" -gt 0 ] || fail "$name: no samples (totals $*)"
      [ "$3" -ge 0 ] && [ "$4" -ge 0 ] && [ "$3" -le "$1" ] && [ "$4" -le "$2" ] ||
        fail "$name: inuse outside [0, alloc] (totals $*)"
      echo "$*" > "$name.totals"
      note "$name: alloc $1 objects $2 B, inuse $3 objects $4 B"
    done
    # The sampled estimate of the bytes allocated is near the exact count
    # (seeded: reproducible; the bound is loose, a factor of 3).
    set -- $(cat "$p.$alloc.1.totals") $(cat "$p.$alloc.default.totals")
    awk -v exact="$2" -v est="$6" 'BEGIN { exit !(est * 3 >= exact && est <= exact * 3) }' ||
      fail "$p.$alloc: sampled alloc_space $6 B is far from the exact $2 B"
  done
done

# The STL program frees everything before exit: at rate 1 almost nothing
# (libstdc++'s emergency pool, stdio buffers) is still in use, and it made
# at least one allocation per map/unordered_map insert.
set -- $(cat stl.glibc.1.totals)
[ "$1" -ge 80000 ] || fail "stl: only $1 allocations at rate 1"
[ "$4" -le 262144 ] || fail "stl: $4 B still in use at exit at rate 1"

# Known counts through jemalloc and tcmalloc: exact at rate 1, for C (every
# malloc entry point) and for C++ new/delete (both allocators define their
# own operators, which cprof must still see).
cc_prog "$T/known" "$PROGS/heapknown.c"
cc_prog "$T/known_cpp" "$PROGS/heapknown_cpp.cc"
for alloc in $allocs; do
  case $alloc in
    jemalloc) pre="$LIB $JEMALLOC" ;;
    tcmalloc) pre="$LIB $TCMALLOC" ;;
  esac
  for k in known known_cpp; do
    env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$k.$alloc.pb.gz" LD_PRELOAD="$pre" "$T/$k" \
      > "$T/$k.$alloc.truth" || fail "$k.$alloc: program failed"
    [ -s "$T/$k.$alloc.pb.gz" ] || fail "$k.$alloc: no profile written"
    grep -q '^TRUTH ' "$T/$k.$alloc.truth" || fail "$k.$alloc: no truth printed"
    check_truth "$T/$k.$alloc.truth" "$T/$k.$alloc.pb.gz"
  done
  # The other allocator really is the one serving the program.
  env LD_PRELOAD="$pre" sh -c 'grep -c -E "libjemalloc|libtcmalloc" /proc/self/maps' > /dev/null ||
    fail "$alloc: not loaded"
  note "known, known_cpp with $alloc: exact"
done
exit 0
