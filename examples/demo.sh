#!/bin/sh
# make demo: build examples/leak.c, run it under the preloaded profiler and
# show where the memory went, with cprof (go tool pprof reads the same file).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/demo
mkdir -p "$out"
gcc -g -O1 -o "$out/leak" "$top/examples/leak.c"
echo "\$ LD_PRELOAD=build/libcprof.so CPROF_HEAP_PROFILE=build/demo/heap.pb.gz build/demo/leak"
LD_PRELOAD="$top/build/libcprof.so" CPROF_HEAP_PROFILE="$out/heap.pb.gz" "$out/leak"
echo
echo "\$ build/cprof -top build/demo/heap.pb.gz        # in use at exit: the leak"
"$top/build/cprof" -top "$out/heap.pb.gz"
echo
echo "\$ build/cprof -top -sample_index=alloc_space build/demo/heap.pb.gz"
"$top/build/cprof" -top -sample_index=alloc_space "$out/heap.pb.gz"
echo
echo "\$ build/cprof -list cache_insert build/demo/heap.pb.gz"
"$top/build/cprof" -list cache_insert "$out/heap.pb.gz"
echo
echo "(go tool pprof reads the same file: go tool pprof -top build/demo/heap.pb.gz)"
