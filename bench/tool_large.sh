#!/bin/sh
# tool_large.sh — cprof against go tool pprof on a large profile.
#
#   bench/tool_large.sh [CPROF_RUNS [GO_RUNS [PROFILE]]]   (defaults: 5, 3)
#
# Makes the profile with build/profgen -large (the shape of the shared
# fixture large.pb.gz: 200,000 samples, 50,000 locations, 20,000 functions,
# stacks 20-60 deep, 2 mappings, one label per sample, 15% inline frames;
# its stacks are random, where the fixture's share trunks) or takes
# PROFILE (the fixture itself, say), then times the same commands on it
# with each tool:
#   -top                    the default report
#   -top -cum               sorted by cumulative value
#   -traces                 every sample's stack (> /dev/null)
#   -proto -output /dev/null  decode, re-encode, gzip
# Wall time is the median of the runs (go tool pprof takes ~20 s a run, so
# it gets fewer); CPU time (user+sys) too, which a busy machine disturbs
# less; peak RSS the median of /usr/bin/time's %M. Both tools run
# with HOME in a scratch directory and their stdout/stderr thrown away
# (they both warn that the generated mappings name no real files).
# Targets: cprof -top at least 10x faster, at most 1/5 of the peak RSS.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
CRUNS=${1:-5}
GRUNS=${2:-3}
GIVEN=${3:-}

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
    "200000 samples, 50000 locations, 20000 functions, depth 20-60)"
fi
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1);" \
  "$(go version | cut -d' ' -f3); cprof $("$B/cprof" --version | cut -d' ' -f2)"

# run RUNS OUT CMD...: appends "wall kbytes cpu" per run to OUT.
run() {
  runs=$1; out=$2; shift 2
  : > "$out"
  i=0
  while [ $i -lt "$runs" ]; do
    /usr/bin/time -f '%e %M %U %S' -o "$W/t" "$@" > /dev/null 2>&1 || {
      echo "bench: failed: $*" >&2; exit 1; }
    tail -n1 "$W/t" | awk '{ print $1, $2, $3 + $4 }' >> "$out"
    i=$((i + 1))
  done
}
# median COLUMN FILE
median() {
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n%-25s %8s %8s %7s | %8s %8s %7s | %8s %8s %6s\n' "" "wall s" "wall s" "" \
  "CPU s" "CPU s" "" "peak MB" "peak MB" "RSS"
printf '%-25s %8s %8s %7s | %8s %8s %7s | %8s %8s %6s\n' "command" "cprof" "pprof" "speedup" \
  "cprof" "pprof" "speedup" "cprof" "pprof" "ratio"
for cmd in "-top" "-top -cum" "-traces" "-proto -output /dev/null"; do
  # shellcheck disable=SC2086
  run "$CRUNS" "$W/c" "$B/cprof" $cmd "$P"
  # shellcheck disable=SC2086
  run "$GRUNS" "$W/g" go tool pprof $cmd "$P"
  ct=$(median 1 "$W/c"); gt=$(median 1 "$W/g")
  cm=$(median 2 "$W/c"); gm=$(median 2 "$W/g")
  cc=$(median 3 "$W/c"); gc=$(median 3 "$W/g")
  line=$(awk -v ct="$ct" -v gt="$gt" -v cm="$cm" -v gm="$gm" -v cc="$cc" -v gc="$gc" 'BEGIN {
    printf "%8.2f %8.2f %6.1fx | %8.2f %8.2f %6.1fx | %8.1f %8.1f %6.3f", ct, gt,
      (ct > 0 ? gt / ct : 0), cc, gc, (cc > 0 ? gc / cc : 0), cm / 1024, gm / 1024, cm / gm }')
  printf '%-25s %s\n' "$cmd" "$line"
  [ "$cmd" = "-top" ] && topline="$ct $gt $cm $gm $cc $gc"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(wall: median of $CRUNS cprof runs and $GRUNS go tool pprof runs; CPU: user+sys, median;"
echo " peak MB: median of /usr/bin/time's maximum resident set size)"
# shellcheck disable=SC2086
set -- $topline
awk -v ct="$1" -v gt="$2" -v cm="$3" -v gm="$4" -v cc="$5" -v gc="$6" 'BEGIN {
  printf "\ntargets on -top: >= 10x faster: %s (wall %.1fx, CPU %.1fx); peak RSS <= 1/5: %s (%.3f)\n",
    (gt >= 10 * ct ? "met" : "NOT met"), (ct > 0 ? gt / ct : 0), (cc > 0 ? gc / cc : 0),
    (cm * 5 <= gm ? "met" : "NOT met"), cm / gm }'
