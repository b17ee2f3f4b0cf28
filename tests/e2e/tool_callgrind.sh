#!/bin/sh
# timeout: 300
# -callgrind and -topproto against go tool pprof on a non-PIE C binary's
# CPU and heap profiles (shown nodes limited to the binary's own functions:
# cprof also names libc's frames, which pprof 1.19 leaves as addresses);
# valgrind's callgrind_annotate reads cprof's callgrind output with the same
# per-function totals as -top's cum column (callgrind call costs are
# inclusive); -kcachegrind hands a .grind file to the kcachegrind on PATH;
# cprof -h lists no format as unavailable.
. "$(dirname "$0")/tool_common.inc"
P=$CPROF_TOP/tests/progs
gcc -g -O1 -fno-omit-frame-pointer -fPIC -shared -o "$T/libdis.so" "$P/disasm_lib.c" &&
  gcc -g -O1 -fno-omit-frame-pointer -no-pie -o "$T/nopie" "$P/disasm_main.c" -L"$T" -ldis -Wl,-rpath,"$T" ||
  { echo "FAIL: building"; exit 1; }
CPROF_CPU_PROFILE="$T/cpu" CPROF_HEAP_PROFILE="$T/heap" CPROF_RATE=1 LD_PRELOAD="$CPROF_BUILD/libcprof.so" \
  "$T/nopie" 20000 || { echo "FAIL: running"; exit 1; }
show='-show=\b(main|spin|work|grab)\b'
# A CPU sample inside cprof's malloc hooks (recording at rate 1) names
# inlined code differently: Go 1.19's pprof reads a C library's DWARF
# without its inline frames (the outer function, the inlined line), cprof
# expands them. Such samples, and those in libc's malloc and free (named
# by their symbols in one, __libc_* in the other), are left out of both.
ign='-ignore=^((__libc_)?(malloc|free)|malloc_slow|free_slow|free_sampled)$'
for pf in cpu heap; do
  for f in "" "-sample_index=1" "-call_tree" "-focus=spin" "-unit=ms" "-lines"; do
    # shellcheck disable=SC2086
    cmp_tools "$T/$pf" -callgrind "$show" "$ign" $f "$T/nopie"
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    "$CPROF" -topproto "$show" "$ign" $f -output "$T/c.pb.gz" "$T/nopie" "$T/$pf" 2>/dev/null
    # shellcheck disable=SC2086
    go tool pprof -topproto "$show" "$ign" $f -output "$T/g.pb.gz" "$T/nopie" "$T/$pf" 2>/dev/null
    go tool pprof -raw "$T/c.pb.gz" > "$T/c.raw" 2>&1; go tool pprof -raw "$T/g.pb.gz" > "$T/g.raw" 2>&1
    if ! cmp -s "$T/c.raw" "$T/g.raw" || ! grep -q '^Samples:' "$T/c.raw"; then
      echo "FAIL: -topproto $f $pf differs from go tool pprof's:"; diff "$T/c.raw" "$T/g.raw" | head -10
      fails=$((fails + 1))
    fi
  done
done

if command -v callgrind_annotate >/dev/null; then
  for spec in "cpu -unit=ns" "heap -unit=byte -sample_index=alloc_space" "heap -unit=byte -sample_index=inuse_objects"; do
    set -- $spec
    pf=$1; shift
    checks=$((checks + 1))
    "$CPROF" -callgrind "$@" -output "$T/cg.out" "$T/$pf" 2>/dev/null
    callgrind_annotate --threshold=100 --auto=no "$T/cg.out" |
      sed -n '/file:function/,$p' | awk '$1 ~ /^[0-9,]+$/ { v = $1; gsub(",", "", v)
        for (i = 2; i <= NF; i++) if ($i ~ /:/) { f = $i; sub(/.*:/, "", f); print f, v; break } }' |
      sort > "$T/annot"
    "$CPROF" -top -nodecount=1000 "$@" "$T/$pf" 2>/dev/null |
      awk 'go { v = $4; sub(/[a-zA-Z]+$/, "", v); if (v + 0 > 0) print $6, v } / flat%/ { go = 1 }' | sort > "$T/top"
    if [ ! -s "$T/top" ] || ! cmp -s "$T/annot" "$T/top"; then
      echo "FAIL: callgrind_annotate totals differ from -top cum ($spec):"; diff "$T/annot" "$T/top" | head -10
      fails=$((fails + 1))
    fi
  done
else
  echo "# no callgrind_annotate (valgrind): not checked"
fi

# Every output format of go tool pprof -h is there.
checks=$((checks + 1))
if "$CPROF" -h 2>&1 | grep -i 'not available'; then
  echo "FAIL: cprof -h still lists formats as not available"; fails=$((fails + 1))
fi

# -kcachegrind opens the file in kcachegrind (a stand-in here).
checks=$((checks + 1))
mkdir -p "$T/bin"
printf '#!/bin/sh\ncp "$1" "%s/seen.grind"\necho "$1" > "%s/seen.name"\n' "$T" "$T" > "$T/bin/kcachegrind"
chmod +x "$T/bin/kcachegrind"
PATH="$T/bin:$PATH" "$CPROF" -kcachegrind "$T/heap" > /dev/null 2>&1
grep -q '^events: inuse_space' "$T/seen.grind" 2>/dev/null && grep -q '\.grind$' "$T/seen.name" ||
  { echo "FAIL: -kcachegrind did not run kcachegrind on a .grind file"; fails=$((fails + 1)); }
finish
