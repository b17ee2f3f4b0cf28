#!/bin/sh
# Anonymous mappings the leak scan reads as roots (tests/progs/leakmaps.c),
# at CPROF_RATE=1 (every mapping scanned) and at the default rate (all of
# them outside the sampled objects):
#   guard    a guard region (MADV_GUARD_INSTALL) inside a mapping: reading
#            it faults, so the scan must step past it, never kill the program;
#   reserve  a 16 GiB MAP_NORESERVE reservation, two pages touched: only
#            those are read (the profile's comment counts the bytes read),
#            so the stop stays short and the scan complete.
# The blocks kept in those mappings are reachable, the 5 dropped ones are
# the leak.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

command -v go >/dev/null 2>&1 || skip "go (golang-go) not installed"
cc_prog "$T/maps" "$PROGS/leakmaps.c"

# comment PROFILE: the leak profile's comment.
comment() { go tool pprof -raw "$1" 2>/dev/null | sed -n 's/^Comment: //p'; }

"$T/maps" guard > "$T/probe.out" || fail "leakmaps guard fails without cprof"
[ "$(cat "$T/probe.out")" = "guard: unsupported" ] && skip "the kernel has no guard regions (Linux 6.13)"

for mode in guard reserve; do
  for rate in 1 524288; do
    timeout -k 5 120 env CPROF_RATE=$rate CPROF_LEAK_PROFILE="$T/$mode.$rate.leak" LD_PRELOAD="$LIB" \
      "$T/maps" $mode > "$T/$mode.out" 2> "$T/$mode.err"
    rc=$?
    [ $rc = 0 ] || { cat "$T/$mode.err"; fail "$mode, rate $rate: exit status $rc"; }
    [ "$(cat "$T/$mode.out")" = "$mode: kept 2, dropped 5" ] ||
      fail "$mode, rate $rate: output '$(cat "$T/$mode.out")'"
    [ -s "$T/$mode.err" ] && { cat "$T/$mode.err"; fail "$mode, rate $rate: unexpected stderr"; }
    c=$(comment "$T/$mode.$rate.leak")
    echo "$c" | grep -q '^cprof leaks: [0-9]* unreachable' || fail "$mode, rate $rate: not scanned: $c"
    read_bytes=$(echo "$c" | sed -n 's/.* \([0-9]*\) bytes read;.*/\1/p')
    [ -n "$read_bytes" ] || fail "$mode, rate $rate: no count of bytes read: $c"
    # The program's own memory is a few MiB; 16 GiB untouched is not read.
    [ "$read_bytes" -lt $((256 << 20)) ] || fail "$mode, rate $rate: $read_bytes bytes read: $c"
    if [ $rate = 1 ]; then
      # The kept blocks are never leaks. Of the dropped ones, a copy of the
      # last one's address may linger in a register or glibc's memory (seen
      # in guard mode with or without the guard region): at least 4 leak.
      n=$(echo "$c" | sed -n 's/^cprof leaks: \([0-9]*\) unreachable sampled objects, \([0-9]*\) bytes.*/\1 \2/p')
      [ "$n" = "5 15000" ] || [ "$n" = "4 12000" ] || fail "$mode: the leak is not the dropped blocks: $c"
      flat=$(pprof_flat inuse_space "$T/$mode.$rate.leak" "$T/maps" | awk '$2 != 0' | tr '\n' ' ')
      [ "$flat" = "drop_blocks ${n#* } " ] || fail "$mode: leaks other than drop_blocks: $flat"
    fi
    note "$mode, rate $rate: $read_bytes bytes read"
  done
done
exit 0
