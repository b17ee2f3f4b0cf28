#!/bin/sh
# Runs one test (a binary or an e2e script) under a timeout; prints one
# result line and, on failure, the end of its log. Used by tests/run.sh.
t=$1; out=$2
name=$(echo "$t" | sed 's|^build/tests/||; s|^tests/e2e/||; s|/|-|g')
limit=300
case "$t" in *.sh) l=$(sed -n 's/^# timeout: *//p' "$t" | head -n1); limit=${l:-300};; esac
# The test's temporary files go in a TMPDIR of its own, removed here
# whatever happened: a test killed at its timeout (SIGKILL after SIGTERM
# is ignored) never runs its own clean-up. Go's build cache stays shared.
export GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/cprof-gocache}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cprof-run.XXXXXX") || exit 1
chmod 711 "$tmp" # as /tmp's: tests run programs as another user (attach_refuse)
start=$(date +%s)
# In a session of its own: what the test leaves running (a program it
# started under a timeout of its own, which moved it to another process
# group out of reach of this timeout's kill) is killed by the session's id.
TMPDIR=$tmp setsid -w timeout -k 5 "$limit" "$t" > "$out/$name.log" 2>&1 </dev/null &
sid=$!
wait $sid
rc=$?
pkill -KILL -s "$sid" 2>/dev/null
rm -rf "$tmp"
secs=$(( $(date +%s) - start ))
case $rc in
  0) echo "ok      $name (${secs}s)";;
  77) echo "skip    $name: $(tail -n1 "$out/$name.log")";;
  124|137) echo "FAIL    $name (timeout after ${limit}s)"; tail -n 30 "$out/$name.log" | sed 's/^/    | /';;
  *) echo "FAIL    $name (exit $rc)"; tail -n 30 "$out/$name.log" | sed 's/^/    | /';;
esac
