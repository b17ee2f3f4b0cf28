#!/bin/sh
# Go's "# runtime.MemStats" block in heap?debug=1 (Go's fields, Go's order),
# under glibc, jemalloc and tcmalloc at CPROF_RATE=1: between two texts a
# program whose allocations are known (tests/progs/memstats_known.c) must
# move Alloc/HeapAlloc by exactly its live bytes, HeapObjects by its live
# count, Mallocs and Frees by its calls; in each text Mallocs - Frees =
# HeapObjects, Sys >= HeapSys >= HeapInuse >= Alloc (the allocator's own
# figures are found), the stacks are seen, and go tool pprof reads it.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/msk" "$PROGS/memstats_known.c" -ldl
LIBDIR=/usr/lib/x86_64-linux-gnu
GO_FIELDS="Alloc TotalAlloc Sys Lookups Mallocs Frees HeapAlloc HeapSys HeapIdle HeapInuse HeapReleased
HeapObjects Stack MSpan MCache BuckHashSys GCSys OtherSys NextGC LastGC PauseNs PauseEnd NumGC NumForcedGC
GCCPUFraction DebugGC MaxRSS"
ran=0
for alloc in glibc "$LIBDIR/libjemalloc.so.2" "$LIBDIR/libtcmalloc_minimal.so.4"; do
  pre=$LIB
  if [ "$alloc" != glibc ]; then
    [ -f "$alloc" ] || { note "no $alloc: not tested"; continue; }
    pre="$LIB $alloc"
  fi
  ran=$((ran + 1))
  out=$(CPROF_RATE=1 LD_PRELOAD="$pre" "$T/msk" "$T") || fail "$alloc: program failed"
  # The block's field names, in order.
  names=$(sed -n '/^# runtime.MemStats$/,/^# MaxRSS/p' "$T/after.txt" | sed -n 's/^# \([A-Za-z]*\) = .*/\1/p' | tr '\n' ' ')
  [ "$names" = "$(echo $GO_FIELDS) " ] || fail "$alloc: fields differ from Go's: $names"
  echo "$out" | awk -v who="$alloc" -v before="$T/before.txt" -v after="$T/after.txt" '
    function load(file, arr,   line, kv) {
      while ((getline line < file) > 0)
        if (line ~ /^# [A-Za-z]+ = /) { split(substr(line, 3), kv, " = "); if (!(kv[1] in arr)) arr[kv[1]] = kv[2] }
    }
    function check(cond, what) { if (!cond) { printf "%s: %s\n", who, what; bad = 1 } }
    $1 == "EXPECT" {
      load(before, b); load(after, a)
      check(a["Alloc"] - b["Alloc"] == $2, "Alloc moved " a["Alloc"] - b["Alloc"] ", live bytes " $2)
      check(a["HeapObjects"] - b["HeapObjects"] == $3, "HeapObjects moved " a["HeapObjects"] - b["HeapObjects"] ", live " $3)
      check(a["Mallocs"] - b["Mallocs"] == $4, "Mallocs moved " a["Mallocs"] - b["Mallocs"] ", made " $4)
      check(a["Frees"] - b["Frees"] == $5, "Frees moved " a["Frees"] - b["Frees"] ", made " $5)
      for (k = 0; k < 2; k++) {
        if (k == 0) { for (f in a) s[f] = a[f] } else { for (f in b) s[f] = b[f] }
        check(s["Alloc"] == s["HeapAlloc"], "Alloc " s["Alloc"] " != HeapAlloc " s["HeapAlloc"])
        check(s["Mallocs"] - s["Frees"] == s["HeapObjects"], "Mallocs - Frees != HeapObjects")
        check(s["Sys"] + 0 >= s["HeapSys"] + 0 && s["HeapSys"] + 0 >= s["HeapInuse"] + 0,
              "Sys " s["Sys"] " HeapSys " s["HeapSys"] " HeapInuse " s["HeapInuse"])
        check(s["HeapSys"] == s["HeapIdle"] + s["HeapInuse"], "HeapSys != HeapIdle + HeapInuse")
        check(s["BuckHashSys"] + s["OtherSys"] > 0, "no profiler memory")
        split(s["Stack"], st, " / ")
        check(st[1] + 0 > 0 && st[1] + 0 <= st[2] + 0, "Stack " s["Stack"])
      }
      check(a["HeapInuse"] + 0 >= a["Alloc"] + 0, "HeapInuse " a["HeapInuse"] " < Alloc " a["Alloc"] " (allocator figures missing?)")
      found = 1
    }
    END { if (!found) print who ": no EXPECT line"; exit bad || !found }' || fail "$alloc: MemStats wrong"
  go tool pprof -raw "$T/msk" "$T/after.txt" > "$T/raw" 2> "$T/raw.err" || fail "$alloc: pprof cannot read the text: $(head -3 "$T/raw.err")"
  grep -q main "$T/raw" || fail "$alloc: pprof read no stacks"
  note "$alloc: $(grep -E '^# (Alloc|HeapSys|HeapInuse) ' "$T/after.txt" | tr '\n' ' ')"
done
[ "$ran" -gt 0 ] || skip "no allocator to test"
echo "ok: MemStats under $ran allocators"
