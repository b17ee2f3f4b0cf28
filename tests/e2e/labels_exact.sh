#!/bin/sh
# Profiler labels at CPROF_RATE=1, CPROF_MUTEX_RATE=1 and CPROF_BLOCK_RATE=1,
# where the numbers are exact: tests/progs/labels_server.c's two workers handle requests of
# kind=a (3 units of work) and kind=b (1 unit), under cprof_labels_push.
#  - go tool pprof -tagfocus=kind=K isolates each kind's allocations in the
#    heap profile (alloc_* and inuse_*: the objects keep the labels they
#    were allocated under), its leaked blocks in the leak profile (but for
#    at most 2 a stale word keeps, the scan being conservative), and its
#    contended locks in the mutex and block profiles, each equal to the
#    program's truth; cprof's tool agrees on the heap;
#  - -tags lists both kinds and both workers; -tagshow keeps the label;
#    the peak profile has both kinds too;
#  - a label never lands on another thread's samples (-traces: worker=N
#    only under worker_loop_N, main_churn unlabeled), in every profile;
#  - the threads profile, taken while both workers wait inside a kind=a
#    request: debug=1 prints Go's "# labels: {...}" line for each, the
#    protobuf carries them as string labels;
#  - C++: cprof::label_scope pushes and pops with the scope, also when an
#    exception leaves it (tests/progs/labels_cxx.cc);
#  - with Go 1.19 and the newest Go installed.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/labels_common.inc"

reqs=40
run_server r1 $reqs 0 CPROF_RATE=1 CPROF_MUTEX_RATE=1 CPROF_BLOCK_RATE=1 CPROF_CPU_HZ=100

for go in $GOS; do
  for kind in a b; do
    for idx in alloc_objects alloc_space inuse_objects inuse_space; do
      got=$(tagtotal "$go" $idx kind=$kind "$T/r1.heap"); want=$(truth r1 $kind $idx)
      [ "$got" = "$want" ] || fail "heap $idx kind=$kind: $got, truth $want ($go)"
    done
    # The scan is conservative (LeakSanitizer's definition): a stale word
    # that happens to point at a leaked block keeps it; at most 2 here.
    got=$(tagtotal "$go" inuse_objects kind=$kind "$T/r1.leak"); want=$(truth r1 $kind leak_objects)
    [ "$got" -le "$want" ] && [ "$got" -ge $((want - 2)) ] ||
      fail "leaks leak_objects kind=$kind: $got, truth $want ($go)"
    bytes=$(tagtotal "$go" inuse_space kind=$kind "$T/r1.leak")
    [ "$bytes" = $((got * 3000)) ] || fail "leaks leak_space kind=$kind: $bytes for $got blocks of 3000 ($go)"
    got=$(tagtotal "$go" contentions kind=$kind "$T/r1.mutex"); want=$(truth r1 $kind contentions)
    [ "$got" = "$want" ] || fail "mutex contentions kind=$kind: $got, truth $want ($go)"
    # the block profile: the same waits (the only blocking under labels)
    got=$(tagtotal "$go" contentions kind=$kind "$T/r1.block")
    [ "$got" = "$want" ] || fail "block contentions kind=$kind: $got, truth $want ($go)"
    delay=$(tagtotal "$go" delay kind=$kind "$T/r1.mutex" ns)
    [ "${delay%%.*}" -gt 0 ] 2>/dev/null || fail "mutex delay kind=$kind: $delay ($go)"
  done
  # Each worker did half of each kind.
  got=$(tagtotal "$go" alloc_objects "worker=^1$" "$T/r1.heap")
  want=$(( ($(truth r1 a alloc_objects) + $(truth r1 b alloc_objects)) / 2 ))
  [ "$got" = "$want" ] || fail "heap alloc_objects worker=1: $got, want $want ($go)"
  "$go" tool pprof -tags "$T/r1.heap" > "$T/tags" 2>&1 || fail "-tags failed ($go)"
  for l in 'kind: Total' '): a$' '): b$' 'worker: Total' '): 1$' '): 2$'; do
    grep -q "$l" "$T/tags" || { cat "$T/tags"; fail "-tags: no \"$l\" ($go)"; }
  done
  "$go" tool pprof -tags -tagshow=kind "$T/r1.heap" > "$T/tagshow" 2>&1
  grep -q '^ worker:' "$T/tagshow" && fail "-tagshow=kind still shows worker ($go)"
  grep -q '^ kind:' "$T/tagshow" || fail "-tagshow=kind: no kind ($go)"
  # peak: the kept and leaked blocks live at the high carry their kinds
  "$go" tool pprof -tags "$T/r1.peak" > "$T/ptags" 2>&1 || fail "peak: -tags failed ($go)"
  grep -q '): a$' "$T/ptags" && grep -q '): b$' "$T/ptags" || { cat "$T/ptags"; fail "peak: no kinds ($go)"; }
  for p in heap leak mutex block peak; do
    check_isolation "$go" "$T/r1.$p" $( [ $p = heap ] && echo alloc_space )
  done
  # threads: both workers inside a kind=a request
  "$go" tool pprof -tags "$T/r1.threads.pb.gz" > "$T/ttags" 2>&1
  grep -q '^ *2\.0 ( *100%): a$' "$T/ttags" || { cat "$T/ttags"; fail "threads protobuf: not two threads of kind a ($go)"; }
  "$go" tool pprof -traces -tagfocus="worker=^2$" "$T/ls" "$T/r1.threads.pb.gz" 2>/dev/null > "$T/tw2"
  grep -q worker_loop_2 "$T/tw2" && ! grep -q worker_loop_1 "$T/tw2" ||
    { cat "$T/tw2"; fail "threads protobuf: worker=2 is not worker_loop_2's ($go)"; }
