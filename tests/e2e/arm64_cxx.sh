#!/bin/sh
# arm64: a C++ program cross-compiled for aarch64 (new, new[], delete,
# nothrow and aligned forms, STL containers: tests/progs/heapknown_cpp.cc)
# under qemu-aarch64 with build/arm64/libcprof.so preloaded, at
# CPROF_RATE=1: go tool pprof and the host's cprof give its truth exactly,
# and the leaf is the program's function, never operator new or cprof.
# timeout: 180
. "$(dirname "$0")/arm64_common.inc"

acc_prog "$T/known_cpp" "$PROGS/heapknown_cpp.cc"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/cpp.pb.gz" arun "$T/known_cpp" > "$T/cpp.truth" 2> "$T/cpp.err" ||
  { cat "$T/cpp.err"; fail "program failed"; }
[ -s "$T/cpp.err" ] && { cat "$T/cpp.err"; fail "stderr not empty"; }
grep -q '^TRUTH ' "$T/cpp.truth" || fail "no TRUTH lines from the program"
[ -s "$T/cpp.pb.gz" ] || fail "no profile written"
check_truth "$T/cpp.truth" "$T/cpp.pb.gz" "$T/known_cpp"
PPROF="$BUILD/cprof" check_truth "$T/cpp.truth" "$T/cpp.pb.gz"
go tool pprof -top -nodefraction=0 "$T/cpp.pb.gz" 2>/dev/null |
  grep -E ' (malloc|operator new|_Znwm|_Znam|heap_record_alloc|unwind_capture)' &&
  fail "allocator or profiler frames in the profile"
note "C++: exact (go tool pprof, cprof)"
exit 0
