#!/bin/sh
# No global lock on the allocation hooks' per-allocation path (issue 24),
# as a build check on the compiled code: from every allocation entry point
# (allochooks.o's and newdelete.o's exported functions: malloc, free,
# calloc, realloc, the aligned ones, operator new and delete), through
# direct calls and tail jumps across build/pic/src/{runtime,base}/*.o, the
# functions that take an rt_lock (a call to rt_lock_slow) are exactly the
# ones listed below, each with why its lock is not a global one taken per
# allocation. Sampled and unsampled paths alike: the graph holds every
# branch. A lock added on that path (as the peak's was) fails here until
# it is listed with its reason.
#
# Not walked into (boundaries, each taken once or on growth, not per
# allocation): dump_oom (an allocation failed: one dump), resolve (the
# process's first allocation), rt_warn (a message), ownheap_* (cprof's own
# work, rt_self.own), arena_* (a table grows: a new bucket, a live-map
# stripe doubling, cfi's tables at the first walk). Calls out of the
# objects (the loader's dl_iterate_phdr, libunwind) are listed in the log.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/callgraph_common.inc"

objs=$(ls "$BUILD"/pic/src/runtime/*.o "$BUILD"/pic/src/base/*.o 2>/dev/null)
[ -n "$objs" ] || fail "no runtime objects under $BUILD/pic (run make first)"
command -v objdump > /dev/null || skip "objdump (binutils) not installed"
[ "$(uname -m)" = x86_64 ] || skip "the call graph is read from x86-64 code"

# "function: why its lock is no global one per allocation".
allowed='
livemap_insert: one of 64 stripes of the live map, by the address (a sampled allocation)
livemap_remove: one of 64 stripes of the live map, by the address (a free of a sampled block)
buckets_intern: the insert lock, only for a stack not seen before (lookups are lock-free)
counters_acquire: a thread'\''s first allocation, which takes its counter block
'
stop='^(dump_oom|allochooks\.o:resolve|rt_warn|ownheap_.*|arena_.*)$'

callgraph_edges $objs
for o in allochooks.o newdelete.o; do
  nm "$BUILD/pic/src/runtime/$o" | awk '$2 == "T" { print $3 }'
done | sort -u > "$T/reach"
[ "$(grep -cxE 'malloc|free|calloc|realloc|_Znwm|_ZdlPv' "$T/reach")" = 6 ] ||
  { cat "$T/reach"; fail "the allocation entry points are not all exported"; }
callgraph_reach '^(rt_lock_slow|rt_unlock_wake)$' "$stop"
note "$(wc -l < "$T/reach") functions reached from the allocation hooks"
grep -vE "$stop" "$T/reach" > "$T/walked"
awk 'NR == FNR { in_[$1] = 1; next } ($1 in in_) && $2 ~ /^EXT:/ { sub(/^EXT:/, "", $2); print $2 }' \
  "$T/walked" "$T/edges" | sort -u | tr '\n' ' ' > "$T/ext"
note "their calls out of the objects: $(cat "$T/ext")"
awk 'NR == FNR { in_[$1] = 1; next } ($1 in in_) && $2 == "rt_lock_slow" { print $1 }' \
  "$T/walked" "$T/edges" | sort -u > "$T/lockers"

bad=0
while read -r fn; do
  why=$(echo "$allowed" | sed -n "s/^$fn: //p")
  if [ -n "$why" ]; then note "lock in $fn: $why"
  else echo "FAIL: $fn takes an rt_lock on the allocation hooks' path" >&2; bad=1; fi
done < "$T/lockers"
[ -s "$T/lockers" ] || fail "no lock found at all: the graph misses the hooks' paths"
[ $bad -eq 0 ] || fail "a lock on the per-allocation path is not among the listed ones"
exit 0
