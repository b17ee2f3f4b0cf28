#!/bin/sh
# Runs every test, each in its own process with a timeout, $JOBS at a time:
#   build/tests/test_*         cmocka unit tests
#   build/tests/asan/test_*    the same under ASan/UBSan
#   tests/e2e/*.sh             end-to-end scripts (exit 0 pass, 77 skip, else fail;
#                              a "# timeout: N" line sets their limit, default 300 s)
# Logs go to build/test-logs/. Ends with "N passed, N failed, N skipped".
# TESTS=substring runs only the tests whose path contains it.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/test-logs
rm -rf "$out"; mkdir -p "$out"
export CPROF_TOP="$top" CPROF_BUILD="$top/build"
results=$( (ls build/tests/test_* build/tests/asan/test_* tests/e2e/*.sh 2>/dev/null) |
           grep -F -- "${TESTS:-}" | xargs -r -P "${JOBS:-2}" -I{} sh tests/run-one.sh {} "$out")
echo "$results"
p=$(echo "$results" | grep -c '^ok ')
f=$(echo "$results" | grep -c '^FAIL ')
s=$(echo "$results" | grep -c '^skip ')
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
