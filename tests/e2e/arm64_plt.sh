#!/bin/sh
# arm64: CPU samples that interrupt a PLT stub keep their callers. A stub
# has no .eh_frame row (aarch64's linkers emit none for .plt); the cfi walk
# from the signal's registers models it as a leaf (return address in x30,
# sp the caller's: pltstub.h) instead of handing the sample to libunwind,
# which does not strip the pac-ret signatures of the callers' saved return
# addresses and cut such stacks to "stub <- plt_spin" (and, slow under
# qemu, took more than a period per sample: each sample made the next one,
# at the same stub, so arm64_cpu.sh's spin_b lost hundreds of ms to
# its clock_gettime@plt). tests/progs/arm64_plt.c spends its CPU time in a
# block that ends in a call of labs@plt; under qemu-aarch64, which delivers
# a signal at the start of a translated block, most samples are at the
# stub. Checked with go tool pprof -raw: some samples are at the stub (else
# this test would test nothing), and every one of them goes stub <-
# plt_spin <- main; plt_spin's time within four standard deviations plus
# two periods of what the program measured (as arm64_cpu.sh).
# timeout: 120
. "$(dirname "$0")/arm64_common.inc"

acc_prog "$T/plt" "$PROGS/arm64_plt.c" -fno-builtin -mbranch-protection=pac-ret
CPROF_CPU_PROFILE="$T/plt.pb.gz" arun "$T/plt" 300 > "$T/plt.out" 2> "$T/plt.err" ||
  { cat "$T/plt.err"; fail "program failed"; }
[ -s "$T/plt.err" ] && { cat "$T/plt.err"; fail "stderr not empty"; }
read -r word ms calls < "$T/plt.out"
[ "$word" = PLT ] && [ "${ms:-0}" -ge 300 ] && [ "${calls:-0}" -gt 0 ] ||
  { cat "$T/plt.out"; fail "the program's own output"; }
[ -s "$T/plt.pb.gz" ] || fail "no profile written"

# labs@plt's address in the binary (the PIE is linked at 0).
stub=$(aarch64-linux-gnu-objdump -d "$T/plt" | awk '/<labs@plt>:$/ { print "0x" $1; exit }')
[ -n "$stub" ] || fail "no labs@plt in the binary"
go tool pprof -raw "$T/plt" "$T/plt.pb.gz" > "$T/raw" 2>/dev/null || fail "go tool pprof -raw"
# The samples (count, location ids), each location's address relative to
# its mapping's start and function; samples whose leaf is in the stub (its
# four instructions) must go on with plt_spin, then main.
awk -v stub="$stub" "$HEX"'
  /^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0; m = 1; next }
  s && $2 ~ /:$/ { ns++; cnt[ns] = $1; st[ns] = ""; for (i = 3; i <= NF; i++) st[ns] = st[ns] " " $i }
  l && $1 ~ /:$/ { id = $1 + 0; addr[id] = hex($2); fn[id] = $4; sub(/^M=/, "", $3); map[id] = $3 }
  m && $1 ~ /:$/ { split($2, r, "/"); base[$1 + 0] = hex(r[1]) - hex(r[3]) }
  END {
    lo = hex(stub)
    for (k = 1; k <= ns; k++) {
      split(substr(st[k], 2), ids, " ")
      a = addr[ids[1]] - base[map[ids[1]]]
      if (map[ids[1]] != 1 || a < lo || a >= lo + 16) continue
      at += cnt[k]
      if (fn[ids[2]] != "plt_spin" || fn[ids[3]] != "main") {
        print "stack at labs@plt:", fn[ids[1]], fn[ids[2]], fn[ids[3]]; bad = 1 }
    }
    print at + 0 > "/dev/stderr"
    exit bad
  }' "$T/raw" 2> "$T/at" || fail "a sample at labs@plt misses its callers"
at=$(cat "$T/at")
[ "$at" -ge 1 ] || fail "no sample at labs@plt: the test tests nothing"
cum=$(cum_ms "go tool pprof" plt_spin plt)
within plt_spin "$cum" "$ms"
note "$at samples at labs@plt, all under plt_spin <- main; plt_spin ${cum}ms (measured $ms)"
exit 0
