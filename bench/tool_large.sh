#!/bin/sh
# tool_large.sh — cprof against go tool pprof on large profiles of several
# shapes.
#
#   bench/tool_large.sh [CPROF_RUNS [GO_RUNS [PROFILE]]]   (defaults: 5, 3)
#
# Makes each shape of BENCH_SHAPES (default: all five) with build/profgen,
# fixed seeds, heap-shaped (alloc_objects, alloc_space (the default),
# inuse_objects, inuse_space), 2 mappings, 15% inline frames:
#   large    profgen -large: the shape of the shared fixture large.pb.gz
#            (200,000 samples, 50,000 locations, 20,000 functions, depth
#            20-60, one label per sample; its stacks are random, where the
#            fixture's share trunks)
#   samples  many samples, few locations: 1,000,000 samples, 2,000
#            locations, 1,000 functions, depth 4-16
#   strings  many locations and strings: 100,000 samples, 500,000
#            locations, 250,000 functions, depth 10-30, up to 3 labels
#   deep     deep stacks: 40,000 samples, depth 300-600
#   series   50 snapshots of one program (profgen -shape snapshot
#            -sample_seed 1..50: 8,000 samples each over the same 50,000
#            locations), given together: both tools merge them
# or takes PROFILE (the fixture itself, say) as the only shape; then times
# the same commands on each with each tool:
#   -top                          the default report
#   -svg                          call graph (both run Graphviz's dot)
#   -http flame                   -http=127.0.0.1:PORT -no_browser: from
#                                 the start until /ui/flamegraph is
#                                 served once; then the server is stopped
#   -sample_index=alloc_space -top  a chosen sample type (large only)
# and, with BENCH_MORE=1, also -top -cum, -traces and -proto.
# go tool pprof 1.19's /ui/flamegraph builds the untrimmed call tree
# (CallTree, Trim false: driver/flamegraph.go) and renders it as one JSON
# document: on the deep and samples shapes that is millions of tree nodes,
# and it serves nothing for hours. A flame graph not served within
# BENCH_HTTP_TIMEOUT seconds (default 600) ends go's run there: its wall
# time is then a lower bound (">="), cprof's ratio an upper bound, and its
# peak RSS the peak until then. cprof not serving in time is an error.
# BENCH_CPROF=PATH times another cprof binary than build/cprof;
# BENCH_REF_CPROF=PATH adds a second cprof binary (main's build, say) as a
# reference, run in turn with this one, so one run shows before and after.
# Runs are interleaved (cprof, reference, go tool pprof, cprof, ...); go
# tool pprof takes 10-100 s a run, so it gets fewer. Wall time is the median
# of the runs; CPU time (user+sys) too, which a busy machine disturbs less;
# peak RSS the median of /usr/bin/time's %M (for -http: of the server).
# Both tools run with HOME in a scratch directory and their output thrown
# away (they both warn that the generated mappings name no real files).
# Targets (issue 24), for each shape and command: cprof's wall time <= 0.04
# of go tool pprof's, and its peak RSS <= 0.10 of go tool pprof's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
CRUNS=${1:-5}
HTTP_TIMEOUT=${BENCH_HTTP_TIMEOUT:-600}
GRUNS=${2:-3}
GIVEN=${3:-}
REF=${BENCH_REF_CPROF:-}
CPROF=${BENCH_CPROF:-$B/cprof}
SHAPES=${BENCH_SHAPES:-large samples strings deep series}
WALL_TARGET=0.04
RSS_TARGET=0.10

if [ ! -x /usr/bin/time ]; then
  echo "bench: /usr/bin/time (for peak RSS) is missing: installing Debian package 'time'" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y time >/dev/null || { echo "bench: apt-get install time failed" >&2; exit 1; }
  else
    echo "bench: run as root, or: sudo apt-get install time" >&2
    exit 1
  fi
fi
command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1 ||
  { echo "bench: go tool pprof is needed (Debian: golang-go)" >&2; exit 1; }
command -v dot >/dev/null 2>&1 || { echo "bench: dot is needed for -svg (Debian: graphviz)" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || { echo "bench: curl is needed for -http (Debian: curl)" >&2; exit 1; }
[ -z "$REF" ] || [ -x "$REF" ] || { echo "bench: BENCH_REF_CPROF=$REF is not executable" >&2; exit 1; }
[ -x "$CPROF" ] || { echo "bench: BENCH_CPROF=$CPROF is not executable" >&2; exit 1; }
[ -x "$B/cprof" ] && [ -x "$B/profgen" ] || make -C "$top" "$B/cprof" "$B/profgen" >/dev/null

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
tp=
# a server left by a failed -http run is stopped too
trap '[ -z "$tp" ] || kill -TERM "$(leaf "$tp")" 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM HUP
export HOME="$W/home" GOCACHE="${GOCACHE:-$B/go-cache}"
mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS PPROF_TMPDIR

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1);" \
  "$(go version | cut -d' ' -f3); cprof $("$CPROF" --version | cut -d' ' -f2)"
