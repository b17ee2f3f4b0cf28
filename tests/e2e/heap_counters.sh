#!/bin/sh
# cprof_stats' exact counters (mallocs, frees, live bytes and objects)
# move by exactly what the program did, in blocks of every kind and size,
# with glibc behind cprof (whose usable sizes cprof reads from the chunk
# headers) and with jemalloc and tcmalloc (whose malloc_usable_size it
# calls): tests/progs/counters.c checks, against its own sums of the
# sizes the allocator's malloc_usable_size gives.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

cc_prog "$T/counters" "$PROGS/counters.c"
for rate in 1 524288; do
  for behind in glibc "$JEMALLOC" "$TCMALLOC"; do
    case $behind in
      glibc) pre=$LIB ;;
      *) [ -r "$behind" ] || { note "no $behind: skipped"; continue; }; pre="$LIB $behind" ;;
    esac
    out=$(CPROF_RATE=$rate LD_PRELOAD="$pre" "$T/counters" ${behind#glibc} 2>&1)
    [ "$out" = ok ] || fail "rate $rate, ${behind##*/}: $out"
    note "rate $rate, ${behind##*/}: exact"
  done
done
exit 0
