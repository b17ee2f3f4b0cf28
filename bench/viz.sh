#!/bin/sh
# viz.sh — call graphs and flame graphs of a large profile: cprof against
# go tool pprof.
#
#   bench/viz.sh [CPROF_RUNS [GO_RUNS]]      (defaults: 5 and 3)
#
# Makes the profile with build/profgen -seed 1 -large (200,000 samples,
# 50,000 locations, 20,000 functions, stacks 20-60 deep, labels: the shape
# of the shared fixture large.pb.gz) and times, on it:
#   -svg        both tools (DOT, then Graphviz dot -Tsvg; pprof's default
#               trimming: 80 nodes)
#   -dot        both tools (the graph without Graphviz)
#   -flame F    cprof only (go tool pprof has its flame graph only in the
#               -http web UI); and the page's size, target < 2 MB
#   -folded     cprof only
# Wall time is the median of the runs, CPU time (user+sys) too, peak RSS the
# median of /usr/bin/time's %M. HOME is a scratch directory; stdout and
# stderr are thrown away (both tools warn that the generated mappings name
# no real files). Also checks that both tools' -dot outputs are identical.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
CRUNS=${1:-5}
GRUNS=${2:-3}

[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (Debian: time)" >&2; exit 1; }
command -v dot >/dev/null 2>&1 || { echo "bench: Graphviz dot is needed (Debian: graphviz)" >&2; exit 1; }
command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1 ||
  { echo "bench: go tool pprof is needed (Debian: golang-go)" >&2; exit 1; }
[ -x "$B/cprof" ] && [ -x "$B/profgen" ] || make -C "$top" "$B/cprof" "$B/profgen" >/dev/null

W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export HOME="$W/home" GOCACHE="${GOCACHE:-$B/go-cache}"
mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS PPROF_TMPDIR

P=$W/large.pb.gz
"$B/profgen" -seed 1 -large -o "$P"
echo "profile: build/profgen -seed 1 -large ($(wc -c < "$P") bytes gzipped;" \
  "200000 samples, 50000 locations, 20000 functions, depth 20-60)"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1);" \
  "$(go version | cut -d' ' -f3); $(dot -V 2>&1)"

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
printf '\n%-22s %8s %8s %7s | %8s %8s %7s | %8s %8s\n' "" "wall s" "wall s" "" \
  "CPU s" "CPU s" "" "peak MB" "peak MB"
printf '%-22s %8s %8s %7s | %8s %8s %7s | %8s %8s\n' "command" "cprof" "pprof" "speedup" \
  "cprof" "pprof" "speedup" "cprof" "pprof"
for cmd in "-svg" "-dot" "-flame $W/f.html" "-folded"; do
  # shellcheck disable=SC2086
  run "$CRUNS" "$W/c" "$B/cprof" $cmd "$P"
  ct=$(median 1 "$W/c"); cm=$(median 2 "$W/c"); cc=$(median 3 "$W/c")
  case "$cmd" in
  -svg|-dot)
    # shellcheck disable=SC2086
    run "$GRUNS" "$W/g" go tool pprof $cmd "$P"
    gt=$(median 1 "$W/g"); gm=$(median 2 "$W/g"); gc=$(median 3 "$W/g") ;;
  *) gt=0; gm=0; gc=0 ;;
  esac
  line=$(awk -v ct="$ct" -v gt="$gt" -v cm="$cm" -v gm="$gm" -v cc="$cc" -v gc="$gc" 'BEGIN {
    if (gt > 0)
      printf "%8.2f %8.2f %6.1fx | %8.2f %8.2f %6.1fx | %8.1f %8.1f", ct, gt, gt / ct, cc, gc,
        (cc > 0 ? gc / cc : 0), cm / 1024, gm / 1024
    else
      printf "%8.2f %8s %7s | %8.2f %8s %7s | %8.1f %8s", ct, "-", "", cc, "-", "", cm / 1024, "-" }')
  printf '%-22s %s\n' "$(echo "$cmd" | sed "s|$W/||")" "$line"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(wall: median of $CRUNS cprof runs and $GRUNS go tool pprof runs; CPU: user+sys, median;"
echo " peak MB: median of /usr/bin/time's maximum resident set size)"

size=$(wc -c < "$W/f.html")
"$B/cprof" -dot "$P" > "$W/c.dot" 2>/dev/null
go tool pprof -dot "$P" > "$W/g.dot" 2>/dev/null
echo
echo "flame page: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }') MiB;" \
  "target < 2 MB: $([ "$size" -lt 2000000 ] && echo met || echo NOT met))"
echo "-dot output identical to go tool pprof's: $(cmp -s "$W/c.dot" "$W/g.dot" && echo yes || echo NO)"
