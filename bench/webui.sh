#!/bin/sh
# webui.sh — the web UI on a large profile: cprof -http against
# go tool pprof -http, view by view.
#
#   bench/webui.sh [RUNS [PROFILE]]      (default: 3 runs, build/profgen -large)
#   WEBUI_VIEWS="top peek" bench/webui.sh  (some of: graph top flamegraph peek
#                                          source top_focus graph_si0)
#
# Both servers load the profile once (their start-up time is reported
# apart); then every view's URL is requested RUNS times from each server in
# turn: time to first byte (curl's time_starttransfer; the views are made
# before the first byte), the CPU time the server spent on it (user+sys of
# all its threads, from /proc/PID/stat), and the size of the page. Medians
# are reported. The views: graph (/ui/), top, flame graph, peek and source
# of the heaviest function, top with a focus, graph of another sample type.
# Neither server caches pages: each request makes its report again.
#
# A request that takes longer than WEBUI_TIMEOUT seconds (default 300), or
# makes its server grow past WEBUI_MAX_RSS_MB (default 8192; go tool pprof's
# flame graph of this profile grows past 13 GB), counts as failed: the server
# is killed (it would go on computing) and started again for the next one.
# Target: cprof faster on every view.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
RUNS=${1:-3}
GIVEN=${2:-}

command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1 ||
  { echo "bench: go tool pprof is needed (Debian: golang-go)" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || { echo "bench: curl is needed" >&2; exit 1; }
[ -x "$B/cprof" ] && [ -x "$B/profgen" ] || make -C "$top" "$B/cprof" "$B/profgen" >/dev/null

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT
export HOME="$W/home" GOCACHE="${GOCACHE:-$B/go-cache}"
mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS PPROF_TMPDIR BROWSER
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

if [ -n "$GIVEN" ]; then
  P=$GIVEN
  echo "profile: $P ($(wc -c < "$P") bytes)"
else
  P=$W/large.pb.gz
  "$B/profgen" -seed 1 -large -o "$P"
  echo "profile: build/profgen -seed 1 -large ($(wc -c < "$P") bytes gzipped;" \
    "200000 samples, 50000 locations, 20000 functions, depth 20-60)"
fi
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1);" \
  "$(go version | cut -d' ' -f3)"

