#!/bin/sh
# The musl build of the runtime (make musl: build/musl/libcprof.so)
# preloaded into programs built with musl-gcc: at CPROF_RATE=1 the heap
# profile's sites equal what tests/progs/heapknown.c counted, with frame
# pointers and without (the cfi walk), and linked with -lcprof; the peak,
# mutex and block profiles written at exit load in go tool pprof, the trace
# in go tool trace; threads_known.c's thread creation profile is exact and
# its threads profile names its 8 threads; the CPU profile of
# tests/progs/musl_cpu.c puts hot() and warm() in their CPU shares; the
# profiles are gzip (of stored blocks: no zlib) that gzip -t accepts; what
# the build cannot do (CPROF_UNWIND=libunwind, CPROF_UNWIND_CHECK, the
# HTTP server, the leak profile) is refused with one line. Every program
# prints what it prints without cprof, and exits 0.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
command -v musl-gcc >/dev/null 2>&1 || skip "skip: musl-gcc (Debian musl-tools) not installed"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
MLIB=$BUILD/musl/libcprof.so
[ -f "$MLIB" ] || fail "no $MLIB (run make musl)"

mcc() { # OUT SRC [FLAGS...]
  out=$1; src=$2; shift 2
  musl-gcc -std=gnu11 -g "$@" -o "$out" "$src" -lpthread || fail "musl-gcc cannot build $src"
  file -L "$out" | grep -q "interpreter /lib/ld-musl" || fail "$out is not a musl program"
}
mcc "$T/known" "$PROGS/heapknown.c" -O1 -fno-omit-frame-pointer
mcc "$T/known_nofp" "$PROGS/heapknown.c" -O2 -fomit-frame-pointer
mcc "$T/cpu" "$PROGS/musl_cpu.c" -O1 -fno-omit-frame-pointer
mcc "$T/linked" "$PROGS/heapknown.c" -O1 -DLINKED -I"$TOP/include" -L"$BUILD/musl" -lcprof \
  -Wl,-rpath,"$BUILD/musl"
mcc "$T/tk" "$PROGS/threads_known.c" -O1 -fno-omit-frame-pointer -DLINKED -I"$TOP/include" \
  -L"$BUILD/musl" -lcprof -Wl,-rpath,"$BUILD/musl"

# plain NAME PROG: its output without cprof, into $T/NAME.plain.
plain() { "$2" > "$T/$1.plain" || fail "$1: exit status $? without cprof"; }

# under NAME PROG [VAR=VALUE...]: PROG with the musl runtime preloaded;
# its output must be the plain run's and its status 0; stderr in NAME.err.
under() {
  n=$1; p=$2; shift 2
  env "$@" LD_PRELOAD="$MLIB" "$p" > "$T/$n.out" 2> "$T/$n.err" ||
    { cat "$T/$n.err"; fail "$n: exit status $? under the musl runtime"; }
  cmp -s "$T/$n.out" "$T/${n%%_*}.plain" || { diff "$T/${n%%_*}.plain" "$T/$n.out"; fail "$n: output differs"; }
}

plain known "$T/known"
plain nofp "$T/known_nofp"
plain cpu "$T/cpu"

# --- heap: exact at rate 1, with and without frame pointers -----------------------
under known_fp "$T/known" CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/fp.heap" CPROF_PEAK_PROFILE="$T/fp.peak" \
  CPROF_MUTEX_RATE=1 CPROF_MUTEX_PROFILE="$T/fp.mutex" CPROF_BLOCK_RATE=1 CPROF_BLOCK_PROFILE="$T/fp.block" \
  CPROF_TRACE="$T/fp.trace"
[ -s "$T/known_fp.err" ] && { cat "$T/known_fp.err"; fail "known_fp: unexpected stderr"; }
check_truth "$T/known.plain" "$T/fp.heap" "$T/known"
under nofp_cfi "$T/known_nofp" CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/nofp.heap"
check_truth "$T/nofp.plain" "$T/nofp.heap" "$T/known_nofp"
under known_fpwalk "$T/known" CPROF_RATE=1 CPROF_UNWIND=fp CPROF_HEAP_PROFILE="$T/fpwalk.heap"
check_truth "$T/known.plain" "$T/fpwalk.heap" "$T/known"
# Linked with -lcprof: the program writes its own profile through the API.
CPROF_RATE=1 "$T/linked" "$T/linked.heap" > "$T/linked.out" || fail "linked: exit status $?"
cmp -s "$T/linked.out" "$T/known.plain" || { diff "$T/known.plain" "$T/linked.out"; fail "linked: output differs"; }
check_truth "$T/known.plain" "$T/linked.heap" "$T/linked"
note "heap: exact at rate 1 (cfi with and without frame pointers, fp, linked)"

