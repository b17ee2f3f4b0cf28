#!/bin/sh
# The requests fleet scrapers make, against a cprof process, and the
# answers they need. What they send (read from their sources, see docs/http.md,
# "Fleets"): Grafana Alloy's pyroscope.scrape and Parca both GET
#   /debug/pprof/allocs, /block, /goroutine, /mutex (cumulative profiles)
#   /debug/pprof/profile?seconds=N (CPU; N = interval-1 s for Alloy, the
#   interval for Parca)
# with their User-Agent ("Alloy/VERSION (OS; MODE)", "conprof/VERSION")
# and Go's client's "Accept-Encoding: gzip"; every profile type is a target
# of its own, scraped concurrently. Checked: 200, application/octet-stream,
# a gzipped profile.proto that go tool pprof reads with the expected sample
# types, no Content-Encoding (the body is gzip itself, as Go's); concurrent
# scrapes; a CPU scrape arriving while one runs gets Go's 500 "cpu profiling
# already in use" while the other profiles keep answering; delta profiles
# (?seconds= on allocs/heap) against cumulative ones; godeltaprof's paths
# (/debug/pprof/delta_heap...) answer 404 as in a Go program without it;
# with CPROF_HTTP_TOKEN, a bearer token lets the scrapers in.
# timeout: 300
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/server" "$PROGS/http_server.c"
start_server s "$T/server"

ALLOY_UA="Alloy/v1.5.0 (linux; binary)"
PARCA_UA="conprof/v0.23.0"

# scrape UA NAME PATH: GET like the scrapers, headers to $T/NAME.h, body to
# $T/NAME.pb.gz.
scrape() {
  curl -s -H "User-Agent: $1" -H "Accept-Encoding: gzip" -D "$T/$2.h" -o "$T/$2.pb.gz" \
    --max-time 60 "$URL$3"
}

# check NAME TYPES: the answer is a profile with these sample types.
check() {
  head -1 "$T/$1.h" | grep -q " 200" || { cat "$T/$1.h" "$T/$1.pb.gz"; fail "$1: not 200"; }
  grep -qi "^Content-Type: application/octet-stream" "$T/$1.h" || fail "$1: content type"
  grep -qi "^Content-Encoding" "$T/$1.h" && fail "$1: Content-Encoding set (the body is already gzip)"
  [ "$(od -An -tx1 -N2 "$T/$1.pb.gz" | tr -d ' ')" = 1f8b ] || fail "$1: body is not gzip"
  types=$(go tool pprof -raw "$T/$1.pb.gz" 2>"$T/$1.perr" | awk 'p { print; exit } /^Samples:/ { p=1 }' | sed 's/\[dflt\]//g')
  [ -n "$types" ] || { cat "$T/$1.perr"; fail "$1: go tool pprof cannot read it"; }
  echo "$types" | grep -q "$2" || fail "$1: sample types '$types', want '$2'"
}

# One scrape round of a scraper: every target at once, as their loops do.
round() {
  ua=$1; p=$2; secs=$3
  jobs=""
  scrape "$ua" "$p.allocs" /debug/pprof/allocs & jobs="$jobs $!"
  scrape "$ua" "$p.block" /debug/pprof/block & jobs="$jobs $!"
  scrape "$ua" "$p.goroutine" /debug/pprof/goroutine & jobs="$jobs $!"
  scrape "$ua" "$p.mutex" /debug/pprof/mutex & jobs="$jobs $!"
  scrape "$ua" "$p.cpu" "/debug/pprof/profile?seconds=$secs" & jobs="$jobs $!"
  wait $jobs
  check "$p.allocs" "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
  check "$p.block" "contentions/count delay/nanoseconds"
  check "$p.goroutine" "goroutine/count"
  check "$p.mutex" "contentions/count delay/nanoseconds"
  check "$p.cpu" "samples/count cpu/nanoseconds"
}
round "$ALLOY_UA" alloy 2
round "$PARCA_UA" parca 2

