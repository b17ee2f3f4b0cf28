#!/bin/sh
# cprof attach on a real program that allocates through function pointers:
# libxml2 calls malloc and free through its variables xmlMalloc / xmlFree
# (set to malloc and free by the loader), and xmllint holds a copy of
# xmlFree (a copy relocation). Both kinds are routed: xmllint, attached
# at -rate=1 while it waits for its input on a FIFO, writes (through
# CPROF_HEAP_PROFILE, read when libcprof.so is loaded) a profile at exit in
# which every allocation made after the attach was also freed, and its
# output is the same as without the attach.
# timeout: 120
. "$(dirname "$0")/attach_common.inc"
need_go
command -v xmllint > /dev/null || skip "skip: xmllint (libxml2-utils) not installed"

python3 -c '
import sys
print("<lib>")
for i in range(3000):
    print("<book id=\"%d\"><title>t%d</title><author>a%d</author></book>" % (i, i, i % 97))
print("</lib>")' > "$T/doc.xml"
xmllint --format - < "$T/doc.xml" > "$T/plain.out" || fail "xmllint alone"

mkfifo "$T/fifo"
exec 3<> "$T/fifo"
CPROF_HEAP_PROFILE="$T/x.pb.gz" xmllint --format - < "$T/fifo" > "$T/at.out" 2> "$T/at.err" 3>&- &
PID=$!; PIDS="$PIDS $PID"
i=0
until [ "$(cut -d' ' -f1 "/proc/$PID/syscall" 2>/dev/null)" = 0 ]; do # waiting in read(2)
  i=$((i + 1)); [ $i -gt 300 ] && fail "xmllint never waited for its input"
  sleep 0.1
done
attach_to "$PID" -rate=1
cat "$T/doc.xml" >&3
exec 3>&-
wait "$PID" || { cat "$T/at.err"; fail "xmllint exit status $?"; }
same_output at
[ -s "$T/x.pb.gz" ] || fail "no profile at exit"
go tool pprof -raw "$T/x.pb.gz" 2> /dev/null | awk '/^Samples/ {s=1; next} /^Locations/ {s=0}
  s && /:/ { split($0, a, ":"); split(a[1], v, " "); ao += v[1]; io += v[3] }
  END { print ao, io }' > "$T/totals"
read -r allocs inuse < "$T/totals"
note "after the attach: $allocs allocations, $inuse still live at exit"
[ "${allocs:-0}" -gt 10000 ] || fail "only ${allocs:-0} allocations seen: xmlMalloc not routed"
[ "${inuse:-1}" -eq 0 ] || fail "$inuse allocations never freed: xmlFree not routed"
exit 0
