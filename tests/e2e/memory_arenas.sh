#!/bin/sh
# The memory profile's heap-free under glibc with several arenas
# (tests/progs/memory_arenas.c: one arena grown to two heaps, mmapped
# chunks): its free bytes come from cprof's exact counters, not from
# mallinfo2, whose walk of every free chunk made writing the profile cost
# a third of xmllint's run (docs/memory.md). Checked: libcprof.so calls no
# mallinfo2 while it writes (a preloaded counter says); heap-free's bytes
# equal mallinfo2's free bytes read just before the write, within what
# the two count differently (tcache: free here, in use there; a word per
# mmapped chunk); and an arena's second heap, which the kernel merges with
# the first, is the allocator's, not class mmap (whose resident part is
# small: the joined threads' stacks glibc keeps are not resident).
# timeout: 120
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/ma" "$PROGS/memory_arenas.c" -ldl
gcc -std=gnu11 -O1 -shared -fPIC -o "$T/mc.so" "$PROGS/mallinfo_count.c" -ldl ||
  fail "cannot build mallinfo_count.c"
for rate in 1 524288; do
  CPROF_RATE=$rate LD_PRELOAD="$LIB $T/mc.so" "$T/ma" "$T/mem.txt" > "$T/out" ||
    fail "rate $rate: program failed ($?)"
  set -- $(grep '^CPROF_CALLS ' "$T/out")
  before=${2:-x} after=${3:-y}
  [ "$before" = "$after" ] || fail "rate $rate: libcprof.so called mallinfo2 $((after - before)) times while writing"
  grep -q '^KEPT 172032$' "$T/out" || fail "rate $rate: the program's blocks changed: $(grep KEPT "$T/out")"
  fd=$(awk '$1 == "FORDBLKS" { print $2 }' "$T/out")
  awk -v fd="$fd" -v rate=$rate '
    / heap-free: \[malloc: freed, held\]$/ { free = $2 }
    / mmap: / && $1 >= 1048576 { print "FAIL: rate " rate ": " $1 " resident bytes of class mmap: " $0; bad = 1 }
    END { d = free - fd
          printf "# rate %s: heap-free virtual %d, mallinfo2 fordblks %d, difference %d\n", rate, free, fd, d
          # tcache: 7 chunks of each of 64 sizes up to 1 KiB per thread (3 here)
          if (free == "" || d < -65536 || d > 3 * 7 * 64 * 1024 + 65536) {
            print "FAIL: rate " rate ": heap-free " free " is not mallinfo2'"'"'s " fd; bad = 1 }
          exit bad }' "$T/mem.txt" || { cat "$T/mem.txt"; fail "rate $rate: heap-free or mmap class wrong"; }
done
echo "ok: heap-free from the counters equals mallinfo2's free bytes, arenas' heaps the allocator's"
