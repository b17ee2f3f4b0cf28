# lib.sh — what the bench scripts comparing configurations share (sourced
# by bash scripts after they set TOP, the tree).

# bench_init NAME: say and die (messages prefixed by NAME), GNU time
# checked, build/libcprof.so built and copied to $W/libcprof.so (LIB), W a
# scratch directory removed at exit.
bench_init() {
  eval "say() { echo \"$1: \$*\" >&2; }"
  die() { say "$*"; exit 1; }
  [ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed: sudo apt-get install time"
  make -C "$TOP" -s build/libcprof.so >&2 || die "cannot build build/libcprof.so"
  W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  LIB=$W/libcprof.so
  cp "$TOP/build/libcprof.so" "$LIB"
}

# timed_run WORKLOAD CONFIG: runs "${CENV[@]}" "${CMD[@]}" (set by the
# caller) under GNU time, its output in $W/out, which must equal the
# plain run's ($W/want.WORKLOAD, kept from the first plain run); appends
# "wall cpu" (seconds; CPU = user + system) to $W/res/WORKLOAD.CONFIG.
timed_run() {
  local t0 t1
  mkdir -p "$W/res"
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$W/cpu" env "${CENV[@]}" "${CMD[@]}" > "$W/out" 2>&1 ||
    die "$1/$2 failed: $(tail -n3 "$W/out")"
  t1=$EPOCHREALTIME
  if [ "$2" = plain ]; then
    [ -f "$W/want.$1" ] || cp "$W/out" "$W/want.$1"
  fi
  cmp -s "$W/out" "$W/want.$1" || die "$1/$2: output differs from the plain run"
  awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.2f\n", b - a, $1 + $2 }' "$W/cpu" >> "$W/res/$1.$2"
}

# interleaved RUNS WORKLOADS CONFIGS: a warm-up plain run of each workload
# (not counted), then RUNS rounds of every configuration, each through
# run_one WORKLOAD CONFIG (the caller's, which calls timed_run).
interleaved() {
  local runs=$1 wl c r
  for wl in $2; do
    run_one "$wl" plain
    rm -f "$W/res/$wl.plain"
    for ((r = 1; r <= runs; r++)); do
      for c in $3; do run_one "$wl" "$c"; done
    done
    say "$wl: $runs rounds done"
  done
}

# median FILE COLUMN
median() {
  sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
