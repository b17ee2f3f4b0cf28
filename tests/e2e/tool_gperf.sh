#!/bin/sh
# timeout: 120
# cprof vs go tool pprof on a gperftools heap profile (legacy text format,
# "@ heapprofile" with MAPPED_LIBRARIES) of a C program built with -g,
# symbolized from DWARF by both tools.
#
# Deliberate difference, made explicit: cprof names libc and crt frames from
# the ELF symbol table (__libc_start_call_main, _start) where go tool pprof
# prints [libc.so.6] / [heapc]. The comparisons therefore -show only the
# program's own functions, which both tools name from DWARF.
. "$(dirname "$0")/tool_common.inc"
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
[ -e "$TC" ] || { echo "skip: $TC (google-perftools) not installed"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
src=$CPROF_TOP/tests/progs/heapc
(cd "$src" && cc -g -O1 -fno-omit-frame-pointer -fdebug-prefix-map="$src"=. -o "$T/heapc" heapc.c) ||
  { echo "FAIL: building heapc"; exit 1; }
(cd "$T" && LD_PRELOAD=$TC HEAPPROFILE=$T/heapc ./heapc >/dev/null 2>&1)
h=$(ls "$T"/heapc.*.heap 2>/dev/null | tail -n1)
[ -n "$h" ] || { echo "FAIL: no heap profile written"; exit 1; }
show='-show=^(alloc_|nested_|main$)'
# Not -files: cprof's symbolizer fills Function.start_line from DWARF, which
# go tool pprof 1.19 leaves 0, and pprof keys file nodes by start line too.
for f in "-top" "-top -cum" "-traces" "-tree" "-peek alloc_" "-top -lines" \
         "-top -sample_index=alloc_space" "-top -alloc_objects" "-top -inuse_objects" \
         "-top -focus=nested" "-top -ignore=large" "-top -nodecount=2" "-list alloc_medium" \
         "-list nested_helper" "-traces -lines"; do
  # shellcheck disable=SC2086
  cmp_tools "$h" $f "$show" "$T/heapc"
done
finish
