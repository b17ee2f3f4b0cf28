#!/bin/sh
# The loader-lock deadlock of heap profilers (gperftools#225, #1210): while
# 2 threads dlopen/dlclose a small library (with a constructor that
# allocates and thread-local storage the loader allocates on first use),
# 4 threads allocate at CPROF_RATE=1, so every allocation unwinds (libunwind
# and the frame-pointer walk, and cfi.c's walk) while the loader changes the list of objects.
# Each run has 2 seconds of work and a 30 s limit: hitting the limit means
# a deadlock. Then the program's output and profile must be sound.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

gcc -std=gnu11 -g -O1 -shared -fPIC -o "$T/libdlopen_lib.so" "$PROGS/dlopen_lib.c" ||
  fail "cannot build dlopen_lib.c"
cc_prog "$T/storm" "$PROGS/dlopen_storm.c" -ldl

for unwind in cfi libunwind fp; do
  for rate in 1 524288; do
    name=$unwind.$rate
    timeout -k 5 30 env CPROF_UNWIND=$unwind CPROF_RATE=$rate CPROF_HEAP_PROFILE="$T/$name.pb.gz" \
      LD_PRELOAD="$LIB" "$T/storm" "$T/libdlopen_lib.so" 2 > "$T/$name.out" 2> "$T/$name.err"
    rc=$?
    case $rc in
      0) ;;
      124|137) fail "$name: still running after 30 s: deadlock" ;;
      *) cat "$T/$name.err"; fail "$name: exit status $rc" ;;
    esac
    [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: unexpected stderr"; }
    read -r ok cycles allocs < "$T/$name.out"
    [ "$ok" = ok ] && [ "$cycles" -gt 100 ] && [ "$allocs" -gt 1000 ] ||
      fail "$name: output '$(cat "$T/$name.out")': too little work done"
    [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
    go tool pprof -raw -symbolize=none "$T/$name.pb.gz" > "$T/$name.raw" 2>&1 ||
      { cat "$T/$name.raw"; fail "$name: go tool pprof cannot load the profile"; }
    # alloc_round is the allocating threads' function: it must be there
    # (sampled at the default rate too: it allocates gigabytes).
    pprof_flat alloc_objects "$T/$name.pb.gz" > "$T/$name.flat"
    grep -q '^alloc_round [1-9]' "$T/$name.flat" || { cat "$T/$name.flat"; fail "$name: alloc_round missing"; }
    note "$name: $cycles dlopen cycles, $allocs allocations"
  done
done

# At rate 1 alloc_round's 17 allocations a round (16 malloc + 1 realloc)
# are all there and all freed.
set -- $(awk '$1 == "alloc_round" { print $2 }' "$T/libunwind.1.flat")
want=$(awk '{ print $3 }' "$T/libunwind.1.out")
[ "$1" = "$want" ] || fail "rate 1: alloc_round has $1 allocations, the program made $want"
pprof_flat inuse_objects "$T/libunwind.1.pb.gz" | grep '^alloc_round [1-9]' && fail "rate 1: alloc_round objects still in use"
exit 0
