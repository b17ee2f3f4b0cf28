#!/bin/sh
# /debug/pprof/memory on a live program (tests/progs/http_server.c): listed
# in the index, served as Go serves a profile (headers), read by go tool
# pprof; its resident_space total is the process's smaps_rollup Rss read
# just after the answer, within 2%; every sample has a class; ?debug=1 is
# the text of the classes. And CPROF_MEMORY_PROFILE writes it at exit.
# timeout: 120
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv"
req index "$URL/debug/pprof/"
grep -Eq "^<tr><td>[0-9]+</td><td><a href='memory\\?debug=1'>memory</a></td></tr>\$" "$T/index.body" ||
  { cat "$T/index.body"; fail "index: no row for memory"; }
grep -q "^<li><div class=profile-name>memory: </div> " "$T/index.body" || fail "index: no description of memory"

req mem "$URL/debug/pprof/memory"
rss=$(awk '$1 == "Rss:" { print $2 * 1024 }' /proc/"$PID"/smaps_rollup)
expect mem 200 "application/octet-stream"
[ "$(header mem Content-Disposition)" = 'attachment; filename="memory"' ] ||
  fail "memory: Content-Disposition \"$(header mem Content-Disposition)\""
go tool pprof -raw "$T/mem.body" > "$T/raw" 2> "$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read it"; }
awk -v rss="$rss" '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
  s && /: / { split($0, a, ": "); split(a[1], v, " "); res += v[1]; n++; next }
  s && /class:\[/ { c++ }
  END { printf "# resident %.0f, Rss %.0f, %d samples\n", res, rss, n
        if (n == 0 || c != n) { print "samples " n ", with a class " c; exit 1 }
        if (res < rss * 0.98 || res > rss * 1.02) { print "resident " res " vs Rss " rss; exit 1 } }' "$T/raw" ||
  fail "memory: does not add up to Rss"

req mem1 "$URL/debug/pprof/memory?debug=1"
expect mem1 200 "text/plain; charset=utf-8"
head -n1 "$T/mem1.body" | grep -Eq '^memory profile: resident [0-9]+ virtual [0-9]+ swap [0-9]+ bytes$' ||
  { head -5 "$T/mem1.body"; fail "memory?debug=1: header"; }
for c in heap heap-free allocator mmap stack file code cprof other; do
  grep -Eq "^$c +[0-9]+ +[0-9]+ +[0-9]+\$" "$T/mem1.body" || fail "memory?debug=1: no line for $c"
done
grep -Eq '^ +[0-9]+ +[0-9]+ +[0-9]+  stack: \[stack\] ' "$T/mem1.body" || fail "memory?debug=1: no thread stack"
stop_server "$PID"

# At exit, from the variable.
cc_prog "$T/mk" "$PROGS/memory_known.c" -ldl
CPROF_MEMORY_PROFILE="$T/exit.%p.pb.gz" LD_PRELOAD="$LIB" "$T/mk" "$T" > /dev/null || fail "memory_known failed"
set -- "$T"/exit.*.pb.gz
[ -s "$1" ] || fail "CPROF_MEMORY_PROFILE: no file written at exit"
go tool pprof -raw "$1" 2> /dev/null | grep -q 'class:\[code\]' || fail "the exit profile has no code class"
echo "ok: /debug/pprof/memory and CPROF_MEMORY_PROFILE"
