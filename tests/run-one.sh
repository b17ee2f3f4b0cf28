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
# group) is killed by the session's id.
TMPDIR=$tmp setsid -w "$t" > "$out/$name.log" 2>&1 </dev/null &
sid=$!
# The timeout: when it expires, what still runs in the session goes to the
# log first (stacks, then the process list, which the tail below shows),
# so a test that hangs says where; then TERM, and KILL 5 s later.
(
  end=$(($(date +%s) + limit))
  while [ "$(date +%s)" -lt $end ]; do
    kill -0 "$sid" 2>/dev/null || exit 0
    sleep 1
  done
  {
    for p in $(ps -s "$sid" -o pid= 2>/dev/null); do
      echo "--- run-one: stacks of $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"
      eu-stack -n 12 -p "$p" 2>&1 | head -n 60
    done
    echo "--- run-one: still running at the timeout (${limit}s):"
    ps -s "$sid" -o pid,ppid,stat,etime,time,wchan:22,args 2>&1 | cut -c1-160
  } >> "$out/$name.log" 2>&1
  : > "$tmp.timeout"
  pkill -TERM -s "$sid" 2>/dev/null
  sleep 5
  pkill -KILL -s "$sid" 2>/dev/null
) &
watch=$!
wait $sid 2>/dev/null # no "Terminated" from the shell at a timeout
rc=$?
kill "$watch" 2>/dev/null
[ ! -e "$tmp.timeout" ] || rc=124
pkill -KILL -s "$sid" 2>/dev/null
rm -rf "$tmp" "$tmp.timeout"
secs=$(( $(date +%s) - start ))
case $rc in
  0) echo "ok      $name (${secs}s)";;
  77) echo "skip    $name: $(tail -n1 "$out/$name.log")";;
  124) echo "FAIL    $name (timeout after ${limit}s)"; tail -n 40 "$out/$name.log" | sed 's/^/    | /';;
  *) echo "FAIL    $name (exit $rc)"; tail -n 30 "$out/$name.log" | sed 's/^/    | /';;
esac
