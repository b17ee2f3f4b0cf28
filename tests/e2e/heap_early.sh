#!/bin/sh
# Allocations made before cprof's constructor would have run are recorded:
# a shared library's constructor (tests/progs/early_lib.c; the loader runs
# it before the constructors of objects loaded earlier, LD_PRELOAD's
# included) at CPROF_RATE=1 shows its exact bytes; and a small C++
# program's peak profile at rate 1 (libstdc++'s emergency pool included,
# allocated by its constructor) sums to valgrind massif's peak. A CPU
# profile started then still expands %e to the program's name.
# timeout: 200
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is needed (go tool pprof)"

gcc -std=gnu11 -g -O1 -shared -fPIC -o "$T/libearly.so" "$PROGS/early_lib.c" || fail "cannot build early_lib"
cc_prog "$T/early" "$PROGS/early_main.c" -L"$T" -learly -Wl,-rpath,"$T"
"$T/early" > "$T/want.out" || fail "plain run failed"
grep -qx 'early sum 14' "$T/want.out" || fail "plain run: unexpected output"

for how in preload linked; do
  case $how in
    preload) run="env LD_PRELOAD=$LIB $T/early" ;;
    linked)
      cc_prog "$T/early_linked" "$PROGS/early_main.c" -L"$T" -learly -Wl,-rpath,"$T" \
        -L"$BUILD" -Wl,--no-as-needed -lcprof -Wl,-rpath,"$BUILD"
      run="$T/early_linked" ;;
  esac
  CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$how.pb.gz" CPROF_CPU_PROFILE="$T/cpu.%e.pb.gz" $run > "$T/$how.out" 2> "$T/$how.err" ||
    { cat "$T/$how.err"; fail "$how: exit status $?"; }
  cmp -s "$T/want.out" "$T/$how.out" || fail "$how: output differs"
  pprof_flat inuse_space "$T/$how.pb.gz" "$T/libearly.so" > "$T/$how.inuse"
  pprof_flat alloc_space "$T/$how.pb.gz" "$T/libearly.so" > "$T/$how.alloc"
  grep -qx 'early_ctor_alloc 54321' "$T/$how.inuse" ||
    { cat "$T/$how.inuse"; fail "$how: the constructor's 54321 live bytes are missing"; }
  grep -qx 'early_ctor_alloc 55321' "$T/$how.alloc" ||
    { cat "$T/$how.alloc"; fail "$how: the constructor's 55321 allocated bytes are missing"; }
  # Started before the C library's constructor: the patterns still know
  # the program's name (%e).
  prog=${run##*/}
  [ -s "$T/cpu.$prog.pb.gz" ] || { ls "$T"; fail "$how: no cpu.$prog.pb.gz (%e)"; }
  note "$how: ok"
done

command -v valgrind >/dev/null || skip "valgrind is needed for the massif part"
cc_prog "$T/cxx" "$PROGS/early_cxx.cc"
"$T/cxx" > "$T/cxx.want" || fail "C++ plain run failed"
valgrind --tool=massif --peak-inaccuracy=0 --heap-admin=0 --massif-out-file="$T/massif.out" \
  "$T/cxx" > "$T/cxx.vg" 2>/dev/null || fail "massif run failed"
cmp -s "$T/cxx.want" "$T/cxx.vg" || fail "massif run: output differs"
want=$(sed -n 's/^mem_heap_B=//p' "$T/massif.out" | sort -n | tail -n1)
CPROF_RATE=1 CPROF_PEAK_PROFILE="$T/peak.pb.gz" LD_PRELOAD="$LIB" "$T/cxx" > "$T/cxx.out" 2> "$T/cxx.err" ||
  { cat "$T/cxx.err"; fail "C++: exit status $?"; }
cmp -s "$T/cxx.want" "$T/cxx.out" || fail "C++: output differs"
got=$(go tool pprof -top -unit=byte -sample_index=inuse_space "$T/cxx" "$T/peak.pb.gz" 2>/dev/null |
  sed -n 's/^Showing nodes accounting for \([0-9]*\)B.*/\1/p')
[ "${got:-none}" = "$want" ] || fail "C++: peak profile holds ${got:-no} bytes, massif's peak is $want"
note "C++ peak: $got B, as massif's"
exit 0
