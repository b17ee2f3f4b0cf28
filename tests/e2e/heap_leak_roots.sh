#!/bin/sh
# The leak scan's roots at CPROF_RATE=1 are valgrind memcheck's (all
# readable memory that is not the heap), checked against memcheck itself on
# tests/progs/leakroots.c: in each mode the program drops 5 blocks of
# 3000 B and keeps others where only a wide scan finds them:
#   mmap     in anonymous memory the program mapped;
#   joined   the stacks glibc caches for joined threads, and their DTVs;
#   early    a block its library allocated before cprof started;
#   threads  on the stacks of 200 threads, the last 50 blocking the stop
#            signal (each scanned where it sleeps), and 4 joined ones;
#   rtsig    a single thread handling every real-time signal: no thread to
#            stop, so it is scanned all the same;
#   freed    nothing kept, but each dropped block was pointed to by a block
#            freed since, in glibc's main heap and in a thread's arena:
#            free memory is no root.
# Then CPROF_LEAK_SUPPRESS naming what cannot be a suppressions file
# (/dev/zero, /dev/full, a FIFO nobody writes, an empty file, a directory)
# is refused in one line at start, and the program runs as without it.
# The leak profile must hold what memcheck calls definitely and indirectly
# lost, objects and bytes, all in drop_blocks.
# timeout: 600
. "$(dirname "$0")/../lib.sh"

command -v go >/dev/null 2>&1 || skip "go (golang-go) not installed"
gcc -std=gnu11 -g -O1 -shared -fPIC -o "$T/libleakroots_early.so" "$PROGS/leakroots_early.c" ||
  fail "cannot build leakroots_early.c"
cc_prog "$T/roots" "$PROGS/leakroots.c" -L"$T" -lleakroots_early -Wl,-rpath,"$T"

# comment PROFILE: "objects bytes" of the leak profile's comment, or "".
comment() {
  go tool pprof -raw "$1" 2>/dev/null |
    sed -n 's/^Comment: cprof leaks: \([0-9]*\) unreachable sampled objects, \([0-9]*\) bytes .*/\1 \2/p'
}

if command -v valgrind >/dev/null 2>&1; then have_vg=1; else have_vg=0; note "no valgrind: the program's own count is the truth"; fi
for mode in mmap joined early threads rtsig freed; do
  case $mode in
    mmap) kept=40 ;; early) kept=30 ;; threads) kept=200 ;; *) kept=0 ;;
  esac
  want="$mode: kept $kept, dropped 5"
  timeout -k 5 120 env CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/$mode.leak" LD_PRELOAD="$LIB" \
    "$T/roots" $mode > "$T/$mode.out" 2> "$T/$mode.err" || { cat "$T/$mode.err"; fail "$mode: exit status $?"; }
  [ "$(cat "$T/$mode.out")" = "$want" ] || fail "$mode: output '$(cat "$T/$mode.out")', want '$want'"
  [ -s "$T/$mode.err" ] && { cat "$T/$mode.err"; fail "$mode: unexpected stderr"; }
  got=$(comment "$T/$mode.leak")
  [ -n "$got" ] || { go tool pprof -raw "$T/$mode.leak" 2>&1 | grep Comment; fail "$mode: not scanned"; }
  truth="5 15000"
  if [ $have_vg = 1 ]; then
    timeout -k 5 300 valgrind --leak-check=full "$T/roots" $mode > "$T/$mode.vg.out" 2> "$T/$mode.vg" ||
      fail "$mode: the program failed under valgrind"
    [ "$(cat "$T/$mode.vg.out")" = "$want" ] || fail "$mode: output under valgrind '$(cat "$T/$mode.vg.out")'"
    truth=$(tr -d , < "$T/$mode.vg" | awk '/(definitely|indirectly) lost:/ { b += $4; o += $7 } END { print o + 0, b + 0 }')
  fi
  [ "$got" = "$truth" ] || fail "$mode: leak profile $got (objects bytes), memcheck $truth"
  [ "$(pprof_flat inuse_space "$T/$mode.leak" "$T/roots" | awk '$2 != 0' | tr '\n' ' ')" = "drop_blocks 15000 " ] ||
    { pprof_flat inuse_space "$T/$mode.leak" "$T/roots"; fail "$mode: leaks other than drop_blocks"; }
  note "$mode: $got leaked (objects bytes), as memcheck"
done
# The 50 that block the signal are always missed; on a loaded machine some
# of the other 150 may not answer within the stop's timeout either (they
# are then scanned where they sleep, as the 50, and the leaks are the same).
missed=$(go tool pprof -raw "$T/threads.leak" 2>/dev/null | sed -n 's/^Comment: .* \([0-9]*\) missed;.*/\1/p')
[ -n "$missed" ] && [ "$missed" -ge 50 ] && [ "$missed" -le 200 ] ||
  fail "threads: '$missed' missed; the 50 threads that block the signal are not all missed"
note "threads: $missed missed (50 block the stop signal)"

# Suppressions files that are none: refused at start, one line each.
mkfifo "$T/fifo" || fail "cannot make a FIFO"
: > "$T/empty"
mkdir "$T/dir"
for f in /dev/zero /dev/full "$T/fifo" "$T/empty" "$T/dir"; do
  timeout -k 5 60 env CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/supp.leak" CPROF_LEAK_SUPPRESS="$f" \
    LD_PRELOAD="$LIB" "$T/roots" rtsig > "$T/supp.out" 2> "$T/supp.err"
  rc=$?
  [ $rc = 124 ] || [ $rc = 137 ] && fail "CPROF_LEAK_SUPPRESS=$f: the program hangs"
  [ $rc = 0 ] || { cat "$T/supp.err"; fail "CPROF_LEAK_SUPPRESS=$f: exit status $rc"; }
  [ "$(cat "$T/supp.out")" = "rtsig: kept 0, dropped 5" ] || fail "CPROF_LEAK_SUPPRESS=$f: output differs"
  case $f in
    "$T/empty") why="is empty" ;; "$T/dir") why="is a directory" ;; *) why="is not a regular file" ;;
  esac
  [ "$(wc -l < "$T/supp.err")" = 1 ] && grep -q "^cprof: CPROF_LEAK_SUPPRESS=.* $why.*; no leak is suppressed$" "$T/supp.err" ||
    { cat "$T/supp.err"; fail "CPROF_LEAK_SUPPRESS=$f: not refused in one line saying it $why"; }
  [ "$(comment "$T/supp.leak")" = "5 15000" ] || fail "CPROF_LEAK_SUPPRESS=$f: the leaks are not all reported"
done
note "suppressions files that are none: refused in one line, no hang"
# Past 1 MiB nothing is read, and that is said.
{ head -c 1100000 /dev/zero | tr '\0' '\n'; echo 'leak:drop_blocks'; } > "$T/big"
CPROF_RATE=1 CPROF_LEAK_PROFILE="$T/big.leak" CPROF_LEAK_SUPPRESS="$T/big" LD_PRELOAD="$LIB" \
  "$T/roots" rtsig > /dev/null 2> "$T/big.err" || fail "a large suppressions file: the program failed"
grep -q 'CPROF_LEAK_SUPPRESS=.*: only its first 1048576 bytes are read' "$T/big.err" ||
  { cat "$T/big.err"; fail "a suppressions file over 1 MiB: the bound is not said"; }
[ "$(comment "$T/big.leak")" = "5 15000" ] || fail "a line past 1 MiB was read"
note "a suppressions file is read up to 1 MiB, and that is said"
exit 0
