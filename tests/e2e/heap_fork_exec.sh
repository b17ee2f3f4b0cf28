#!/bin/sh
# fork and exec under the preload. A fork storm: 40 children forked while
# 2 parent threads allocate, each child allocating and exiting with exit(),
# every 4th one exec'ing the program again under the inherited LD_PRELOAD;
# with CPROF_HEAP_PROFILE=.../%p.pb.gz each process writes its own profile:
# all 41 load, at rate 1 each child's and the parent's own function is
# exact, and the parent's profile holds nothing of its children. Then exec
# from a shell: every preloaded program a shell runs is profiled (%e names
# them), and `exec` replaces a process without writing the replaced one's
# profile.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/forker" "$PROGS/stress_fork.c"
cc_prog "$T/known" "$PROGS/heapknown.c"

# load PROFILE: go tool pprof can read it.
load() {
  go tool pprof -raw -symbolize=none "$1" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$1: go tool pprof cannot load it"; }
}

for rate in 1 524288; do
  d=$T/storm.$rate
  mkdir -p "$d/prof" "$d/truth"
  timeout -k 5 60 env CHILD_DIR="$d/truth" CPROF_RATE=$rate CPROF_HEAP_PROFILE="$d/prof/%p.pb.gz" \
    LD_PRELOAD="$LIB" "$T/forker" 40 > "$d/out" 2> "$d/err"
  rc=$?
  [ $rc = 0 ] || { cat "$d/err"; fail "rate $rate: fork storm exit status $rc"; }
  [ -s "$d/err" ] && { cat "$d/err"; fail "rate $rate: unexpected stderr"; }
  parent=$(awk '$1 == "PARENT" { print $2 }' "$d/out")
  nchild=$(grep -c '^CHILD ' "$d/out")
  [ "$nchild" = 40 ] || fail "rate $rate: $nchild children reported"
  nprof=$(ls "$d/prof" | grep -c '\.pb\.gz$')
  [ "$nprof" = 41 ] || { ls "$d/prof"; fail "rate $rate: $nprof profiles, want 41 (parent + 40 children)"; }
  ls "$d/prof" | grep -v '^[0-9]*\.pb\.gz$' && fail "rate $rate: stray files (temporary files left?)"
  [ -s "$d/prof/$parent.pb.gz" ] || fail "rate $rate: no parent profile"
  load "$d/prof/$parent.pb.gz"
  for ph in $(awk '$1 == "CHILD" { print $2 ":" $3 }' "$d/out"); do
    pid=${ph%:*} how=${ph#*:}
    f=$d/prof/$pid.pb.gz
    [ -s "$f" ] || fail "rate $rate: child $pid ($how): no profile"
    load "$f"
    if [ "$rate" = 1 ]; then
      [ -s "$d/truth/$pid.truth" ] || fail "child $pid ($how): no truth"
      check_truth "$d/truth/$pid.truth" "$f"
      # A forked child's profile starts from its parent's tables; an exec'd
      # one starts fresh: no trace of the parent's threads.
      if [ "$how" = exec ]; then
        pprof_flat alloc_objects "$f" | grep -q '^background_alloc ' &&
          fail "exec'd child $pid: parent's allocations in its profile"
      fi
    fi
  done
  if [ "$rate" = 1 ]; then
    grep '^TRUTH ' "$d/out" > "$d/parent.truth"
    # The children's functions never ran in the parent.
    echo "TRUTH child_work 0 0 0 0" >> "$d/parent.truth"
    echo "TRUTH exec_child_work 0 0 0 0" >> "$d/parent.truth"
    check_truth "$d/parent.truth" "$d/prof/$parent.pb.gz"
  fi
  note "rate $rate: 41 profiles load"
done

# exec from a shell: both programs the shell runs are profiled, each with
# its own numbers; `exec` replaces the shell without a profile of its own.
mkdir -p "$T/sh"
env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/sh/%e.%p.pb.gz" LD_PRELOAD="$LIB" \
  sh -c '"$1" > "$2/k1.truth" && "$1" > "$2/k2.truth" && exec "$1" > "$2/k3.truth"' sh "$T/known" "$T" ||
  fail "shell run failed"
n=$(ls "$T/sh" | grep -c '^known\.[0-9]*\.pb\.gz$')
[ "$n" = 3 ] || { ls "$T/sh"; fail "$n profiles of the shell's programs, want 3"; }
ls "$T/sh" | grep -v '^known\.' && fail "the exec'ing shell wrote a profile"
for f in "$T"/sh/known.*.pb.gz; do
  check_truth "$T/k1.truth" "$f"
done
note "exec: each program a shell runs under LD_PRELOAD is profiled"
exit 0
