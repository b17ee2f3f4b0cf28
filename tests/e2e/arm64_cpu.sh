#!/bin/sh
# arm64: the CPU profile of a program cross-compiled for aarch64 under
# qemu-aarch64 (which delivers the SIGPROF of cprof's per-thread CPU timers
# as the kernel does). tests/progs/arm64_cpu.c spends a known thread CPU
# time in spin_a (twice spin_b's), both in leaf(), a function without a
# frame record: the profile must read aarch64's signal context (the
# interrupted pc) and find leaf's callers. Checked by go tool pprof (the
# arm64 binary given) and the host's cprof: each function's time within
# four standard deviations plus two periods of what the program measured,
# leaf's and thread_ms's callers spin_a and spin_b, under main, in every
# sample that is in them. Also built with -mbranch-protection=pac-ret: the return addresses
# on the stack are signed, which the cfi walk from the signal's registers
# strips (libunwind 1.6 lost the callers: leaf <- spin_a <- spin_a).
# timeout: 180
. "$(dirname "$0")/arm64_common.inc"

# check NAME [FLAGS...]: builds, runs and checks one build of the program.
check() {
  name=$1; shift
  acc_prog "$T/$name" "$PROGS/arm64_cpu.c" "$@"
  CPROF_CPU_PROFILE="$T/$name.pb.gz" arun "$T/$name" 400 > "$T/$name.out" 2> "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name: program failed"; }
  [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: stderr not empty"; }
  read -r word a_ms b_ms < "$T/$name.out"
  [ "$word" = CPU ] && [ "${a_ms:-0}" -ge 800 ] && [ "${b_ms:-0}" -ge 400 ] ||
    { cat "$T/$name.out"; fail "$name: the program's own output"; }
  [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
  for tool in "go tool pprof" "$BUILD/cprof"; do
    a=$(cum_ms "$tool" spin_a); b=$(cum_ms "$tool" spin_b); l=$(cum_ms "$tool" leaf)
    within "$name: spin_a" "$a" "$a_ms"
    within "$name: spin_b" "$b" "$b_ms"
    # Nearly all of it in leaf (the rest: the clock calls of the loops).
    [ "$l" -ge $(((a + b) * 3 / 4)) ] || fail "$name: leaf: ${l}ms of $((a + b))ms"
    note "$name, ${tool##*/}: spin_a ${a}ms (measured $a_ms), spin_b ${b}ms (measured $b_ms), leaf ${l}ms"
  done
  # Every stack through leaf goes leaf <- spin_a|spin_b <- main, and every
  # one through thread_ms (also from clock_gettime@plt, a stub without
  # .eh_frame: arm64_plt.sh) thread_ms <- spin_a|spin_b <- main.
  go tool pprof -traces "$T/$name" "$T/$name.pb.gz" 2>/dev/null |
    awk '/^-+\+/ { if (n) check(); n = 0; next } NF { f[++n] = $NF } END { if (n) check(); exit bad }
         function check(   i) { for (i = 1; i <= n; i++) if (f[i] == "leaf" || f[i] == "thread_ms") break
           if (i <= n && !((f[i + 1] == "spin_a" || f[i + 1] == "spin_b") && f[i + 2] == "main")) {
             s = "stack:"; for (i = 1; i <= n && i <= 4; i++) s = s " " f[i]; print s; bad = 1 } }' ||
    fail "$name: a stack through leaf or thread_ms misses its callers"
}
check plain
check pac -mbranch-protection=pac-ret
exit 0
