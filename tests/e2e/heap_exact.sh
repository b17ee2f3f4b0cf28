#!/bin/sh
# At CPROF_RATE=1 every allocation is recorded, so go tool pprof must show
# each function's alloc/inuse objects and bytes exactly as the program
# counted them — preloaded (libunwind, and the frame-pointer walk), linked
# with -lcprof, built without frame pointers, and for C++ new/delete.
# timeout: 240
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/known" "$PROGS/heapknown.c"
cc_prog "$T/known_fp" "$PROGS/heapknown.c" -fno-omit-frame-pointer
cc_prog "$T/known_nofp" "$PROGS/heapknown.c" -O2 -fomit-frame-pointer
cc_prog "$T/known_linked" "$PROGS/heapknown.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
cc_prog "$T/known_cpp" "$PROGS/heapknown_cpp.cc"

run() { # NAME PROGRAM [ENV...]
  name=$1; prog=$2; shift 2
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$name.pb.gz" "$@" LD_PRELOAD="$LIB" "$prog" > "$T/$name.truth" ||
    fail "$name: program failed"
  [ -s "$T/$name.pb.gz" ] || fail "$name: no profile written"
  check_truth "$T/$name.truth" "$T/$name.pb.gz"
  # The binary given explicitly must symbolize the same way.
  check_truth "$T/$name.truth" "$T/$name.pb.gz" "$prog"
  note "$name: exact"
}

run preload "$T/known"
run preload_fp "$T/known_fp" CPROF_UNWIND=fp
run nofp "$T/known_nofp"
run cpp "$T/known_cpp"

# Linked: no preload, the program writes its own profile through the API.
CPROF_RATE=1 "$T/known_linked" "$T/linked.pb.gz" > "$T/linked.truth" || fail "linked program failed"
check_truth "$T/linked.truth" "$T/linked.pb.gz"
note "linked: exact"

# The leaf is the program's function, never malloc, cprof or operator new.
for p in preload cpp; do
  go tool pprof -top -nodefraction=0 "$T/$p.pb.gz" 2>/dev/null | grep -E ' (malloc|calloc|realloc|operator new|_Znwm|_Znam|heap_record_alloc|unwind_capture)$' &&
    fail "$p: allocator or profiler frames in the profile"
done
exit 0
