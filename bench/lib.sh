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

# bench_http_init NAME: for a script serving a workload over CPROF_HTTP:
# say and die, curl checked, build/libcprof.so and build/libcprof-http.so
# built, W a scratch directory removed and the workload's pid (when set)
# killed at exit, proxies unset.
bench_http_init() {
  eval "say() { echo \"$1: \$*\" >&2; }"
  die() { say "$*"; exit 1; }
  command -v curl >/dev/null || die "curl is needed"
  make -C "$TOP" -s build/libcprof.so build/libcprof-http.so >&2 || die "cannot build"
  W=$(mktemp -d "${TMPDIR:-/tmp}/cprof-bench.XXXXXX")
  pid=""
  trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$W"' EXIT
  unset http_proxy HTTP_PROXY all_proxy ALL_PROXY
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

# slower_p FILE_A FILE_B [COLUMN]: whether the runs of A (a column of
# numbers, 1 by default) are larger than those of B, or only noise: prints
# "P p": P the share of pairs (a, b) with a > b (ties count half; 0.5: no
# difference), p the one-sided exact p-value of the Mann-Whitney U test
# (the chance of a U this large if A and B were the same distribution).
# With 5 runs each, p < 0.05 needs P >= 0.84; the smallest p is 1/252.
slower_p() {
  awk -v c="${3:-1}" 'FNR == 1 { f++ } f == 1 { a[++n] = $c } f == 2 { b[++m] = $c }
    END {
      if (!n || !m) { print "nan nan"; exit }
      u = 0
      for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) u += a[i] > b[j] ? 1 : (a[i] == b[j] ? 0.5 : 0)
      # N[i,j,k]: orderings of i values of A and j of B with U = k; the
      # largest value is A (it beats all j) or B (beats none).
      for (i = 0; i <= n; i++) for (j = 0; j <= m; j++) for (k = 0; k <= i * j; k++) {
        if (!i || !j) { N[i, j, k] = k == 0; continue }
        N[i, j, k] = (k >= j ? N[i - 1, j, k - j] : 0) + (k <= i * (j - 1) ? N[i, j - 1, k] : 0)
      }
      tot = 0; tail = 0
      for (k = 0; k <= n * m; k++) { tot += N[n, m, k]; if (k >= int(u)) tail += N[n, m, k] }
      printf "%.2f %.2g\n", u / (n * m), tail / tot
    }' "$1" "$2"
}
