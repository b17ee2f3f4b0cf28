#!/bin/sh
# cprof attach on a C program started without the preload, allocating on
# several threads (tests/progs/attach_prog.c): go tool pprof then fetches
# heap, allocs, profile, goroutine and mutex from it; the sites allocating
# after the attach are exact at -rate=1, blocks from before the attach
# (freed and realloc'ed after it) take nothing from the profile and the
# counters never go negative; the program ends with the output it has
# without the attach and exits 0. The same with a library dlopened after
# the attach (its allocations show up once the poller has routed it).
# timeout: 300
. "$(dirname "$0")/attach_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/attach_prog.c" -ldl
gcc -std=gnu11 -g -O1 -shared -fPIC -o "$T/libattach_lib.so" "$PROGS/dlopen_lib.c" ||
  fail "cannot build dlopen_lib.c"

plain_run plain "$T/prog"

attached_run at "$T/prog"
allocs=$(go tool pprof -top -sample_index=alloc_space "$URL/allocs" 2>/dev/null)
has site_churn "$allocs"
inuse=$(go tool pprof -raw -sample_index=inuse_space "$T/heap.pb.gz" 2>/dev/null)
echo "$inuse" | awk '/^Samples:/ {s=1; next} /^Locations/ {s=0}
  s && /:/ { split($0, a, ":"); if (a[1] ~ /(^| )-[0-9]/) bad=1 } END {exit bad}' ||
  fail "a negative value in the heap profile"
stats=$(curl -sf "$URL/heap?debug=1" | grep '^# live_')
echo "$stats" | awk '$4 > 1e15 {bad=1} END {exit bad}' || { echo "$stats"; fail "live counters wrapped below 0"; }
cpu=$(go tool pprof -top "$URL/profile?seconds=2" 2>/dev/null)
has spin "$cpu"
thr=$(go tool pprof -top "$URL/goroutine" 2>/dev/null)
has sleeper "$thr"
mtx=$(go tool pprof -top "$URL/mutex" 2>/dev/null)
has fight "$mtx"
finish at
same_output at

# A library loaded after the attach.
plain_run plaindl "$T/prog" "$T/libattach_lib.so"
start_prog dl "$T/prog" "$T/libattach_lib.so"
attach_to "$PID"
step dl go phase2
i=0
while :; do
  allocs=$(go tool pprof -top -sample_index=alloc_objects -nodefraction=0 "$URL/allocs?debug=0" 2>/dev/null)
  echo "$allocs" | grep -qE " dlopen_lib_work$" && break
  i=$((i + 1)); [ $i -gt 30 ] && { echo "$allocs"; fail "no allocation of the dlopened library"; }
  sleep 1
done
finish dl
cmp "$T/plaindl.out" "$T/dl.out" || fail "output differs after attach (dlopen)"
exit 0
