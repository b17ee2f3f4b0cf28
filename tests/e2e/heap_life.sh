#!/bin/sh
# Allocations with known lifetimes (tests/progs/heaplife.c), under glibc,
# jemalloc and tcmalloc behind cprof, read back with go tool pprof:
# - temporaries (temp_objects/temp_space): exactly the immediately-freed
#   blocks at CPROF_RATE=1, none of the kept ones; at the default rate the
#   estimate lies within five standard errors, and kept sites are 0;
# - the peak profile (CPROF_PEAK_PROFILE): exactly the spike and what was
#   live with it at rate 1, within five standard errors at the default rate;
# - the leak profile (CPROF_LEAK_PROFILE): exactly the dropped blocks at
#   rate 1, within five standard errors at the default rate, and never a
#   block kept by a global, a heap block, another thread's stack or an
#   interior pointer; CPROF_LEAK_SUPPRESS leaves them out and counts them;
#   a stale entry (a block freed behind cprof and unmapped) is not read;
#   with no signal free to stop the threads there is no scan, and it says so,
#   unless the program has one thread (nothing to stop: it is scanned);
#   a thread that runs through the scan may unmap what it reads;
#   cprof's own frames are no roots (a dropped block whose only pointer is
#   the path given to cprof_leak_profile_write is a leak);
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

# kept PROFILE TRUTH: no "TRUTH KEPT fn" site in the profile.
kept() {
  pprof_flat inuse_space "$1" "$T/life" > "$T/flat.b"
  awk -v prof="$1" 'FILENAME ~ /flat.b$/ { b[$1]=$2; next }
    $1 == "TRUTH" && $2 == "KEPT" && b[$3] + 0 != 0 { printf "%s: %s is reachable, reported with %s B\n", prof, $3, b[$3]; bad=1 }
    END { exit bad }' "$T/flat.b" "$2" || fail "$1: reachable blocks in the leak profile"
}

# estimate KIND BYTES_INDEX PROFILE TRUTH: within 5 standard errors of the
# truth (0 exactly where the truth is 0, never 0 where that is improbable). With n objects of size s sampled
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
      # Nothing sampled has probability exp(-want/R): the sd bound alone
      # would let a profile that can never report this site pass.
      if (got == 0 && want / R > 15) { printf "%s %s %s: 0, want %d (P(0) = exp(-%.0f))\n", prof, kind, $3, want, want / R; bad=1 }
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
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$a.heap" CPROF_PEAK_PROFILE="$T/$a.peak" \
      CPROF_LEAK_PROFILE="$T/$a.leak" LD_PRELOAD="$pre" "$T/life" small > "$T/$a.truth" ||
    fail "$a: program failed"
  exact TEMP temp_objects temp_space "$T/$a.heap" "$T/$a.truth"
  go tool pprof -raw "$T/$a.heap" 2>/dev/null | grep -q 'inuse_space/bytes\[dflt\] temp_objects/count temp_space/bytes resident_space/bytes$' ||
    fail "$a: the sample types are not Go's four (inuse_space the default), the temporaries and residency"
  exact PEAK inuse_objects inuse_space "$T/$a.peak" "$T/$a.truth"
  exact LEAK inuse_objects inuse_space "$T/$a.leak" "$T/$a.truth"
  kept "$T/$a.leak" "$T/$a.truth"
  note "$a rate 1: temporaries, peak and leaks exact"

  # The default rate: estimates.
  env CPROF_SEED=7 CPROF_HEAP_PROFILE="$T/$a.bheap" CPROF_PEAK_PROFILE="$T/$a.bpeak" \
      CPROF_LEAK_PROFILE="$T/$a.bleak" LD_PRELOAD="$pre" "$T/life" big > "$T/$a.btruth" ||
    fail "$a: program failed (big)"
  estimate TEMP temp_space "$T/$a.bheap" "$T/$a.btruth"
  estimate PEAK inuse_space "$T/$a.bpeak" "$T/$a.btruth"
  estimate LEAK inuse_space "$T/$a.bleak" "$T/$a.btruth"
  kept "$T/$a.bleak" "$T/$a.btruth"
  note "$a default rate: temporaries, peak and leaks within bounds"
done

# Suppressions in LeakSanitizer's format: by function, and by object file.
printf '# known\nleak:drop_bl*\n\nleak:^/no/such/lib.so$\ncalled_from_lib:x\n' > "$T/supp"
env CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/supp.leak" CPROF_LEAK_SUPPRESS="$T/supp" LD_PRELOAD="$LIB" \
  "$T/life" small > /dev/null || fail "suppressed: program failed"
[ "$(pprof_flat inuse_space "$T/supp.leak" "$T/life" | awk '$1 == "drop_blocks" { print $2 }')" = "" ] ||
  fail "suppressed leaks are in the profile"
go tool pprof -raw "$T/supp.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: 0 unreachable .* 20 suppressed;' ||
  fail "the leak profile does not count the suppressed leaks"
printf 'leak:libc.so\n' > "$T/supp2" # every stack passes through __libc_start_main
env CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/supp2.leak" CPROF_LEAK_SUPPRESS="$T/supp2" LD_PRELOAD="$LIB" \
  "$T/life" small > /dev/null || fail "suppressed by library: program failed"
go tool pprof -raw "$T/supp2.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: 0 unreachable .* 20 suppressed;' ||
  fail "a suppression by object file does not apply"