# Ten scrapers at once on the same profile.
jobs=""
for i in 1 2 3 4 5 6 7 8 9 10; do scrape "$ALLOY_UA" "many$i" /debug/pprof/allocs & jobs="$jobs $!"; done
wait $jobs
for i in 1 2 3 4 5 6 7 8 9 10; do check "many$i" "alloc_space/bytes"; done

# A CPU scrape arriving while another one runs: Go's answer (500 and the
# message), while the other profiles keep answering. The second is sent
# once the first holds the profiler (on a loaded machine the first may
# reach the server after a second sent a fixed second later).
curl -s -H "User-Agent: $PARCA_UA" -o "$T/first.pb.gz" -w "%{http_code}" --max-time 60 \
  "$URL/debug/pprof/profile?seconds=5" > "$T/first.code" &
first=$!
cpu_session_is 1 || fail "the first CPU scrape did not start within 20 s"
code=$(curl -s -H "User-Agent: $ALLOY_UA" -o "$T/second.body" -w "%{http_code}" --max-time 60 \
  "$URL/debug/pprof/profile?seconds=1")
[ "$code" = 500 ] && grep -q "cpu profiling already in use" "$T/second.body" ||
  fail "second CPU scrape: $code '$(cat "$T/second.body")'"
scrape "$ALLOY_UA" during.allocs /debug/pprof/allocs
check during.allocs "alloc_space/bytes"
scrape "$ALLOY_UA" during.goroutine /debug/pprof/goroutine
check during.goroutine "goroutine/count"
wait $first
[ "$(cat "$T/first.code")" = 200 ] || fail "the first CPU scrape: $(cat "$T/first.code")"

# Cumulative against delta: allocs grows between scrapes; allocs?seconds=1
# holds only that second's allocations (churn keeps allocating).
flat_churn() { pprof_flat alloc_space "$1" | awk '$1 == "churn" { print $2 }'; }
scrape "$ALLOY_UA" cum1 /debug/pprof/allocs
scrape "$ALLOY_UA" delta "/debug/pprof/allocs?seconds=1"
scrape "$ALLOY_UA" cum2 /debug/pprof/allocs
check delta "alloc_space/bytes"
c1=$(flat_churn "$T/cum1.pb.gz"); d=$(flat_churn "$T/delta.pb.gz"); c2=$(flat_churn "$T/cum2.pb.gz")
note "churn alloc_space: cumulative $c1 then $c2, delta over 1 s $d"
[ -n "$c1" ] && [ -n "$c2" ] && [ -n "$d" ] || fail "churn missing from a profile"
[ "$c2" -gt "$c1" ] && [ "$d" -gt 0 ] && [ "$d" -lt "$c2" ] ||
  fail "cumulative and delta allocs do not relate (c1 $c1, delta $d, c2 $c2)"
scrape "$PARCA_UA" hdelta "/debug/pprof/heap?seconds=1"
check hdelta "inuse_space/bytes"

# godeltaprof's endpoints are not served: Alloy's profile.godeltaprof_*
# must stay disabled (their default).
for p in delta_heap delta_mutex delta_block; do
  code=$(curl -s -o /dev/null -w "%{http_code}" -H "User-Agent: $ALLOY_UA" "$URL/debug/pprof/$p")
  [ "$code" = 404 ] || fail "/debug/pprof/$p: $code, want 404"
done

# With CPROF_HTTP_TOKEN: the scrapers' bearer token (Alloy's
# authorization block / bearer_token, Parca's authorization) is let in.
start_server tok "$T/server" CPROF_HTTP_TOKEN=s3cret
code=$(curl -s -o /dev/null -w "%{http_code}" -H "User-Agent: $ALLOY_UA" "$URL/debug/pprof/allocs")
[ "$code" = 401 ] || fail "no token: $code, want 401"
curl -s -H "User-Agent: $PARCA_UA" -H "Accept-Encoding: gzip" -H "Authorization: Bearer s3cret" \
  -D "$T/tok.h" -o "$T/tok.pb.gz" "$URL/debug/pprof/allocs"
check tok "alloc_space/bytes"
exit 0
