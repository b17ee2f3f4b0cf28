#!/bin/sh
# The heap profile's resident_space (file and /debug/pprof/heap), on
# tests/progs/heap_resident.c: at CPROF_RATE=1 its 16 MiB touched block is
# resident to the byte, its 16 MiB untouched one is not (at most its
# header's page, or one 2 MiB huge page under THP), both 16 MiB in use; at
# the default rate each block's resident share is the same, scaled as
# inuse_space. Read by go tool pprof -sample_index=resident_space (Go 1.19
# and 1.23); the default sample type stays inuse_space.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/hr" "$PROGS/heap_resident.c" -ldl
size=16777216
touch "$T/stop"
"$T/hr" "$T/none.pb.gz" "$T" > "$T/out0" 2> "$T/err0" || { cat "$T/err0"; fail "program failed without cprof"; }
[ "$(cat "$T/out0")" = "4096
ok" ] || fail "output without cprof: $(cat "$T/out0")"
rm -f "$T/stop" "$T/ready"

# check PROFILE WHAT RATE1: resident_space and inuse_space of both sites.
check() {
  for go in "${GO:-go}" /usr/lib/go-1.23/bin/go; do
    command -v "$go" > /dev/null || [ -x "$go" ] || continue
    PPROF="$go tool pprof" pprof_flat resident_space "$1" "$T/hr" > "$T/res" ||
      fail "$go: $2: no resident_space"
    PPROF="$go tool pprof" pprof_flat inuse_space "$1" "$T/hr" > "$T/use"
    rt=$(awk '$1 == "site_touched" { print $2 }' "$T/res")
    ru=$(awk '$1 == "site_untouched" { print $2 }' "$T/res")
    it=$(awk '$1 == "site_touched" { print $2 }' "$T/use")
    iu=$(awk '$1 == "site_untouched" { print $2 }' "$T/use")
    note "$go $2: touched $rt of $it resident, untouched $ru of $iu"
    [ -n "$rt" ] && [ -n "$it" ] && [ -n "$iu" ] || { cat "$T/res" "$T/use"; fail "$go: $2: a site is missing"; }
    [ "$rt" = "$it" ] || fail "$go: $2: the touched block is not all resident"
    [ "${ru:-0}" -le $((iu / 8 + 4096)) ] || fail "$go: $2: the untouched block is resident"
    if [ "$3" = 1 ]; then
      [ "$it" = $size ] && [ "$iu" = $size ] || fail "$go: $2: inuse_space not exact"
      [ "${ru:-0}" -le $((2097152 + 4096)) ] || fail "$go: $2: untouched: $ru resident"
    fi
    "$go" tool pprof -raw "$1" 2> /dev/null | grep -q '^PeriodType: space bytes$' || fail "$go: $2: period type"
    "$go" tool pprof -raw "$1" 2> /dev/null |
      grep -q 'inuse_space/bytes\[dflt\] temp_objects/count temp_space/bytes resident_space/bytes$' ||
      fail "$go: $2: sample types"
  done
}

for rate in 1 default; do
  rm -f "$T/ready" "$T/stop" "$T/srv.addr"
  if [ $rate = 1 ]; then r=CPROF_RATE=1; else r=CPROF_UNUSED=1; fi
  env $r CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/srv.addr" LD_PRELOAD="$LIB" \
    "$T/hr" "$T/h$rate.pb.gz" "$T" > "$T/out" 2> "$T/err" &
  PID=$!
  PIDS="$PIDS $PID"
  wait_file "$T/ready" || { cat "$T/err"; fail "rate $rate: the program is not ready"; }
  wait_file "$T/srv.addr" || fail "rate $rate: no server"
  curl -sf -o "$T/web$rate.pb.gz" "http://$(cat "$T/srv.addr")/debug/pprof/heap" ||
    fail "rate $rate: GET /debug/pprof/heap"
  touch "$T/stop"
  wait "$PID" || { cat "$T/err"; fail "rate $rate: program failed"; }
  grep -v '^cprof: serving /debug/pprof/ on ' "$T/err" && fail "rate $rate: unexpected stderr"
  [ "$(cat "$T/out")" = "4096
ok" ] || fail "rate $rate: output: $(cat "$T/out")"
  check "$T/h$rate.pb.gz" "file, rate $rate" $rate
  check "$T/web$rate.pb.gz" "/debug/pprof/heap, rate $rate" $rate
done
echo "ok: resident_space in the heap profile"
