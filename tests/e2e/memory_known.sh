#!/bin/sh
# The memory profile (CPROF_MEMORY_PROFILE's, /debug/pprof/memory's) of a
# process with known parts (tests/progs/memory_known.c) at CPROF_RATE=1,
# under glibc, tcmalloc and jemalloc behind cprof: its resident_space total is smaps_rollup's Rss read by the
# program just after the write, within 2%, and its virtual_space total
# smaps's Size within 2% of what is not cprof's 64 GiB reservation; each
# known part is in its class (heap exact by function, the untouched block
# not resident, the freed small blocks heap-free, each worker's stack, the
# file mapping by path (grown by mremap from a page), the anonymous mmaps
# in class mmap with their stacks, exactly, one trimmed by munmap, one
# grown by mremap, one grown from a page, which at the default rate is
# kept for its grown bytes); go tool pprof 1.19 and 1.23 and cprof read
# it, and -tagfocus class=mmap keeps the mmap class alone.
# jemalloc's emptied slabs hold no sampled object, so its mappings are not
# told from the program's (docs/memory.md): heap-free and mmap are not
# checked under it.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
cc_prog "$T/mk" "$PROGS/memory_known.c" -ldl
LIBDIR=/usr/lib/x86_64-linux-gnu
ran=0
# glibc again at the default rate: the sums and the classes but for the
# heap's sampled estimates hold as well.
for alloc in glibc "$LIBDIR/libtcmalloc_minimal.so.4" "$LIBDIR/libjemalloc.so.2" glibc@default; do
rate=1
[ "$alloc" = glibc@default ] && { alloc=glibc; rate=524288; }
pre=$LIB
if [ "$alloc" != glibc ]; then
  [ -f "$alloc" ] || { note "no $alloc: not tested"; continue; }
  pre="$LIB $alloc"
fi
ran=$((ran + 1))
rm -f "$T/mem.pb.gz"
CPROF_RATE=$rate LD_PRELOAD="$pre" "$T/mk" "$T" > "$T/out" || fail "$alloc: program failed ($?)"
[ $rate = 1 ] || alloc="$alloc at rate $rate"
[ -s "$T/mem.pb.gz" ] || fail "no memory profile written"
grep -q '^ROLLUP ' "$T/out" || fail "program printed no ROLLUP line"

# "class frame resident virtual swap" per sample, leaf frame named.
go tool pprof -raw "$T/mk" "$T/mem.pb.gz" > "$T/raw" 2> "$T/raw.err" ||
  { cat "$T/raw.err"; fail "go tool pprof cannot read the profile"; }
awk '/^Samples:/ { sec = "s"; next } /^Locations/ { sec = "l"; next } /^Mappings/ { sec = "m"; next }
     sec == "s" && /: / { split($0, a, ": "); split(a[1], v, " "); split(a[2], ids, " ")
       n++; r[n] = v[1]; vv[n] = v[2]; sw[n] = v[3]; leaf[n] = ids[1]; next }
     sec == "s" && /class:\[/ { c = $0; sub(/.*class:\[/, "", c); sub(/\].*/, "", c); cls[n] = c }
     sec == "l" && /^ +[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); f = $0
       sub(/^ +[0-9]+: 0x[0-9a-f]+ (M=[0-9]+ )?/, "", f); sub(/ [^ ]*:[0-9]+ s=.*/, "", f); fn[id] = f }
     END { for (i = 1; i <= n; i++) printf "%s\t%s\t%s\t%s\t%s\n", cls[i], fn[leaf[i]], r[i], vv[i], sw[i] }' \
  "$T/raw" > "$T/samples"
[ -s "$T/samples" ] || fail "no samples"
awk -F'\t' '$1 == "" { bad = 1 } END { exit bad }' "$T/samples" || fail "a sample without a class"