done

for w in 1 2; do
  n=$(grep -c "^# labels: {\"kind\":\"a\", \"thread\":\"worker$w\", \"worker\":\"$w\"}\$" "$T/r1.threads.1")
  [ "$n" = 1 ] || { cat "$T/r1.threads.1"; fail "threads debug=1: worker$w's labels $n times"; }
done
grep -q '^# labels: {"thread":"ls"}$' "$T/r1.threads.1" || fail "threads debug=1: main has labels"

CPROF=$BUILD/cprof
if [ -x "$CPROF" ]; then
  for kind in a b; do
    got=$("$CPROF" -top -nodefraction=0 -nodecount=100000 -unit=byte \
      -sample_index=alloc_space -tagfocus=kind=$kind "$T/ls" "$T/r1.heap" 2>/dev/null |
      awk '/^Showing nodes accounting for/ { v = $5; sub(/B,$/, "", v); print v }')
    [ "$got" = "$(truth r1 $kind alloc_space)" ] || fail "cprof -tagfocus=kind=$kind: $got"
  done
fi
# C++ scopes: alloc_n's objects per label, as labels_cxx.cc says.
cc_prog "$T/lc" "$PROGS/labels_cxx.cc" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/lc.heap" "$T/lc" > "$T/lc.out" || fail "labels_cxx failed"
[ "$(cat "$T/lc.out")" = ok ] || fail "labels_cxx printed $(cat "$T/lc.out")"
for go in $GOS; do
  for want in -tagfocus=kind=cxx:42 -tagfocus=step=inner:20 -tagfocus=step=throws:3 -tagignore=kind=cxx:7; do
    got=$(PPROF="$go tool pprof" pprof_flat alloc_objects "$T/lc.heap" "${want%:*}" "$T/lc" | awk '$1 == "alloc_n" { print $2 }')
    [ "$got" = "${want##*:}" ] || fail "labels_cxx ${want%:*}: alloc_n $got objects, want ${want##*:} ($go)"
  done
done

note "rate 1: heap, leaks and mutex per kind exact; labels on their own threads' samples only"
