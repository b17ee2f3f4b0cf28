#!/bin/sh
# Allocations with known lifetimes (tests/progs/heaplife.c), under glibc,
# jemalloc and tcmalloc behind cprof, read back with go tool pprof:
# - temporaries (temp_objects/temp_space): exactly the immediately-freed
#   blocks at CPROF_RATE=1, none of the kept ones; at the default rate the
#   estimate lies within five standard errors, and kept sites are 0;
# - the peak profile (CPROF_PEAK_PROFILE): exactly the spike and what was
#   live with it at rate 1, within five standard errors at the default rate;
# - the heap profile still opens on inuse_space, and cprof's own tool
#   shows the new sample types by name.
# CPROF_SEED makes each default-rate run reproducible.
# timeout: 600
. "$(dirname "$0")/../lib.sh"

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
CPROF=$BUILD/cprof
command -v go >/dev/null 2>&1 || skip "go (golang-go) not installed"

cc_prog "$T/life" "$PROGS/heaplife.c"

# exact KIND OBJ_INDEX BYTES_INDEX PROFILE TRUTH: every "TRUTH KIND fn n b"
# line equals go tool pprof's flat values.
exact() {
  kind=$1; oi=$2; bi=$3; prof=$4; truth=$5
  pprof_flat "$oi" "$prof" "$T/life" > "$T/flat.o"
  pprof_flat "$bi" "$prof" "$T/life" > "$T/flat.b"
  awk -v kind="$kind" -v prof="$prof" '
    FILENAME ~ /flat.o$/ { o[$1]=$2; next }
    FILENAME ~ /flat.b$/ { b[$1]=$2; next }
    $1 == "TRUTH" && $2 == kind {
      go = ($3 in o) ? o[$3] : 0; gb = ($3 in b) ? b[$3] : 0
      if (go != $4 || gb != $5) { printf "%s %s %s: profile %s objects %s B, truth %s / %s\n", prof, kind, $3, go, gb, $4, $5; bad=1 }
    }
    END { exit bad }' "$T/flat.o" "$T/flat.b" "$truth" || fail "$prof: $kind differs from the truth"
}

# estimate KIND BYTES_INDEX PROFILE TRUTH: within 5 standard errors of the
# truth (0 exactly where the truth is 0). With n objects of size s sampled
# with probability p = 1 - exp(-s/R) the sd is s*sqrt(n(1-p)/p).
estimate() {
  kind=$1; bi=$2; prof=$3; truth=$4
  pprof_flat "$bi" "$prof" "$T/life" > "$T/flat.b"
  awk -v kind="$kind" -v prof="$prof" -v R=524288 '
    FILENAME ~ /flat.b$/ { b[$1]=$2; next }
    $1 == "TRUTH" && $2 == kind {
      got = ($3 in b) ? b[$3] : 0; n = $4; want = $5
      if (n == 0) { if (got != 0) { printf "%s %s %s: %s, want 0\n", prof, kind, $3, got; bad=1 }; next }
      s = want / n; p = 1 - exp(-s/R); sd = s*sqrt(n*(1-p)/p); dev = (got - want)/sd
      printf "# %s %-14s truth %10d got %10d (%+.2f sd)\n", kind, $3, want, got, dev
      if (dev > 5 || dev < -5) { printf "%s %s %s: %s is %.1f sd from %d\n", prof, kind, $3, got, dev, want; bad=1 }
    }
    END { exit bad }' "$T/flat.b" "$truth" || fail "$prof: $kind outside 5 standard errors"
}

allocs=glibc
[ -r "$JEMALLOC" ] && allocs="$allocs jemalloc" || note "no jemalloc: skipping it"
[ -r "$TCMALLOC" ] && allocs="$allocs tcmalloc" || note "no tcmalloc: skipping it"
for a in $allocs; do
  case $a in
    glibc) pre=$LIB ;;
    jemalloc) pre="$LIB $JEMALLOC" ;;
    tcmalloc) pre="$LIB $TCMALLOC" ;;
  esac
  # Rate 1: exact.
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$a.heap" CPROF_PEAK_PROFILE="$T/$a.peak" LD_PRELOAD="$pre" "$T/life" small > "$T/$a.truth" ||
    fail "$a: program failed"
  exact TEMP temp_objects temp_space "$T/$a.heap" "$T/$a.truth"
  go tool pprof -raw "$T/$a.heap" 2>/dev/null | grep -q 'inuse_space/bytes\[dflt\] temp_objects/count temp_space/bytes$' ||
    fail "$a: the sample types are not Go's four (inuse_space the default) and the temporaries"
  exact PEAK inuse_objects inuse_space "$T/$a.peak" "$T/$a.truth"
  note "$a rate 1: temporaries and peak exact"

  # The default rate: estimates.
  env CPROF_SEED=7 CPROF_HEAP_PROFILE="$T/$a.bheap" CPROF_PEAK_PROFILE="$T/$a.bpeak" LD_PRELOAD="$pre" "$T/life" big > "$T/$a.btruth" ||
    fail "$a: program failed (big)"
  estimate TEMP temp_space "$T/$a.bheap" "$T/$a.btruth"
  estimate PEAK inuse_space "$T/$a.bpeak" "$T/$a.btruth"
  note "$a default rate: temporaries and peak within bounds"
done

# cprof's tool names the new sample types.
"$CPROF" -top -sample_index=temp_objects "$T/glibc.heap" > "$T/cprof.top" 2>&1 || { cat "$T/cprof.top"; fail "cprof -sample_index=temp_objects failed"; }
grep -q '^Type: temp_objects$' "$T/cprof.top" && grep -qE '^ +1000 .* temp_blocks$' "$T/cprof.top" ||
  { cat "$T/cprof.top"; fail "cprof does not show temp_objects"; }
"$CPROF" -top "$T/glibc.heap" 2>&1 | grep -q '^Type: inuse_space$' || fail "cprof does not open the heap profile on inuse_space"
exit 0
