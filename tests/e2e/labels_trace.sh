#!/bin/sh
# Trace regions under labels (tests/progs/labels_trace.c): each region begun
# while the thread has labels is followed, on the same thread, by one user
# log of category cprof.labels whose message is the labels
# ("kind=a worker=1"); a region begun with none (after a push and pop that
# leave nothing) has no such log. go tool trace -d, with Go 1.19 and the
# newest Go installed.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
GOS=$(ls /usr/lib/go-1.*/bin/go 2>/dev/null | sort -t. -k2,2n | sed -n '1p;$p' | uniq)
[ -n "$GOS" ] || skip "skip: no go toolchain in /usr/lib/go-1.*"

cc_prog "$T/lt" "$PROGS/labels_trace.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
"$T/lt" "$T/lt.trace" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "the program failed"; }
[ "$(cat "$T/out")" = "ok 40" ] || fail "the program printed $(cat "$T/out")"

for go in $GOS; do
  if "$go" tool trace -d "$T/lt.trace" > "$T/d" 2> "$T/d.err"; then :
  elif "$go" tool trace -d=1 "$T/lt.trace" > "$T/d1" 2> "$T/d.err"; then
    # Go 1.22+ prints its own parsed events ("M=.. P=.. G=3 RegionBegin
    # ... Type=..."): rewritten into 1.19's shape for the check below.
    sed -n -E 's/^M=[^ ]+ P=[^ ]+ G=([^ ]+) RegionBegin (.*)/0 UserRegion g=\1 mode=0 \2/p
      s/^M=[^ ]+ P=[^ ]+ G=([^ ]+) RegionEnd (.*)/0 UserRegion g=\1 mode=1 \2/p
      s/^M=[^ ]+ P=[^ ]+ G=([^ ]+) Log .*Category="([^"]*)" Message="([^"]*)"$/0 UserLog g=\1 category=\2 message=\3/p' \
      "$T/d1" > "$T/d"
    [ -s "$T/d" ] || { head -5 "$T/d1"; fail "go tool trace -d=1: no region or log events ($go)"; }
  else
    tail -5 "$T/d.err"; fail "go tool trace -d failed ($go)"
  fi
  # Per goroutine (thread): the event before each labels log is a region
  # begin; count the logs by message and the region begins.
  awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^g=/) g = $i }
       $2 == "UserRegion" && / mode=0 / { begins[g]++ }
       $2 == "UserLog" && / category=cprof\.labels / {
         if (last[g] !~ /UserRegion .* mode=0 /) { print "log not right after a region begin on " g; bad = 1 }
         m = $0; sub(/.* message=/, "", m); print g, m > "/dev/stderr"; logs[g " " m]++ }
       $2 ~ /^User/ { last[g] = $0 }
       END { for (k in logs) print k, logs[k]; for (g in begins) print g, "begins", begins[g]; exit bad }' \
    "$T/d" > "$T/sum" 2> /dev/null || { cat "$T/sum"; fail "labels logs misplaced ($go)"; }
  for w in 1 2; do
    for k in a b; do
      n=$(grep -c " kind=$k worker=$w 5\$" "$T/sum")
      [ "$n" = 1 ] || { cat "$T/sum"; fail "not one thread with 5 regions of kind=$k worker=$w ($go)"; }
    done
    # both kinds of worker w on the same thread, and not the other worker's
    gw=$(grep " worker=$w 5\$" "$T/sum" | cut -d' ' -f1 | sort -u)
    [ "$(echo "$gw" | wc -l)" = 1 ] || fail "worker=$w's labels on several threads ($go)"
    grep "^$gw begins 20\$" "$T/sum" > /dev/null || { cat "$T/sum"; fail "worker=$w's thread: not 20 regions ($go)"; }
  done
  [ "$(grep -c 'worker=' "$T/sum")" = 4 ] || { cat "$T/sum"; fail "unexpected labels logs ($go)"; }
done
note "20 labeled regions of 40 logged their labels on their own thread"
