#!/bin/sh
# /debug/pprof/profile of a preloaded C program (tests/progs/cpu_share.c
# COUNTER_FILE: serve_hot and serve_cold in a 3:1 loop): the real go tool pprof
# -seconds 2 gets a 2 s CPU profile with the right functions and shares;
# a second request while one runs gets Go's 500 "Could not enable CPU
# profiling: cpu profiling already in use"; the first is then answered with
# Go's headers; a client that goes away frees profiling for the next one;
# CPROF_CPU_PROFILE holds the profiler for the whole run, as a Go program
# that called StartCPUProfile does.
# timeout: 180
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/srv" "$PROGS/cpu_share.c"

# share FILE: serve_hot's share of serve_hot + serve_cold, in percent, and
# the tolerance around 75 that the number of samples allows: 10 points, or
# 3.5 standard deviations of a binomial share (10 ms samples at 100 Hz) when
# a loaded machine gave the program few samples (36 seen: 7.2 points each).
share() {
  awk 'started { v=$4; sub(/ms$/, "", v); c[$6]=v } /^ *flat  flat%/ { started=1 }
       END { t = c["serve_hot"] + c["serve_cold"]
             if (t == 0) { print 0, 0; exit }
             tol = 350 * sqrt(0.75 * 0.25 / (t / 10)); if (tol < 10) tol = 10
             printf "%d %d\n", 100 * c["serve_hot"] / t, tol }' "$1"
}

start_server srv "$T/srv"

# --- go tool pprof -seconds 2 --------------------------------------------------------
go tool pprof -top -cum -unit=ms -nodefraction=0 -seconds 2 "$URL/debug/pprof/profile" \
  > "$T/go.top" 2> "$T/go.err" || { cat "$T/go.err"; fail "go tool pprof failed"; }
grep -q '^Type: cpu$' "$T/go.top" || { cat "$T/go.top"; fail "type is not cpu"; }
grep -q '^Duration: 2' "$T/go.top" || { cat "$T/go.top"; fail "no 2 s duration"; }
read -r s tol <<EOF
$(share "$T/go.top")
EOF
[ "$s" -ge $((75 - tol)) ] && [ "$s" -le $((75 + tol)) ] ||
  { cat "$T/go.top"; fail "serve_hot has ${s}% of the two, want 75 +- $tol"; }
grep -Ei 'MHD_|microhttpd|libcprof-http|drain|cpuring' "$T/go.top" && fail "the profiler's own threads are in the profile"
note "go tool pprof -seconds 2: serve_hot ${s}% of serve_hot + serve_cold"

# --- one at a time ---------------------------------------------------------------------
curl -s -o "$T/first.body" -D "$T/first.raw" -w '%{http_code}' --max-time 30 \
  "$URL/debug/pprof/profile?seconds=3" > "$T/first.status" &
CURL=$!
# Until the first session holds the profiler (a fixed second was a race
# on a loaded machine).
cpu_session_is 1 || fail "the first session did not start within 20 s"
req second "$URL/debug/pprof/profile?seconds=1"
expect_error second 500 "Could not enable CPU profiling: cpu profiling already in use"
wait $CURL
tr -d '\r' < "$T/first.raw" > "$T/first.hdr"
STATUS=$(cat "$T/first.status")
expect first 200 "application/octet-stream"
[ "$(header first Content-Disposition)" = 'attachment; filename="profile"' ] ||
  fail "first: Content-Disposition \"$(header first Content-Disposition)\""
[ "$(header first X-Content-Type-Options)" = nosniff ] || fail "first: no nosniff"
go tool pprof -top -unit=ms "$T/first.body" > "$T/first.top" 2>&1 || { cat "$T/first.top"; fail "first: not a profile"; }
grep -q '^Duration: 3' "$T/first.top" || { cat "$T/first.top"; fail "first: no 3 s duration"; }
note "a second request while one runs: Go's 500"

# --- a client that goes away ------------------------------------------------------------
curl -s -o /dev/null --max-time 1 "$URL/debug/pprof/profile?seconds=2"
# The server notices when the wait ends.
cpu_session_is 0 || fail "the abandoned session did not end within 20 s"
req after "$URL/debug/pprof/profile?seconds=1"
expect after 200 "application/octet-stream"
note "profiling free again after a client left"
expect_progress srv "after the requests"
stop_server "$PID"

# --- CPROF_CPU_PROFILE holds the profiler ------------------------------------------------
start_server env "$T/srv" CPROF_CPU_PROFILE="$T/env.pb.gz"
req busy "$URL/debug/pprof/profile?seconds=1"
expect_error busy 500 "Could not enable CPU profiling: cpu profiling already in use"
kill -TERM "$PID"
wait "$PID" 2>/dev/null
# SIGTERM kills without exit(): no profile, as for the heap profile.
[ -e "$T/env.pb.gz" ] && fail "env: a profile without a normal exit"
note "CPROF_CPU_PROFILE: the endpoint refuses, as Go's after StartCPUProfile"
exit 0
