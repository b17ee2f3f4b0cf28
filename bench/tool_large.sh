#!/bin/sh
# tool_large.sh — cprof against go tool pprof on a large profile.
#
#   bench/tool_large.sh [CPROF_RUNS [GO_RUNS [PROFILE]]]   (defaults: 5, 3)
#
# Makes the profile with build/profgen -large (the shape of the shared
# fixture large.pb.gz: 200,000 samples, 50,000 locations, 20,000 functions,
# stacks 20-60 deep, 2 mappings, one label per sample, 15% inline frames;
# heap-shaped: alloc_objects, alloc_space (the default), inuse_objects,
# inuse_space; its stacks are random, where the fixture's share trunks) or
# takes PROFILE (the fixture itself, say), then times the same commands on
# it with each tool:
#   -top                          the default report
#   -svg                          call graph (both run Graphviz's dot)
#   -sample_index=alloc_space -top  a chosen sample type
# and, with BENCH_MORE=1, also -top -cum, -traces and -proto.
# BENCH_REF_CPROF=PATH adds a second cprof binary (main's build, say) as a
# reference, run in turn with this one, so one run shows before and after.
# Runs are interleaved (cprof, reference, go tool pprof, cprof, ...); go
# tool pprof takes ~20 s a run, so it gets fewer. Wall time is the median
# of the runs; CPU time (user+sys) too, which a busy machine disturbs less;
# peak RSS the median of /usr/bin/time's %M. Both tools run with HOME in a
# scratch directory and their output thrown away (they both warn that the
# generated mappings name no real files).
# Targets (issue 12), for each command: cprof's wall time <= 0.05 of go tool
# pprof's, and its peak RSS <= 0.10 of go tool pprof's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
CRUNS=${1:-5}
GRUNS=${2:-3}
GIVEN=${3:-}
REF=${BENCH_REF_CPROF:-}
WALL_TARGET=0.05
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
[ -z "$REF" ] || [ -x "$REF" ] || { echo "bench: BENCH_REF_CPROF=$REF is not executable" >&2; exit 1; }
[ -x "$B/cprof" ] && [ -x "$B/profgen" ] || make -C "$top" "$B/cprof" "$B/profgen" >/dev/null

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export HOME="$W/home" GOCACHE="${GOCACHE:-$B/go-cache}"
mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS PPROF_TMPDIR

if [ -n "$GIVEN" ]; then
  P=$GIVEN
  echo "profile: $P ($(wc -c < "$P") bytes)"
else
  P=$W/large.pb.gz
  "$B/profgen" -seed 1 -large -o "$P"
  echo "profile: build/profgen -seed 1 -large ($(wc -c < "$P") bytes gzipped;" \
    "200000 samples, 50000 locations, 20000 functions, depth 20-60; heap-shaped)"
fi
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1);" \
  "$(go version | cut -d' ' -f3); cprof $("$B/cprof" --version | cut -d' ' -f2)"
echo "cprof: $B/cprof${REF:+; reference: $REF}"

# once OUT CMD...: appends "wall kbytes cpu" of one run to OUT.
once() {
  out=$1; shift
  /usr/bin/time -f '%e %M %U %S' -o "$W/t" "$@" > /dev/null 2>&1 || {
    echo "bench: failed: $*" >&2; exit 1; }
  tail -n1 "$W/t" | awk '{ print $1, $2, $3 + $4 }' >> "$out"
}
# median COLUMN FILE
median() {
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

set -- "-top" "-svg" "-sample_index=alloc_space -top"
[ "${BENCH_MORE:-0}" = 1 ] && set -- "$@" "-top -cum" "-traces" "-proto -output /dev/null"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$W/summary"
for cmd in "$@"; do
  : > "$W/c"; : > "$W/r"; : > "$W/g"
  i=0
  while [ $i -lt "$CRUNS" ] || [ $i -lt "$GRUNS" ]; do
    # shellcheck disable=SC2086
    [ $i -lt "$CRUNS" ] && once "$W/c" "$B/cprof" $cmd "$P"
    # shellcheck disable=SC2086
    [ $i -lt "$CRUNS" ] && [ -n "$REF" ] && once "$W/r" "$REF" $cmd "$P"
    # shellcheck disable=SC2086
    [ $i -lt "$GRUNS" ] && once "$W/g" go tool pprof $cmd "$P"
    i=$((i + 1))
  done
  g="$(median 1 "$W/g") $(median 3 "$W/g") $(median 2 "$W/g")"
  c="$(median 1 "$W/c") $(median 3 "$W/c") $(median 2 "$W/c")"
  echo "$cmd|cprof|$c|$g" >> "$W/summary"
  [ -z "$REF" ] || echo "$cmd|reference|$(median 1 "$W/r") $(median 3 "$W/r") $(median 2 "$W/r")|$g" >> "$W/summary"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# summary lines: command|tool|wall cpu kbytes (tool)|wall cpu kbytes (go)
awk -F'|' -v wt="$WALL_TARGET" -v rt="$RSS_TARGET" -v cr="$CRUNS" -v gr="$GRUNS" '
function ratio(a, b) { return b > 0 ? a / b : 0 }
{ split($3, c, " "); split($4, g, " ")
  line[NR] = sprintf("%-32s %-9s | %7.2f %7.2f %7.3f | %7.2f %7.2f %7.3f | %7.1f %7.1f %6.3f", $1, $2,
    c[1], g[1], ratio(c[1], g[1]), c[2], g[2], ratio(c[2], g[2]), c[3] / 1024, g[3] / 1024,
    ratio(c[3], g[3]))
  w = ratio(c[1], g[1]); r = ratio(c[3], g[3])
  verdict[NR] = sprintf("  %-32s %-9s wall %.3f %-7s  peak RSS %.3f %s", $1, $2, w,
    (w <= wt ? "met" : "NOT met"), r, (r <= rt ? "met" : "NOT met")) }
END {
  printf "\n%-32s %-9s | %7s %7s %7s | %7s %7s %7s | %7s %7s %6s\n", "", "", "wall s", "wall s",
    "wall", "CPU s", "CPU s", "CPU", "peak MB", "peak MB", "RSS"
  printf "%-32s %-9s | %7s %7s %7s | %7s %7s %7s | %7s %7s %6s\n", "command", "tool", "tool",
    "pprof", "ratio", "tool", "pprof", "ratio", "tool", "pprof", "ratio"
  for (i = 1; i <= NR; i++) print line[i]
  printf "(ratio: tool / go tool pprof. wall, CPU (user+sys): medians of %d cprof and %d\n", cr, gr
  print " go tool pprof runs; peak MB: median of /usr/bin/time'"'"'s maximum resident set size)"
  printf "\ntargets (issue 12): wall ratio <= %s, peak RSS ratio <= %s\n", wt, rt
  for (i = 1; i <= NR; i++) print verdict[i]
}' "$W/summary"