note "suppressions apply"

# C++ (read with cprof: go tool pprof cannot read DWARF with <vector>):
# a vector's buffer kept through the heap vector object, a base subobject
# and a new[] array past its cookie are reachable; a dropped vector is
# leaked, object and buffer.
cc_prog "$T/life_cpp" "$PROGS/heaplife_cpp.cc"
env CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/cpp.leak" LD_PRELOAD="$LIB" "$T/life_cpp" > "$T/cpp.truth" ||
  fail "C++: program failed"
for idx in inuse_objects inuse_space; do
  "$CPROF" -top -cum -unit=byte -nodefraction=0 -nodecount=100000 -sample_index=$idx "$T/cpp.leak" > "$T/cpp.$idx" 2>&1 ||
    { cat "$T/cpp.$idx"; fail "C++: cprof cannot read the leak profile"; }
done
awk 'FILENAME ~ /objects$/ && /^ / { v=$4; sub(/(B|byte)$/, "", v); o[$6]=v; next }
     FILENAME ~ /space$/ && /^ / { v=$4; sub(/(B|byte)$/, "", v); b[$6]=v; next }
     $2 == "LEAK" && (o[$3] != $4 || b[$3] != $5) { printf "%s: %s objects %s B leaked, truth %s / %s\n", $3, o[$3], b[$3], $4, $5; bad=1 }
     $2 == "KEPT" && ($3 in b) { printf "%s: reachable, reported\n", $3; bad=1 }
     END { exit bad }' "$T/cpp.inuse_objects" "$T/cpp.inuse_space" "$T/cpp.truth" || fail "C++: the leak profile differs from the truth"
note "C++: vector buffers and interior pointers"

# A stale entry: a block freed behind cprof's back and unmapped is not read.
cc_prog "$T/stale" "$PROGS/heaplife_stale.c"
CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/stale.leak" LD_PRELOAD="$LIB" "$T/stale" > /dev/null ||
  fail "stale entry: the program failed (the scan read unmapped memory)"
go tool pprof -raw "$T/stale.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: ' ||
  fail "stale entry: no leak profile"
note "stale live-map entry: scanned safely"
CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/nosig.leak" LD_PRELOAD="$LIB" "$T/stale" nosig > /dev/null ||
  fail "no stop signal: the program failed"
go tool pprof -raw "$T/nosig.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: not scanned: the threads could not be stopped' ||
  fail "no stop signal: the profile does not say the scan was skipped"
[ "$(pprof_flat inuse_space "$T/nosig.leak" "$T/stale" | wc -l)" = 0 ] || fail "no stop signal: leaks reported"
note "no stop signal: not scanned, said so"
CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/nosig1.leak" LD_PRELOAD="$LIB" "$T/stale" nosig1 > "$T/nosig1.out" ||
  fail "no stop signal, one thread: the program failed"
[ "$(cat "$T/nosig1.out")" = freed ] || fail "no stop signal, one thread: output differs"
go tool pprof -raw "$T/nosig1.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: 1 unreachable .* 0 threads stopped, 0 missed;' ||
  fail "no stop signal, one thread: not scanned"
note "no stop signal, one thread: scanned (nothing to stop)"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  CPROF_SEED=$i CPROF_LEAK_PROFILE="$T/unmap.leak" LD_PRELOAD="$LIB" "$T/stale" unmapper > /dev/null ||
    fail "a thread unmapping during the scan: the program failed (run $i)"
  go tool pprof -raw "$T/unmap.leak" 2>/dev/null | grep -q '^Comment: cprof leaks: .* 1 missed;' ||
    fail "a thread unmapping during the scan: not scanned with it missed (run $i)"
done
note "a running thread unmapping memory during the scan: no fault"

# The C API of a linked program: peak, reset, leaks.
cc_prog "$T/life_api" "$PROGS/heaplife_api.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
mkdir "$T/api"
CPROF_RATE=1 "$T/life_api" "$T/api" || fail "API: program failed"
flat() { pprof_flat inuse_space "$2" "$T/life_api" | awk -v f="$1" '$1 == f { print $2 }'; }
[ "$(flat api_spike "$T/api/peak1.pb.gz")" = 1000000 ] || fail "API: the peak is not the spike"
[ "$(flat api_spike "$T/api/peak2.pb.gz")" = "" ] || fail "API: the spike is in the peak after the reset"
[ "$(flat api_dropped "$T/api/leak.pb.gz")" = 4321 ] || fail "API: the dropped block is not in the leak profile"
[ "$(flat api_passed "$T/api/leak2.pb.gz")" = 2345 ] ||
  fail "API: a dropped block passed to cprof is kept by cprof's own frames"
note "C API: peak, reset, leaks"

# cprof's tool names the new sample types.
"$CPROF" -top -sample_index=temp_objects "$T/glibc.heap" > "$T/cprof.top" 2>&1 || { cat "$T/cprof.top"; fail "cprof -sample_index=temp_objects failed"; }
grep -q '^Type: temp_objects$' "$T/cprof.top" && grep -qE '^ +1000 .* temp_blocks$' "$T/cprof.top" ||
  { cat "$T/cprof.top"; fail "cprof does not show temp_objects"; }
"$CPROF" -top "$T/glibc.heap" 2>&1 | grep -q '^Type: inuse_space$' || fail "cprof does not open the heap profile on inuse_space"
exit 0
