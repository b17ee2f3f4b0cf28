#!/bin/sh
# A test killed at its timeout leaves no temporary directory behind:
# tests/run-one.sh runs a test that makes its $T (lib.sh) and outlives its
# "# timeout: 2", ignoring SIGTERM (so only the SIGKILL that follows ends
# it, and lib.sh's EXIT trap never runs); the run is reported as a
# timeout, and neither the test's $T nor anything else is left in TMPDIR.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
mkdir -p "$T/e2e" "$T/logs" "$T/tmp"
cat > "$T/e2e/sleeper.sh" <<EOF2
#!/bin/sh
# timeout: 2
. "$TOP/tests/lib.sh"
echo "\$T" > "$T/made"
trap '' TERM # it and its sleep outlive the SIGTERM: its own clean-up never runs
sleep 30
EOF2
chmod +x "$T/e2e/sleeper.sh"
res=$(cd "$TOP" && TMPDIR="$T/tmp" sh tests/run-one.sh "$T/e2e/sleeper.sh" "$T/logs")
echo "$res" | grep -q '^FAIL .*(timeout after 2s)$' || fail "not reported as a timeout: $res"
[ -s "$T/made" ] || fail "the sleeper made no \$T"
made=$(cat "$T/made")
case $made in "$T/tmp/"*) ;; *) fail "the sleeper's \$T is not under TMPDIR: $made" ;; esac
[ ! -e "$made" ] || fail "the timed-out test left $made behind"
[ -z "$(ls -A "$T/tmp")" ] || fail "left in TMPDIR: $(ls -A "$T/tmp")"
note "timed out after 2 s; nothing left in TMPDIR"