je=0; case $alloc in *jemalloc*) je=1 ;; esac
awk -F'\t' -v out="$T/out" -v je=$je -v who="$alloc" -v exact=$((rate == 1)) '
  BEGIN { while ((getline l < out) > 0) { split(l, f, " ")
            if (f[1] == "ROLLUP") { rss = f[2]; size = f[3] }
            else if (f[1] == "EXPECT") { want[f[2]] = f[3]; want2[f[2]] = f[4]; if (f[2] == "file") fsz = f[4] } } }
  function check(cond, what) { if (!cond) { print "FAIL: " who ": " what; bad = 1 } }
  { res += $3; virt += $4; cres[$1] += $3; cvirt[$1] += $4
    if ($1 == "heap") { hr[$2] += $3; hv[$2] += $4 }
    if ($1 == "mmap") { mr[$2] += $3; mv[$2] += $4 }
    if ($1 == "stack" && $2 ~ /worker-/) { nw++; check($3 >= want["stack"] && $3 <= want["stack"] + 262144, "stack " $2 " resident " $3) }
    if ($1 == "file" && $2 == want["file"]) { fr = $3; fv = $4 } }
  END {
    check(res >= rss * 0.98 && res <= rss * 1.02, "resident total " res " vs smaps_rollup Rss " rss)
    d = virt - size; if (d < 0) d = -d
    check(d <= 0.02 * (size - cvirt["cprof"]), "virtual total " virt " vs smaps Size " size " (cprof " cvirt["cprof"] ")")
    # blocks 16 and 128 times the rate: sampled, scaled by less than 1e-6
    t = want["touched_block"]; u = want["untouched_block"]
    check(hr["touched_block"] >= t && hr["touched_block"] <= t * 1.000001 && hv["touched_block"] == hr["touched_block"],
          "touched_block heap " hr["touched_block"] "/" hv["touched_block"])
    check(hv["untouched_block"] >= u && hv["untouched_block"] <= u * 1.000001 && hr["untouched_block"] < 8192,
          "untouched_block heap resident " hr["untouched_block"] " virtual " hv["untouched_block"])
    check(!exact || hr["mid_blocks"] == want["mid_blocks"] && hv["mid_blocks"] == want["mid_blocks"],
          "mid_blocks heap " hr["mid_blocks"] "/" hv["mid_blocks"])
    check(je || cres["heap-free"] >= want["freed"] && cres["heap-free"] <= want["freed"] * 1.1 + 1048576,
          "heap-free resident " cres["heap-free"] ", freed " want["freed"])
    check(nw == 3, nw " worker stacks")
    check(fr == fsz && fv == fsz, "file " want["file"] " " fr "/" fv ", want " fsz)
    # the mmap hook: the mapping with its stack, exact (16 MiB is above any rate)
    # resident: what the program touched, and at most two pages more (seen:
    # one page more in a 16 MiB mapping of which 6 MiB were written)
    for (k2 in want) if (k2 ~ /^map_/)
      check(mr[k2] >= want[k2] && mr[k2] <= want[k2] + 8192 && mv[k2] == want2[k2],
            k2 " mmap " mr[k2] "/" mv[k2] ", want " want[k2] "/" want2[k2])
    for (k2 in want) if (k2 ~ /^map_/) { known += want[k2]; knownv += want2[k2] }
    # beyond the known mappings, the loader'"'"'s and libraries'"'"' blocks: no other known part
    check(je || cres["mmap"] >= known && cres["mmap"] <= known + 4194304 && cvirt["mmap"] >= knownv,
          "mmap class " cres["mmap"] "/" cvirt["mmap"] " beside the known mappings " known "/" knownv)
    check(cres["code"] > 0 && cres["cprof"] > 0 && cvirt["other"] > 0, "code, cprof or other missing")
    printf "# %s: resident %.0f (Rss %.0f) virtual %.0f (Size %.0f); heap %.0f heap-free %.0f allocator %.0f mmap %.0f stack %.0f file %.0f code %.0f cprof %.0f\n", who,
      res, rss, virt, size, cres["heap"], cres["heap-free"], cres["allocator"], cres["mmap"], cres["stack"], cres["file"], cres["code"], cres["cprof"]
    exit bad }' "$T/samples" || { cat "$T/samples"; fail "$alloc: memory profile does not match the known parts"; }

# -tagfocus class=mmap keeps exactly the mmap class, with both Go versions.
mv=$(awk -F'\t' '$1 == "mmap" { s += $4 } END { print s }' "$T/samples")
for go in go /usr/lib/go-1.23/bin/go "$BUILD/cprof"; do
  command -v "$go" > /dev/null || { note "no $go"; continue; }
  case $go in */cprof) tool=$go ;; *) tool="$go tool pprof" ;; esac
  $tool -tagfocus class=mmap -top -unit=byte -sample_index=virtual_space "$T/mem.pb.gz" \
    > "$T/focus" 2> "$T/focus.err" || { cat "$T/focus.err"; fail "$go: -tagfocus failed"; }
  grep -q "accounting for ${mv}B" "$T/focus" || { cat "$T/focus"; fail "$alloc, $go: -tagfocus class=mmap is not the mmap class ($mv)"; }
done
done
[ "$ran" -gt 0 ] || skip "no allocator to test"
echo "ok: memory profile adds up to smaps and puts each known part in its class, $ran allocators"
