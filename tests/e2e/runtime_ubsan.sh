#!/bin/sh
# libcprof.so built with UBSan (build/ubsan/libcprof.so, -fno-sanitize-recover:
# any undefined behaviour aborts the program) preloaded under the
# multi-threaded end-to-end tests: threads allocating and freeing across
# each other at rate 1 and the default rate, with libunwind and the
# frame-pointer walk (heap_threads, heap_stress), thread and lock profiles
# (threads_profile), and handlers allocating in signal handlers
# (heap_sighandler), dumps on a signal and out of memory (dump_signal,
# dump_oom). The tests' own checks hold as with the plain build.
# (ASan and TSan cannot wrap a malloc interposer: see CONTRIBUTING.md, Testing notes.)
# timeout: 600
. "$(dirname "$0")/../lib.sh"

UB=$BUILD/ubsan/libcprof.so
[ -f "$UB" ] || fail "no $UB (run make tests)"
export CPROF_LIB="$UB" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in heap_threads heap_stress threads_profile heap_sighandler dump_signal dump_oom; do
  sh "$TOP/tests/e2e/$t.sh" > "$T/$t.log" 2>&1
  rc=$?
  grep -q 'runtime error' "$T/$t.log" && { cat "$T/$t.log"; fail "$t: undefined behaviour under UBSan"; }
  [ $rc = 0 ] || { cat "$T/$t.log"; fail "$t under UBSan: exit $rc"; }
  note "$t: ok under UBSan"
done
exit 0
