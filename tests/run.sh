#!/bin/sh
# Runs every test, each in its own process with a timeout, $JOBS at a time:
#   build/tests/test_*         cmocka unit tests
#   build/tests/asan/test_*    the same under ASan/UBSan
#   tests/e2e/*.sh             end-to-end scripts (exit 0 pass, 77 skip, else fail;
#                              a "# timeout: N" line sets their limit, default 300 s)
# Logs go to build/test-logs/. Ends with "N passed, N failed, N skipped".
# TESTS=substring runs only the tests whose path contains it.
# STRESS=N runs N busy loops beside the tests (make check-stress: 2), the
# condition of a loaded CI machine; they are killed when this script ends,
# however it ends.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/test-logs
rm -rf "$out"; mkdir -p "$out"
busy=
trap 'kill $busy 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP
i=0
while [ "$i" -lt "${STRESS:-0}" ]; do
  # Each loop also watches this script, should it die by SIGKILL.
  sh -c 'while kill -0 $1 2>/dev/null; do i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done' \
    busy $$ </dev/null >/dev/null 2>&1 &
  busy="$busy $!"
  i=$((i + 1))
done
[ -n "$busy" ] && echo "# beside ${STRESS} busy loops"
export CPROF_TOP="$top" CPROF_BUILD="$top/build"
results=$( (ls build/tests/test_* build/tests/asan/test_* tests/e2e/*.sh 2>/dev/null) |
           grep -F -- "${TESTS:-}" | xargs -r -P "${JOBS:-2}" -I{} sh tests/run-one.sh {} "$out")
echo "$results"
p=$(echo "$results" | grep -c '^ok ')
f=$(echo "$results" | grep -c '^FAIL ')
s=$(echo "$results" | grep -c '^skip ')
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
