#!/bin/sh
# A test killed at its timeout leaves no temporary directory behind:
# tests/run-one.sh runs a test that makes its $T (lib.sh) and outlives its
# "# timeout: 2", ignoring SIGTERM (so only the SIGKILL that follows ends
# it, and lib.sh's EXIT trap never runs); the run is reported as a
# timeout, and neither the test's $T nor anything else is left in TMPDIR.
# Nor a program it started under a timeout of its own (as arm64_common.inc's
# arun runs qemu), which GNU timeout moves to a process group of its own:
# such a qemu once ran on for 240 s after its test was killed. And the
# report shows what still ran at the timeout, with its stacks.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
mkdir -p "$T/e2e" "$T/logs" "$T/tmp"
cat > "$T/e2e/sleeper.sh" <<EOF2
#!/bin/sh
# timeout: 2
. "$TOP/tests/lib.sh"
echo "\$T" > "$T/made"
timeout 60 sh -c 'echo \$\$ > "$T/inner.pid"; exec sleep 31' &
until [ -s "$T/inner.pid" ]; do sleep 0.01; done
trap '' TERM # it and its sleep outlive the SIGTERM: its own clean-up never runs
sleep 30
EOF2
chmod +x "$T/e2e/sleeper.sh"
res=$(cd "$TOP" && TMPDIR="$T/tmp" sh tests/run-one.sh "$T/e2e/sleeper.sh" "$T/logs")
echo "$res" | grep -q '^FAIL .*(timeout after 2s)$' || fail "not reported as a timeout: $res"
# What still ran is shown, stacks then processes: the sleeper is one
# (it outlives the snapshot, taken before any signal).
for l in 'run-one: stacks of ' 'run-one: still running at the timeout (2s):' 'sleeper\.sh'; do
  echo "$res" | grep -q "$l" || fail "the timeout's report lacks \"$l\": $res"
done
[ -s "$T/made" ] || fail "the sleeper made no \$T"
made=$(cat "$T/made")
case $made in "$T/tmp/"*) ;; *) fail "the sleeper's \$T is not under TMPDIR: $made" ;; esac
[ ! -e "$made" ] || fail "the timed-out test left $made behind"
[ -z "$(ls -A "$T/tmp")" ] || fail "left in TMPDIR: $(ls -A "$T/tmp")"
inner=$(cat "$T/inner.pid") || fail "the sleeper's inner program did not start"
i=0 # killed, then reaped by whoever inherited it
while kill -0 "$inner" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 100 ] && { kill "$inner"; fail "the timed-out test's inner program $inner still runs"; }
  sleep 0.1
done
note "timed out after 2 s; nothing left in TMPDIR, nor running"
