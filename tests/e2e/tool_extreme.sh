#!/bin/sh
# Extreme sample values through every report, under ASan/UBSan
# (build/asan/cprof, which aborts on any undefined behaviour): profiles made
# here (tests/fuzz/mkprof.py) with INT64_MIN, INT64_MAX, -INT64_MAX and sums
# that overflow, in each of the sample types of a heap, CPU and contention
# profile, and -diff_base/-normalize combinations.
#   - a profile whose column could overflow a sum (a value of INT64_MIN; two
#     of 2^62) is refused with one message naming the column, exit 1, for
#     every report (it used to recurse forever or wrap);
#   - a profile at the edge (one value of +-INT64_MAX) gives every report,
#     exit 0, and -top shows the value;
#   - -nodefraction/-divide_by that push a value out of range saturate.
# timeout: 600
. "$(dirname "$0")/../lib.sh"

ASAN=$BUILD/asan/cprof
[ -x "$ASAN" ] || fail "no $ASAN (run make tests)"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
export HOME="$T/home"; mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
MK="python3 $TOP/tests/fuzz/mkprof.py"
MIN=-9223372036854775808 MAX=9223372036854775807 HALF=4611686018427387904

# Every report that writes a file or stdout (not the viewers; callgrind and
# topproto are not available).
reports="top traces tree dot peek=. list=. disasm=. comments flame=- folded proto raw tags text"

# run NAME ARGS...: one run of the sanitized tool; its exit status in $rc.
run() {
  name=$1; shift
  "$ASAN" "$@" > "$T/out" 2> "$T/err"
  rc=$?
  if [ $rc -ge 98 ] || grep -q -e 'runtime error' -e 'Sanitizer' "$T/err"; then
    cat "$T/err"; fail "$name: $* crashed or hit undefined behaviour (exit $rc)"
  fi
}

n=0
for types in alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes \
             samples/count,cpu/nanoseconds contentions/count,delay/nanoseconds; do
  nt=$(echo "$types" | tr ',' '\n' | wc -l)
  for col in $(seq 1 "$nt"); do
    # vals V: nt values, V in column col and 1 elsewhere
    vals() { i=1; out=; while [ $i -le "$nt" ]; do [ $i = "$col" ] && v=$1 || v=1; out=$out${out:+,}$v; i=$((i+1)); done; echo "$out"; }
    idx=$(echo "$types" | cut -d, -f"$col" | cut -d/ -f1)
    n=$((n+1)); d=$T/$n; mkdir "$d"
    # refused: INT64_MIN; two of 2^62 (same stack, different stacks)
    $MK "$d/min.pb" "$types" "$(vals $MIN)" "$(vals 5)@other>main"
    $MK "$d/sum1.pb" "$types" "$(vals $HALF)" "$(vals $HALF)"
    $MK "$d/sum2.pb" "$types" "$(vals $HALF)" "$(vals $HALF)@other>main"
    for f in min sum1 sum2; do
      for r in top traces tree dot peek=.; do
        run "$idx $f" -sample_index="$idx" -"$r" "$d/$f.pb"
        [ $rc = 1 ] || { cat "$T/err"; fail "$idx $f -$r: exit $rc, want 1"; }
        grep -q "sample values too large: the $idx values (column $col)" "$T/err" ||
          { cat "$T/err"; fail "$idx $f -$r: no clear message"; }
      done
    done
    # accepted at the edge: every report
    $MK "$d/max.pb" "$types" "$(vals $MAX)" "$(vals 0)@other>main"
    $MK "$d/negmax.pb" "$types" "$(vals -$MAX)" "$(vals 0)@other>main"
    for f in max negmax; do
      for r in $reports; do
        run "$idx $f" -sample_index="$idx" -output="$d/o" -"$r" "$d/$f.pb"
        case $r in list=.|disasm=.) ;; # no source or binary here: may say so
          *) [ $rc = 0 ] || { cat "$T/err"; fail "$idx $f -$r: exit $rc"; } ;; esac
      done
      run "$idx $f" -sample_index="$idx" -nodefraction=1e300 -edgefraction=1e300 -top "$d/$f.pb"
      run "$idx $f" -sample_index="$idx" -divide_by=1e-300 -top "$d/$f.pb"
      [ $rc = 0 ] || { cat "$T/err"; fail "$idx $f -divide_by: exit $rc"; }
    done
    run "$idx max" -sample_index="$idx" -raw "$d/max.pb"
    grep -q "$MAX" "$T/out" || fail "$idx max: -raw does not show $MAX"
    # a base: the sum of both overflows (refused), -normalize with a huge ratio (saturates)
    run "$idx diff" -sample_index="$idx" -diff_base="$d/max.pb" -top "$d/negmax.pb"
    [ $rc = 1 ] && grep -q "sample values too large" "$T/err" || { cat "$T/err"; fail "$idx: -diff_base overflow not refused"; }
    $MK "$d/one.pb" "$types" "$(vals 1)"
    run "$idx norm" -sample_index="$idx" -normalize -base="$d/one.pb" -top "$d/max.pb"
    run "$idx norm2" -sample_index="$idx" -normalize -base="$d/max.pb" -top "$d/one.pb"
  done
done
note "$n sample types checked"

# The legacy text parsers: values that overflow once scaled by the period.
printf 'heap profile: 1: 9223372036854775807 [1: 9223372036854775807] @ heap/1048576\n1: 9223372036854775807 [1: 9223372036854775807] @ 0x401000\n1: 9223372036854775807 [1: 9223372036854775807] @ 0x401100\n' > "$T/legacy.txt"
for r in top traces tree; do
  run legacy -"$r" "$T/legacy.txt"
  [ $rc -le 1 ] || fail "legacy -$r: exit $rc"
done
exit 0
