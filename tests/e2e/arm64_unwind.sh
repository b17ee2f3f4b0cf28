#!/bin/sh
# arm64: the cfi walk against libunwind frame by frame (CPROF_UNWIND_CHECK)
# on tests/progs/arm64_unwind.c cross-compiled for aarch64 — recursion, a
# function pointer, alloca (CFA from x29), a frame of several KiB (x29 and
# x30 saved far below the CFA), a thread — built with frame pointers and
# at -O2 without: no mismatch, and every stack walked by cfi itself (no
# fallback to libunwind). Built with -mbranch-protection=pac-ret (qemu's
# CPU signs the return addresses on the stack), the walk strips the
# signatures: its stacks, as go tool pprof names them, are those of the
# checked frame-pointer build. (libunwind 1.6 does not strip them: it
# cannot be the reference there.)
# timeout: 300
. "$(dirname "$0")/arm64_common.inc"

# run NAME FLAGS [VAR=VALUE...]: builds and runs the program; the check's
# report, if asked for, in $T/NAME.err.
run() {
  name=$1; flags=$2; shift 2
  acc_prog "$T/$name" "$PROGS/arm64_unwind.c" $flags
  (export CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" "$@"; arun "$T/$name") > "$T/$name.out" 2> "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name: program failed"; }
  grep -qx 'done 15' "$T/$name.out" || { cat "$T/$name.out"; fail "$name: the program's own output"; }
  go tool pprof -traces -sample_index=alloc_space "$T/$name" "$T/$name.pb.gz" 2>/dev/null |
    grep -v -e '^File:' -e '^Build ID:' -e '^Type:' -e '^Time:' -e '^Duration:' > "$T/$name.traces"
  grep -q recurse "$T/$name.traces" || fail "$name: no traces"
}

for v in fp nofp; do
  case $v in fp) flags=-fno-omit-frame-pointer ;; nofp) flags="-O2 -fomit-frame-pointer" ;; esac
  run $v "$flags" CPROF_UNWIND_CHECK=1
  line=$(grep '^cprof: unwind check: [0-9]' "$T/$v.err") || { cat "$T/$v.err"; fail "$v: no check report"; }
  note "$v: $line"
  set -- $line # $4 compared, $7 mismatches, $11 cfi walks, $14 fallbacks
  [ "$7" = 0 ] || { head -20 "$T/$v.err"; fail "$v: $7 stacks differ from libunwind's"; }
  [ "$4" -ge 15 ] || fail "$v: only $4 stacks compared"
  [ "${14}" = 0 ] && [ "${11}" = "$4" ] || fail "$v: cfi walked ${11} of $4 stacks"
done

run pac "-fno-omit-frame-pointer -mbranch-protection=pac-ret"
cmp -s "$T/fp.traces" "$T/pac.traces" ||
  { diff "$T/fp.traces" "$T/pac.traces" | head -40; fail "pac: stacks differ from the checked build's"; }
note "pac-ret: the same stacks"
exit 0
