#!/bin/sh
# CPU samples while a thread holds the loader's lock: no deadlock.
# tests/progs/cpu_dlwalk.c computes inside a dl_iterate_phdr callback (the
# loader's lock held, as a C++ throw or cprof's own heap unwinder holds it)
# beside a thread computing outside it, both in straight-line code where
# nearly every SIGPROF lands at a new PC, so that the handler's unwinder
# looks unwind rules up through dl_iterate_phdr. With libunwind's global
# cache, whose mutex is held across that lookup, the two handlers took
# each other's lock and the program hung for good with every signal
# blocked (cpu_stress.sh's HTTP sessions then got no answer). The program
# must finish, and the profile must hold the computing function.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/dlwalk" "$PROGS/cpu_dlwalk.c"

run() { # NAME [VAR=VALUE...]
  name=$1; shift
  timeout -k 5 60 env CPROF_CPU_HZ=1000 CPROF_CPU_PROFILE="$T/$name.pb.gz" "$@" LD_PRELOAD="$LIB" \
    "$T/dlwalk" 20 100 > "$T/$name.out" 2> "$T/$name.err"
  rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$name: deadlock (killed after 60 s)"
  [ $rc -eq 0 ] || { cat "$T/$name.out" "$T/$name.err"; fail "$name: exit status $rc"; }
  grep -qx ok "$T/$name.out" || { cat "$T/$name.out"; fail "$name: no ok"; }
  [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: stderr not empty"; }
  "$BUILD/cprof" -top "$T/$name.pb.gz" > "$T/$name.top" 2>&1 || { cat "$T/$name.top"; fail "$name: CPU profile unreadable"; }
  grep -q ' wide_code$' "$T/$name.top" || { cat "$T/$name.top"; fail "$name: no wide_code in the CPU profile"; }
  note "$name: $(sed -n 's/^Duration: //p' "$T/$name.top")"
}

run libunwind
run rate1 CPROF_RATE=1
exit 0