echo "cprof: $CPROF${REF:+; reference: $REF}"

# shape NAME: makes the shape's profile(s) in $W/NAME/, prints their paths.
shape() {
  d=$W/$1
  mkdir -p "$d"
  case $1 in
    given) echo "$GIVEN" ;;
    large) "$B/profgen" -seed 1 -large -o "$d/p.pb.gz" && echo "$d/p.pb.gz" ;;
    samples|strings|deep) "$B/profgen" -seed 1 -shape "$1" -o "$d/p.pb.gz" && echo "$d/p.pb.gz" ;;
    series)
      k=1
      while [ $k -le 50 ]; do
        "$B/profgen" -seed 1 -shape snapshot -sample_seed $k -o "$d/p$k.pb.gz"
        printf '%s ' "$d/p$k.pb.gz"
        k=$((k + 1))
      done ;;
    *) echo "bench: unknown shape $1" >&2; exit 1 ;;
  esac
}

# once OUT CMD...: appends "wall kbytes cpu" of one run to OUT.
once() {
  out=$1; shift
  /usr/bin/time -f '%e %M %U %S' -o "$W/t" "$@" > /dev/null 2>&1 || {
    echo "bench: failed: $*" >&2; exit 1; }
  tail -n1 "$W/t" | awk '{ print $1, $2, $3 + $4 }' >> "$out"
}
# now: seconds since the epoch, to the nanosecond
now() { date +%s.%N; }
# leaf PID: the deepest first descendant of PID (the server under time and,
# for go tool pprof, under the go command).
leaf() {
  p=$1
  while c=$(pgrep -P "$p" | head -n1) && [ -n "$c" ]; do p=$c; done
  echo "$p"
}
# free_port: a TCP port free on 127.0.0.1 now (go tool pprof 1.19 prints
# port 0 as given, so each tool gets a port chosen here).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# http_once OUT TOOL... PROFILES: starts TOOL -http on a free port, waits
# for its "Serving web UI on URL" line, fetches URL/ui/flamegraph once and
# stops the server; appends "wall kbytes cpu" (wall: start to flame graph
# served; peak RSS and CPU of the whole run) to OUT. go tool pprof not
# serving within HTTP_TIMEOUT: the run ends there and OUT.timeout is made.
http_once() {
  out=$1; shift
  : > "$W/h.err"
  t0=$(now)
  /usr/bin/time -f '%e %M %U %S' -o "$W/t" "$@" > /dev/null 2> "$W/h.err" &
  tp=$!
  url=
  while [ -z "$url" ]; do
    kill -0 "$tp" 2>/dev/null || { echo "bench: server exited: $*" >&2; cat "$W/h.err" >&2; exit 1; }
    url=$(sed -n 's|.*Serving web UI on \(http://[^ ]*\).*|\1|p' "$W/h.err" | head -n1)
    [ -n "$url" ] || sleep 0.02
  done
  left=$(echo "$t0 $(now) $HTTP_TIMEOUT" | awk '{ l = $3 - ($2 - $1); print (l < 1 ? 1 : int(l)) }')
  if ! curl -sf --max-time "$left" -o "$W/flame.html" "$url/ui/flamegraph"; then
    case $1 in
      go) kill -0 "$tp" 2>/dev/null || { echo "bench: server exited: $*" >&2; cat "$W/h.err" >&2; exit 1; }
          echo "bench: go tool pprof served no flame graph in $HTTP_TIMEOUT s: stopped" >&2
          : > "$out.timeout" ;;
      *) echo "bench: no flame graph from $* in $HTTP_TIMEOUT s" >&2; exit 1 ;;
    esac
  fi
  t1=$(now)
  [ -s "$W/flame.html" ] || [ -e "$out.timeout" ] || { echo "bench: empty flame graph from $*" >&2; exit 1; }
  kill -TERM "$(leaf "$tp")"
  wait "$tp" || true
  tp=
  tail -n1 "$W/t" | awk -v w="$(echo "$t0 $t1" | awk '{ print $2 - $1 }')" \
    '{ print w, $2, $3 + $4 }' >> "$out"
}
# median COLUMN FILE
median() {
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# run OUT TOOL CMD PROFILES: one run of a command ("-http flame" or flags)
run() {
  out=$1 tool=$2 cmd=$3; shift 3
  # shellcheck disable=SC2086
  if [ "$cmd" = "-http flame" ]; then
    http_once "$out" $tool -http=127.0.0.1:"$(free_port)" -no_browser "$@"
  else
    once "$out" $tool $cmd "$@"
  fi
}

[ -n "$GIVEN" ] && SHAPES=given
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$W/summary"
for sh in $SHAPES; do
  profs=$(shape "$sh")
  # shellcheck disable=SC2086
  echo "shape $sh: $(echo $profs | wc -w) profile(s), $(cat $profs | wc -c) bytes gzipped"
  set -- "-top" "-svg" "-http flame"
  [ "$sh" = large ] || [ "$sh" = given ] && set -- "$@" "-sample_index=alloc_space -top"
  [ "${BENCH_MORE:-0}" = 1 ] && set -- "$@" "-top -cum" "-traces" "-proto -output /dev/null"
  for cmd in "$@"; do
    : > "$W/c"; : > "$W/r"; : > "$W/g"; rm -f "$W/g.timeout"
    i=0
    while [ $i -lt "$CRUNS" ] || [ $i -lt "$GRUNS" ]; do
      # shellcheck disable=SC2086
      [ $i -lt "$CRUNS" ] && run "$W/c" "$CPROF" "$cmd" $profs
      # shellcheck disable=SC2086
      [ $i -lt "$CRUNS" ] && [ -n "$REF" ] && run "$W/r" "$REF" "$cmd" $profs
      # shellcheck disable=SC2086
      [ $i -lt "$GRUNS" ] && [ ! -e "$W/g.timeout" ] && run "$W/g" "go tool pprof" "$cmd" $profs
      i=$((i + 1))
    done
    g="$(median 1 "$W/g") $(median 3 "$W/g") $(median 2 "$W/g")"
    c="$(median 1 "$W/c") $(median 3 "$W/c") $(median 2 "$W/c")"
    # a timed-out go run is its only one: its figures are lower bounds
    lb=; [ -e "$W/g.timeout" ] && lb=">="
    echo "$sh $cmd|cprof|$c|$g|$lb" >> "$W/summary"
    [ -z "$REF" ] || echo "$sh $cmd|reference|$(median 1 "$W/r") $(median 3 "$W/r") $(median 2 "$W/r")|$g|$lb" >> "$W/summary"
    # partial results, should the run be cut short: wall cpu kbytes
    echo "  $sh $cmd: cprof $c${REF:+ | reference $(median 1 "$W/r") $(median 3 "$W/r") $(median 2 "$W/r")} | go $lb$g" \
      "(load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
  rm -rf "${W:?}/$sh"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# summary lines: command|tool|wall cpu kbytes (tool)|wall cpu kbytes (go)|">=" when
# go's figures are lower bounds (no flame graph in HTTP_TIMEOUT)
awk -F'|' -v wt="$WALL_TARGET" -v rt="$RSS_TARGET" -v cr="$CRUNS" -v gr="$GRUNS" -v ht="$HTTP_TIMEOUT" '
function ratio(a, b) { return b > 0 ? a / b : 0 }
{ split($3, c, " "); split($4, g, " ")
  lb = $5; le = lb == ">=" ? "<=" : ""
  line[NR] = sprintf("%-38s %-9s | %7.2f %2s%5.2f %7.3f | %7.2f %2s%5.2f %7.3f | %7.1f %2s%5.1f %6.3f", $1, $2,
    c[1], lb, g[1], ratio(c[1], g[1]), c[2], lb, g[2], ratio(c[2], g[2]), c[3] / 1024, lb, g[3] / 1024,
    ratio(c[3], g[3]))
  w = ratio(c[1], g[1]); r = ratio(c[3], g[3])
  verdict[NR] = sprintf("  %-38s %-9s wall %s%.3f %-7s  peak RSS %s%.3f %s%s", $1, $2, le, w,
    (w <= wt ? "met" : "NOT met"), le, r, (r <= rt ? "met" : "NOT met"),
    lb == ">=" ? " (go served no flame graph in time: upper bounds)" : "") }
END {
  printf "\n%-38s %-9s | %7s %7s %7s | %7s %7s %7s | %7s %7s %6s\n", "", "", "wall s", "wall s",
    "wall", "CPU s", "CPU s", "CPU", "peak MB", "peak MB", "RSS"
  printf "%-38s %-9s | %7s %7s %7s | %7s %7s %7s | %7s %7s %6s\n", "command", "tool", "tool",
    "pprof", "ratio", "tool", "pprof", "ratio", "tool", "pprof", "ratio"
  for (i = 1; i <= NR; i++) print line[i]
  printf "(ratio: tool / go tool pprof. wall, CPU (user+sys): medians of %d cprof and %d\n", cr, gr
  print " go tool pprof runs; peak MB: median of /usr/bin/time'"'"'s maximum resident set size;"
  printf " \">=\": go served no flame graph in %d s, its one run stopped then)\n", ht
  printf "\ntargets (issue 24): wall ratio <= %s, peak RSS ratio <= %s\n", wt, rt
  for (i = 1; i <= NR; i++) print verdict[i]
}' "$W/summary"
