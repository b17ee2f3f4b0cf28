#!/bin/sh
# The next pthread_sigmask, sigprocmask and sigpending (sigmask.h) are
# found as libcprof.so starts, CPU profile or not (CPROF_CPU_HZ=0): a
# program's first call, from a signal handler
# (tests/progs/sigmask_first.c), must not run dlsym there. The loader's
# LD_DEBUG=bindings shows when libcprof.so binds to the C library's ones:
# before the program's main, never after.
# timeout: 30
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/sf" "$PROGS/sigmask_first.c"
LD_DEBUG=bindings CPROF_CPU_HZ=0 LD_PRELOAD="$LIB" "$T/sf" > "$T/out" 2> "$T/err" ||
  { tail -20 "$T/err"; fail "the program failed"; }
[ "$(cat "$T/out")" = ok ] || fail "output: $(cat "$T/out")"
grep -qx MAIN "$T/err" || fail "no MAIN on stderr"
pat="binding file [^ ]*libcprof\.so .* to [^ ]*libc\.so\.6 .*normal symbol .(pthread_sigmask|sigprocmask|sigpending)'"
n=$(sed -n '1,/^MAIN$/p' "$T/err" | grep -cE "$pat")
[ "$n" = 3 ] || { grep -E "$pat" "$T/err"; fail "$n of 3 found before main"; }
sed -n '/^MAIN$/,$p' "$T/err" | grep -E "$pat" && fail "found after main (in the handler)"
note "the next pthread_sigmask, sigprocmask and sigpending found before main"
exit 0
