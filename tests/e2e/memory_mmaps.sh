#!/bin/sh
# The mmap hooks under threads (tests/progs/memory_mmaps.c) at
# CPROF_RATE=1: 80000 mappings made and unmapped by 4 threads while one
# function keeps 10 MiB mapped and another moves the break (sbrk up, sbrk
# down, brk up); the memory profile then holds exactly the kept mappings
# and the break's growth with their stacks (resident and virtual), and the
# table exactly those 10 and the break's 2 (an unmapped range not let go
# stays in it), and the program's own output and exit status are intact.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/mm" "$PROGS/memory_mmaps.c" -ldl
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/mm" "$T" > "$T/out" || fail "program failed ($?)"
grep -q '^EXPECT keeper ' "$T/out" && grep -q '^EXPECT breaker ' "$T/out" || fail "no EXPECT lines"
go tool pprof -raw "$T/mm" "$T/mem.pb.gz" > "$T/raw" 2> "$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read it"; }
# Kept: the 10 mappings alive and the break's two growths, nothing else
# (the program maps nothing more; glibc's own maps and break go round the
# hooks).
grep -q '^Comment: .*; 12 sampled mmaps (0 dropped)' "$T/raw" ||
  { grep Comment "$T/raw"; fail "the table kept unmapped ranges"; }
awk -v out="$T/out" 'BEGIN { while ((getline l < out) > 0) { split(l, f, " "); if (f[1] == "EXPECT") want[f[2]] = f[3] } }
  /^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0 }
  s && /: / { split($0, a, ": "); split(a[1], v, " "); split(a[2], ids, " "); n++; r[n] = v[1]; vv[n] = v[2]; leaf[n] = ids[1]; next }
  s && /class:\[/ { c = $0; sub(/.*class:\[/, "", c); sub(/\].*/, "", c); cls[n] = c }
  l && /^ +[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); fn[id] = $4 }
  END { for (i = 1; i <= n; i++) if (cls[i] == "mmap") { kr[fn[leaf[i]]] += r[i]; kv[fn[leaf[i]]] += vv[i] }
        for (k in want) {
          printf "# %s: resident %d virtual %d, want %d\n", k, kr[k], kv[k], want[k]
          if (!(kv[k] == want[k] && kr[k] >= want[k] && kr[k] <= want[k] + 8192)) bad = 1 }
        exit bad }' "$T/raw" ||
  fail "the kept mappings or the break are not exactly in the profile with their stack"
echo "ok: 80000 mappings made and unmapped by threads, the kept ones and the break exact"
