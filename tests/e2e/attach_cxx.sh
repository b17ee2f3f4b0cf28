#!/bin/sh
# cprof attach on a C++ program started without the preload
# (tests/progs/attach_prog_cxx.cc): operator new and delete from std::threads
# are routed to cprof; the sites after the attach are exact at -rate=1,
# the deletes of objects from before the attach take nothing; heap, allocs,
# profile, goroutine and mutex come through go tool pprof; the program ends
# with its usual output and exits 0.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/attach_prog_cxx.cc"
plain_run plain "$T/prog"

attached_run at "$T/prog"
has site_objects "$(go tool pprof -top -sample_index=alloc_space "$URL/allocs" 2>/dev/null)"
has spin "$(go tool pprof -top "$URL/profile?seconds=2" 2>/dev/null)"
has main "$(go tool pprof -top -nodefraction=0 "$URL/goroutine" 2>/dev/null)"
has fight "$(go tool pprof -top "$URL/mutex" 2>/dev/null)"
finish at
same_output at
exit 0