TICK=$(getconf CLK_TCK)
cpu_of() { # PID: user+sys ticks of all its threads
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
now() { date +%s.%N; }

# start NAME CMD...: runs the server, waits for "Serving web UI on URL";
# sets URL and PID.
start() {
  sname=$1; shift
  t0=$(now)
  rm -f "$W/$sname.err"
  "$@" > "$W/$sname.out" 2> "$W/$sname.err" &
  PID=$!
  PIDS="$PIDS $PID"
  i=0
  while ! grep -q 'Serving web UI on' "$W/$sname.err" 2>/dev/null; do
    kill -0 "$PID" 2>/dev/null || { cat "$W/$sname.err" >&2; echo "bench: $sname exited" >&2; exit 1; }
    i=$((i + 1))
    [ $i -gt 3000 ] && { echo "bench: $sname not serving after 300 s" >&2; exit 1; }
    sleep 0.1
  done
  URL=$(sed -n 's/.*Serving web UI on //p' "$W/$sname.err" | head -n 1)
  echo "$sname: serving after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s ($URL)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_cprof() {
  start cprof "$B/cprof" -http=127.0.0.1:0 -no_browser "$P"
  CURL=$URL CPID=$PID
}
start_pprof() {
  start pprof go tool pprof -http="127.0.0.1:$(free_port)" -no_browser "$P"
  GURL=$URL
  GPID=$(pgrep -P "$PID" pprof || echo "$PID") # go tool runs pprof as a child
  PIDS="$PIDS $GPID"
}
restart() { # cprof|pprof after a failed request
  if [ "$1" = cprof ]; then kill -9 "$CPID" 2>/dev/null || true; start_cprof
  else kill -9 "$GPID" "$PID" 2>/dev/null || true; start_pprof; fi
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start_cprof
start_pprof

# the heaviest function, for peek and source
F=$("$B/cprof" -top -nodecount=1 "$P" 2>/dev/null | tail -n 1 | awk '{ print $6 }')
RX=$(python3 -c 'import re, sys, urllib.parse; print(urllib.parse.quote("^" + re.escape(sys.argv[1]) + "( |$)"))' "$F")
FOCUS=$(echo "$F" | sed 's/\.fn_.*//')
echo "peek/source function: $F; focus: $FOCUS"

TIMEOUT=${WEBUI_TIMEOUT:-300}
MAXRSS=${WEBUI_MAX_RSS_MB:-8192}
rss_mb() { awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0; }

# measure URL PID OUT: appends "ttfb_s cpu_s bytes status" to OUT; on a
# timeout or past the RSS limit "inf - - timeout|rss", and sets FAILED.
measure() {
  url=$1; pid=$2
  c0=$(cpu_of "$pid")
  t0=$(now)
  curl -sS -o "$W/body" --max-time "$TIMEOUT" -w '%{time_starttransfer} %{size_download} %{http_code}' \
    "$url" > "$W/curl.out" 2>/dev/null &
  cpid=$!
  why=""
  peak=0
  while kill -0 "$cpid" 2>/dev/null; do
    r=$(rss_mb "$pid"); [ "$r" -gt "$peak" ] && peak=$r
    if [ "$r" -gt "$MAXRSS" ]; then why=rss; break; fi
    sleep 0.2
  done
  if [ -z "$why" ]; then
    wait "$cpid" || why=timeout
  else
    kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null || true
  fi
  if [ -n "$why" ]; then
    FAILED=1
    echo "inf - - $why" >> "$OUT"
    echo "    $(basename "$OUT" | sed 's/^c$/cprof/; s/^g$/pprof/'): ${url#http://*/} failed: $why" \
      "(after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s, RSS $peak MB)"
    return
  fi
  c1=$(cpu_of "$pid")
  set -- $(cat "$W/curl.out")
  echo "$1 $(awk -v a="$c0" -v b="$c1" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t }') $2 $3" >> "$OUT"
}
median() { # COLUMN FILE ("inf" when a request failed)
  if grep -q '^inf' "$2"; then echo inf; return; fi
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf '\n%-28s | %9s %9s %7s | %8s %8s %7s | %9s %9s\n' "" "TTFB s" "TTFB s" "" "CPU s" "CPU s" "" "KB" "KB"
printf '%-28s | %9s %9s %7s | %8s %8s %7s | %9s %9s\n' "view" "cprof" "pprof" "faster" "cprof" "pprof" "less" "cprof" "pprof"
all_faster=yes
VIEWS=${WEBUI_VIEWS:-graph top flamegraph peek source top_focus graph_si0}
for v in $VIEWS; do
  case $v in
    graph) view="graph:/ui/";;
    top) view="top:/ui/top";;
    flamegraph) view="flamegraph:/ui/flamegraph";;
    peek) view="peek:/ui/peek?f=$RX";;
    source) view="source:/ui/source?f=$RX";;
    top_focus) view="top focus:/ui/top?f=$FOCUS";;
    graph_si0) view="graph si=0:/ui/?si=0";;
    *) echo "bench: unknown view $v" >&2; exit 2;;
  esac
  vname=${view%%:*}; path=${view#*:}
  : > "$W/c"; : > "$W/g"
  i=0
  while [ $i -lt "$RUNS" ]; do
    FAILED=0; OUT=$W/c measure "$CURL$path" "$CPID"
    [ "$FAILED" = 1 ] && restart cprof
    FAILED=0; OUT=$W/g measure "$GURL$path" "$GPID"
    [ "$FAILED" = 1 ] && { restart pprof; i=$RUNS; } # one failure is enough to know
    i=$((i + 1))
  done
  ct=$(median 1 "$W/c"); gt=$(median 1 "$W/g")
  cc=$(median 2 "$W/c"); gc=$(median 2 "$W/g")
  cb=$(median 3 "$W/c"); gb=$(median 3 "$W/g")
  cs=$(awk '{ print $4 }' "$W/c" | sort -u | tr '\n' ' '); gs=$(awk '{ print $4 }' "$W/g" | sort -u | tr '\n' ' ')
  awk -v n="$vname" -v ct="$ct" -v gt="$gt" -v cc="$cc" -v gc="$gc" -v cb="$cb" -v gb="$gb" \
      -v cs="$cs" -v gs="$gs" -v to="$TIMEOUT" 'function v(x, f) { return x == "inf" ? "failed" : sprintf(f, x) }
    function r(a, b) { return a == "inf" ? "-" : b == "inf" ? "inf" : a > 0 ? sprintf("%.1fx", b / a) : "-" }
    BEGIN {
    printf "%-28s | %9s %9s %7s | %8s %8s %7s | %9s %9s   (HTTP %s/ %s)\n", n, v(ct, "%.3f"), v(gt, "%.3f"),
      r(ct, gt), v(cc, "%.2f"), v(gc, "%.2f"), r(cc, gc), v(cb / 1024, "%.0f"), v(gb == "inf" ? "inf" : gb / 1024, "%.0f"), cs, gs }'
  [ "$ct" != inf ] && { [ "$gt" = inf ] || awk -v ct="$ct" -v gt="$gt" 'BEGIN { exit !(ct < gt) }'; } || all_faster=no
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(medians of $RUNS requests per view and server, taken in turn; CPU: the server's user+sys"
echo " during the request, all threads; KB: page size)"
echo "target: cprof faster on every view: $([ $all_faster = yes ] && echo met || echo NOT met)"
