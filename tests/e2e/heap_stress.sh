#!/bin/sh
# 8 threads pass objects from producers to consumers through queues for 3
# seconds, so nearly every free happens on another thread than its malloc
# (and every 16th object is realloc'ed there first). At rate 1 nothing may
# be lost: produce_object's and consume_grow's alloc_objects/alloc_space
# equal what the program counted and their in-use is 0; cprof_stats'
# mallocs/frees over the workload equal the program's counts up to the few
# allocations glibc makes for new threads, and every one of them was
# sampled. At the default rate: no crash, no deadlock, the same stats
# check, and a sane estimate. Preloaded (stats found with dlsym; libunwind
# and the frame-pointer walk) and linked with -lcprof.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/stress" "$PROGS/stress_xthread.c" -ldl
cc_prog "$T/stress_fp" "$PROGS/stress_xthread.c" -ldl -fno-omit-frame-pointer
cc_prog "$T/stress_linked" "$PROGS/stress_xthread.c" -ldl -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"

# check_stats NAME RATE: the STATS line against the DONE line. glibc may
# allocate a little for the 8 new threads (their TLS), hence the slack.
check_stats() {
  awk -v name="$1" -v rate="$2" -v slack=64 '
    $1 == "STATS" { m=$2; f=$3; live=$4; sa=$5; sf=$6; drop=$7; have=1 }
    $1 == "DONE" { dm=$2; df=$3 }
    END {
      if (!have) { print name ": no STATS line (cprof_stats not found)"; exit 1 }
      bad = 0
      if (m < dm || m > dm + slack) { printf "%s: cprof_stats mallocs +%.0f, the program made %.0f\n", name, m, dm; bad=1 }
      if (f < df || f > df + slack) { printf "%s: cprof_stats frees +%.0f, the program made %.0f\n", name, f, df; bad=1 }
      if (live < -slack || live > slack) { printf "%s: live_objects changed by %d\n", name, live; bad=1 }
      if (drop != 0) { printf "%s: %d samples dropped\n", name, drop; bad=1 }
      if (rate == 1 && (sa != m || sf != f)) { printf "%s: rate 1 sampled %.0f allocs / %.0f frees of %.0f / %.0f\n", name, sa, sf, m, f; bad=1 }
      exit bad
    }' "$T/$1.out"
}

for mode in preload fp linked; do
  for rate in 1 524288; do
    name=$mode.$rate
    if [ $mode != linked ]; then
      [ $mode = fp ] && unwind=fp prog=$T/stress_fp || unwind=libunwind prog=$T/stress
      timeout -k 5 60 env CPROF_UNWIND=$unwind CPROF_RATE=$rate CPROF_HEAP_PROFILE="$T/$name.pb.gz" LD_PRELOAD="$LIB" \
        "$prog" 3 > "$T/$name.out" 2> "$T/$name.err"
    else
      timeout -k 5 60 env CPROF_RATE=$rate CPROF_HEAP_PROFILE="$T/$name.pb.gz" \
        "$T/stress_linked" 3 > "$T/$name.out" 2> "$T/$name.err"
    fi
    rc=$?
    case $rc in
      0) ;;
      124|137) fail "$name: still running after 60 s: deadlock" ;;
      *) cat "$T/$name.err"; fail "$name: exit status $rc" ;;
    esac
    [ -s "$T/$name.err" ] && { cat "$T/$name.err"; fail "$name: unexpected stderr"; }
    [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
    check_stats "$name" "$rate" || fail "$name: cprof_stats disagrees with the program"
    if [ "$rate" = 1 ]; then
      check_truth "$T/$name.out" "$T/$name.pb.gz"
    else
      # Sampled: alloc_space of produce_object within 5.5 standard errors of
      # the truth (objects far smaller than the rate R: sd ~ sqrt(truth*R);
      # 1.6-2.7 GB, 3000-5200 samples: nearly normal). Three such checks: 5 sd
      # failed by chance with odds 1.7e-6 a run, 5.5 sd 1.1e-7.
      pprof_flat alloc_space "$T/$name.pb.gz" > "$T/$name.flat"
      awk '$1 == "TRUTH" && $2 == "produce_object" { print $4 }' "$T/$name.out" > "$T/$name.want"
      awk -v want="$(cat "$T/$name.want")" -v R=$rate '$1 == "produce_object" { got=$2 }
        END { sd = sqrt(want * R); printf "# produce_object alloc_space %.0f, truth %.0f (%+.2f sd)\n", got, want, (got - want) / sd
              if (got < want - 5.5 * sd || got > want + 5.5 * sd) { print "estimate more than 5.5 sd off"; exit 1 } }' \
        "$T/$name.flat" || fail "$name: estimate off"
    fi
    note "$name: $(grep '^DONE' "$T/$name.out")"
  done
done
exit 0
