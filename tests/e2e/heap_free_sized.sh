#!/bin/sh
# free_sized and free_aligned_sized (C23) are hooked: glibc 2.36 does not
# export them (a program finds cprof's), a newer glibc's would bypass
# free's hook. tests/progs/freesized.c frees 60 of 100 1000-byte blocks
# with free_sized and 70 of 100 4096-byte aligned blocks with
# free_aligned_sized; at CPROF_RATE=1 the heap profile's in-use values
# are exactly the kept blocks, and the allocations are all counted.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/fs" "$PROGS/freesized.c" -ldl
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/fs" "$T/h.pb.gz" > "$T/out" 2> "$T/err" ||
  { cat "$T/err"; fail "program failed"; }
[ -s "$T/err" ] && { cat "$T/err"; fail "unexpected stderr"; }
[ "$(cat "$T/out")" = ok ] || fail "output: $(cat "$T/out")"
pprof_flat inuse_space "$T/h.pb.gz" "$T/fs" > "$T/is"
pprof_flat inuse_objects "$T/h.pb.gz" "$T/fs" > "$T/io"
pprof_flat alloc_objects "$T/h.pb.gz" "$T/fs" > "$T/ao"
grep -q '^site_sized 40$' "$T/io" || { cat "$T/io"; fail "site_sized inuse_objects"; }
grep -q '^site_sized 40000$' "$T/is" || { cat "$T/is"; fail "site_sized inuse_space"; }
grep -q '^site_aligned 30$' "$T/io" || { cat "$T/io"; fail "site_aligned inuse_objects"; }
grep -q '^site_aligned 122880$' "$T/is" || { cat "$T/is"; fail "site_aligned inuse_space"; }
grep -q '^site_sized 100$' "$T/ao" || { cat "$T/ao"; fail "site_sized alloc_objects"; }
grep -q '^site_aligned 100$' "$T/ao" || { cat "$T/ao"; fail "site_aligned alloc_objects"; }
note "sized frees leave the profile: 40 and 30 objects in use, exact"
exit 0