for p in fp.heap fp.peak fp.mutex fp.block nofp.heap; do
  gzip -t "$T/$p" || fail "$p: not gzip"
  go tool pprof -raw "$T/known" "$T/$p" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$p: go tool pprof cannot load it"; }
done
go tool pprof -top "$T/known" "$T/fp.peak" 2>/dev/null | grep -qE " use_large\$" || fail "peak: no use_large"
go tool pprof -top "$T/known" "$T/fp.block" 2>/dev/null | grep -q "Type: delay" || fail "block: not a delay profile"
# The trace: go tool trace parses it; the program's six threads (main,
# heapknown's four workers and its cross-thread one) are goroutines in it.
go tool trace -d "$T/fp.trace" > "$T/trace.d" 2>&1 || { tail "$T/trace.d"; fail "go tool trace cannot parse the trace"; }
[ "$(grep -c ' GoCreate ' "$T/trace.d")" -eq 6 ] || { grep -c ' GoCreate ' "$T/trace.d"; fail "trace: not 6 threads"; }
note "peak, mutex, block profiles and the trace load"

# --- threads (linked, through the API): thread creation exact, every thread named --
mkdir -p "$T/tk.d"
"$T/tk" "$T/tk.d" || fail "threads_known: exit status $?"
pprof_flat threadcreate "$T/tk.d/threadcreate.pb.gz" > "$T/tk.flat"
for want in "spawn_readers 3" "spawn_waiters 2" "spawn_others 2"; do
  grep -qx "$want" "$T/tk.flat" || { cat "$T/tk.flat"; fail "threadcreate: no \"$want\""; }
done
go tool pprof -tags "$T/tk.d/threads.pb.gz" > "$T/tk.tags" 2>&1 || { cat "$T/tk.tags"; fail "threads: unreadable"; }
for t in tk masked reader-0 reader-1 reader-2 waiter-0 waiter-1 spinner; do
  grep -qE "^ +1(\.0)? \([0-9.]+%\): $t\$" "$T/tk.tags" || { cat "$T/tk.tags"; fail "threads: no thread $t"; }
done
grep -q '^ *thread: Total 8' "$T/tk.tags" || { cat "$T/tk.tags"; fail "threads: not 8 threads"; }
note "threadcreate exact, threads named"

# --- CPU: hot() 4/5 of the CPU time, warm() 1/5 ----------------------------------
under cpu_prof "$T/cpu" CPROF_CPU_PROFILE="$T/cpu.prof"
gzip -t "$T/cpu.prof" || fail "cpu: not gzip"
go tool pprof -top -cum -unit=ms "$T/cpu" "$T/cpu.prof" > "$T/cpu.top" 2>&1 || { cat "$T/cpu.top"; fail "cpu: go tool pprof cannot load it"; }
# Shares of the samples: hot's 0.8 expected; n samples of 10 ms, its
# binomial standard deviation sqrt(0.8 * 0.2 / n) is below 0.05 from 64
# samples on: 4 of them either side.
awk '/Total samples = / { sub(/.*Total samples = /, ""); sub(/ms.*/, ""); total = $0 }
     $NF == "hot" { hot = $4 + 0 } $NF == "warm" { warm = $4 + 0 } $NF == "main" { main = $4 + 0 }
     END { n = total / 10
           if (n < 40) { printf "only %d samples\n", n; exit 1 }
           sd = sqrt(0.8 * 0.2 / n); share = hot / total
           printf "hot %.2f of %d samples (sd %.3f), warm %d ms, main %d ms\n", share, n, sd, warm, main
           if (share < 0.8 - 4 * sd || share > 0.8 + 4 * sd || warm <= 0 || main < 0.9 * total) exit 1 }' \
  "$T/cpu.top" > "$T/cpu.check" || { cat "$T/cpu.check" "$T/cpu.top"; fail "cpu: hot and warm not in their shares"; }
note "cpu: $(cat "$T/cpu.check")"

# --- refusals: one line each, the program runs on ----------------------------------
refused() { # VAR=VALUE PATTERN
  under known_refused "$T/known" "$1"
  [ "$(wc -l < "$T/known_refused.err")" -eq 1 ] && grep -q "^cprof: $2" "$T/known_refused.err" ||
    { cat "$T/known_refused.err"; fail "$1: want one line"; }
}
refused CPROF_UNWIND=libunwind 'CPROF_UNWIND="libunwind" is not valid: .*without libunwind'
refused CPROF_UNWIND_CHECK=1 'CPROF_UNWIND_CHECK="1" is not valid: .*libunwind'
refused CPROF_HTTP=127.0.0.1:0 'CPROF_HTTP="127.0.0.1:0": the musl build of libcprof.so has no HTTP server'
refused CPROF_LEAK_PROFILE="$T/x.leak" 'CPROF_LEAK_PROFILE=.* the musl build of libcprof.so has no leak scan'
[ -e "$T/x.leak" ] && fail "a leak profile was written"
note "refusals: one line each"
exit 0
