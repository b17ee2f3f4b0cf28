#!/bin/sh
# The mmap hooks under threads (tests/progs/memory_mmaps.c) at
# CPROF_RATE=1: 80000 mappings made and unmapped by 4 threads while one
# function keeps 10 MiB mapped; the memory profile then holds exactly the
# kept mappings with their stack (resident and virtual), and the table
# exactly those 10 (an unmapped range not let go stays in it), and the
# program's own output and exit status are intact.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/mm" "$PROGS/memory_mmaps.c" -ldl
CPROF_RATE=1 LD_PRELOAD="$LIB" "$T/mm" "$T" > "$T/out" || fail "program failed ($?)"
want=$(awk '$1 == "EXPECT" && $2 == "keeper" { print $3 }' "$T/out")
[ -n "$want" ] || fail "no EXPECT line"
go tool pprof -raw "$T/mm" "$T/mem.pb.gz" > "$T/raw" 2> "$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read it"; }
# Kept: the 10 mappings alive, nothing else (the program maps nothing more
# through mmap; glibc's own maps go round the hooks).
grep -q '^Comment: .*; 10 sampled mmaps (0 dropped)' "$T/raw" ||
  { grep Comment "$T/raw"; fail "the table kept unmapped ranges"; }
awk -v want="$want" '/^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0 }
  s && /: / { split($0, a, ": "); split(a[1], v, " "); split(a[2], ids, " "); n++; r[n] = v[1]; vv[n] = v[2]; leaf[n] = ids[1]; next }
  s && /class:\[/ { c = $0; sub(/.*class:\[/, "", c); sub(/\].*/, "", c); cls[n] = c }
  l && /^ +[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); fn[id] = $4 }
  END { for (i = 1; i <= n; i++) if (cls[i] == "mmap" && fn[leaf[i]] == "keeper") { kr += r[i]; kv += vv[i] }
        printf "# keeper: resident %d virtual %d, want %d\n", kr, kv, want
        exit !(kv == want && kr >= want && kr <= want + 8192) }' "$T/raw" ||
  fail "the kept mappings are not exactly in the profile with their stack"
echo "ok: 80000 mappings made and unmapped by threads, the kept ones exact"
