#!/bin/sh
# The fuzzing corpora as regression tests: every libFuzzer harness
# (tests/fuzz/fuzz_<name>.c), built with gcc, ASan and UBSan and a plain
# main (build/tests/replay_<name>), runs over its seed corpus
# tests/fuzz/corpus/<name> and the inputs that once crashed something,
# tests/fuzz/crashes/<name> (INT64_MIN and overflowing sums through every
# report; %00 and 501 arguments in URIs). Any sanitizer report or crash
# fails. `make fuzz` is what looks for new ones.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
n=0
for src in "$TOP"/tests/fuzz/fuzz_*.c; do
  name=${src##*/fuzz_}; name=${name%.c}
  bin=$BUILD/tests/replay_$name
  [ -x "$bin" ] || fail "no $bin (run make tests)"
  set -- "$TOP/tests/fuzz/corpus/$name"
  [ -d "$TOP/tests/fuzz/crashes/$name" ] && set -- "$@" "$TOP/tests/fuzz/crashes/$name"
  (cd "$T" && "$bin" "$@") > "$T/out" 2> "$T/err"
  rc=$?
  if [ $rc != 0 ] || grep -q -e 'runtime error' -e 'Sanitizer' "$T/err"; then
    cat "$T/err"; fail "$name: exit $rc"
  fi
  note "$name: $(cat "$T/out")"
  n=$((n+1))
done
[ $n -ge 4 ] || fail "only $n harnesses"
exit 0
