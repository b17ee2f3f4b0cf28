#!/bin/sh
# make demo: build examples/leak.c, run it under the preloaded profiler and
# show go tool pprof's report of where the memory went.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/demo
mkdir -p "$out"
gcc -g -O1 -o "$out/leak" "$top/examples/leak.c"
echo "\$ LD_PRELOAD=build/libcprof.so CPROF_HEAP_PROFILE=build/demo/heap.pb.gz build/demo/leak"
LD_PRELOAD="$top/build/libcprof.so" CPROF_HEAP_PROFILE="$out/heap.pb.gz" "$out/leak"
echo
echo "\$ go tool pprof -top build/demo/heap.pb.gz        # in use at exit: the leak"
go tool pprof -top "$out/heap.pb.gz"
echo
echo "\$ go tool pprof -top -sample_index=alloc_space build/demo/heap.pb.gz"
go tool pprof -top -sample_index=alloc_space "$out/heap.pb.gz"
