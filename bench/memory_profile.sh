#!/usr/bin/env bash
# memory_profile.sh — what the memory profile costs: the mmap hook per
# mmap/munmap pair of 64 KiB (bench/workloads/memprof.c), plain, with
# libcprof.so at the default rate and at CPROF_RATE=1 (every mapping kept
# with its stack), as the median of interleaved runs of the process's CPU ns
# per pair (a pair is two hooked calls); and the wall time of one
# cprof_memory_profile_write, then of one cprof_heap_profile_write (whose
# resident_space reads pagemap per live sampled block), on a process with
# BENCH_MEM_MIB (1024) MiB resident and 100000 live 1000-byte blocks, at
# the default rate and at rate 1.
#
#   bench/memory_profile.sh   BENCH_RUNS=N (default 7)  BENCH_PAIRS=N (200000)
set -euo pipefail
export LC_ALL=C
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
bench_init memory_profile
RUNS=${BENCH_RUNS:-7}
PAIRS=${BENCH_PAIRS:-200000}
MIB=${BENCH_MEM_MIB:-1024}
${CC:-cc} -O2 -o "$W/memprof" "$TOP/bench/workloads/memprof.c" -ldl || die "cannot build memprof.c"

echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= RUNS; r++)); do
  "$W/memprof" pairs "$PAIRS" >> "$W/plain"
  LD_PRELOAD=$LIB "$W/memprof" pairs "$PAIRS" >> "$W/default"
  CPROF_RATE=1 LD_PRELOAD=$LIB "$W/memprof" pairs "$PAIRS" >> "$W/rate1"
  LD_PRELOAD=$LIB "$W/memprof" write "$MIB" 100000 "$W/m.pb.gz" >> "$W/wdefault"
  CPROF_RATE=1 LD_PRELOAD=$LIB "$W/memprof" write "$MIB" 100000 "$W/m.pb.gz" >> "$W/wrate1"
done
p=$(median "$W/plain" 1)
for c in plain default rate1; do
  m=$(median "$W/$c" 1)
  d=$(echo "$m - $p" | bc)
  printf 'mmap+munmap %-8s %6s ns/pair  %+6.0f ns (%+.0f ns per hooked call)\n' "$c" "$m" "$d" \
    "$(echo "$d / 2" | bc -l)"
done
printf 'memory profile write, %s MiB resident: default rate %s ms, rate 1 %s ms\n' "$MIB" \
  "$(median "$W/wdefault" 1)" "$(median "$W/wrate1" 1)"
printf 'heap profile write (with resident_space), same process: default rate %s ms, rate 1 %s ms\n' \
  "$(median "$W/wdefault" 2)" "$(median "$W/wrate1" 2)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
