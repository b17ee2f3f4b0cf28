#!/bin/sh
# timeout: 300
# -disasm: on a non-PIE C binary's CPU and heap profiles, the same
# routines, addresses and per-instruction values as go tool pprof -disasm
# (Go disassembles with its own decoder, so the instruction text is not
# compared); on a PIE executable, a shared library and a stripped
# executable with a separate debug file (where Go 1.19 cannot), every
# instruction row with a value lies inside its function (nm -S) and the
# rows add up to the function's flat. Also the shell's disasm command.
. "$(dirname "$0")/tool_common.inc"
command -v objdump >/dev/null && command -v nm >/dev/null || { echo "skip: no binutils"; exit 77; }
P=$CPROF_TOP/tests/progs
cc_flags="-g -O1 -fno-omit-frame-pointer"
# shellcheck disable=SC2086
gcc $cc_flags -fPIC -shared -o "$T/libdis.so" "$P/disasm_lib.c" &&
  gcc $cc_flags -no-pie -o "$T/nopie" "$P/disasm_main.c" -L"$T" -ldis -Wl,-rpath,"$T" &&
  gcc $cc_flags -fPIE -pie -o "$T/pie" "$P/disasm_main.c" -L"$T" -ldis -Wl,-rpath,"$T" ||
  { echo "FAIL: building"; exit 1; }
# The stripped PIE, its DWARF and symbols in a separate file found by .gnu_debuglink.
objcopy --only-keep-debug "$T/pie" "$T/stripped.debug" && objcopy --strip-all "$T/pie" "$T/stripped" &&
  objcopy --add-gnu-debuglink="$T/stripped.debug" "$T/stripped" || { echo "FAIL: objcopy"; exit 1; }
for b in nopie pie stripped; do
  CPROF_CPU_PROFILE="$T/$b.cpu" CPROF_HEAP_PROFILE="$T/$b.heap" CPROF_RATE=1 \
    LD_PRELOAD="$CPROF_BUILD/libcprof.so" "$T/$b" || { echo "FAIL: running $b"; exit 1; }
done

# Routine headers, and "address flat cum" for the rows with a value. (Go's
# decoder may stop one instruction before objdump at a section's end: all
# of Go's addresses must be among ours, checked once below.)
norm='awk '\''/^Total:|^ROUTINE|flat, cum/ { print; next } /^ *[^ ]+ +[^ ]+ +[0-9a-f]+: / && ($1 != "." || $2 != ".") { print $3, $1, $2 }'\'
for f in "cpu \bwork\b" "cpu \bwork\b -sample_index=samples" "heap \bgrab\b" \
         "heap \bgrab\b -sample_index=alloc_space" "heap \bgrab\b -sample_index=inuse_objects"; do
  set -- $f
  prof=$T/nopie.$1 one=$2; shift 2
  for re in '\b(main|spin|work|grab)\b' "$one"; do
    cmp_tools_filtered "$norm" "$prof" "$@" -disasm="$re" "$T/nopie"
    grep -q '^ROUTINE' "$T/c.out" || { echo "FAIL: $re $f: no routine"; fails=$((fails + 1)); }
  done
done
checks=$((checks + 1))
addrs='awk '\''/^ *[^ ]+ +[^ ]+ +[0-9a-f]+: / { print $3 }'\'
"$CPROF" -disasm='\b(main|spin|work|grab)\b' "$T/nopie" "$T/nopie.heap" 2>/dev/null | sh -c "$addrs" | sort > "$T/ca"
go tool pprof -disasm='\b(main|spin|work|grab)\b' "$T/nopie" "$T/nopie.heap" 2>/dev/null | sh -c "$addrs" | sort > "$T/ga"
[ -s "$T/ga" ] && [ -z "$(comm -13 "$T/ca" "$T/ga")" ] ||
  { echo "FAIL: addresses of go tool pprof missing: $(comm -13 "$T/ca" "$T/ga" | head -5 | tr '\n' ' ')"; fails=$((fails + 1)); }

# inside FILE PROFILE FLAGS...: rows with values inside their function, summing to its flat.
inside() {
  file=$1; prof=$2; shift 2
  checks=$((checks + 1))
  "$CPROF" "$@" "$prof" > "$T/d.out" 2> "$T/d.err"
  nm -S "$file" > "$T/nm" 2>/dev/null; [ -s "$T/nm" ] || nm -S "$T/stripped.debug" > "$T/nm"
  if ! awk 'function hex(s,   i, v) { v = 0; s = tolower(s)
                                     for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                                     return v }
    NR == FNR { if (NF == 4) { start[$4] = hex($1); size[$4] = hex($2) } next }
    function close_routine() { if (name != "" && sum != want) { printf "%s: rows sum to %d, flat %d\n", name, sum, want; bad = 1 } }
    /^ROUTINE/ { close_routine(); name = $3; sum = 0; routines++
                 if (!(name in start)) { print "no symbol " name; bad = 1 } ; next }
    /flat, cum/ { want = $1 + 0; next }
    /^ *[^ ]+ +[^ ]+ +[0-9a-f]+: / && name != "" {
      if ($1 == ".") next
      a = hex(substr($3, 1, length($3) - 1)); sum += $1 + 0
      if (a < start[name] || a >= start[name] + size[name]) { printf "%s: row %x outside\n", name, a; bad = 1 } }
    END { close_routine(); if (!routines) { print "no routine"; bad = 1 } ; exit bad }' "$T/nm" "$T/d.out"; then
    echo "FAIL: cprof $* $(basename "$prof") ($(basename "$file")):"; head -5 "$T/d.err" | sed 's/^/    /'
    fails=$((fails + 1))
  fi
}
for b in pie stripped; do
  inside "$T/$b" "$T/$b.cpu" -disasm='\b(work|spin)\b' -unit=ns
  inside "$T/$b" "$T/$b.heap" -disasm='\bgrab\b' -sample_index=alloc_objects
  inside "$T/libdis.so" "$T/$b.cpu" -disasm='lib_work' -unit=ns
  inside "$T/libdis.so" "$T/$b.heap" -disasm='lib_grab' -sample_index=inuse_objects
done

# -intel_syntax: objdump's Intel syntax (no % registers), the same rows.
checks=$((checks + 1))
"$CPROF" -disasm='\bgrab\b' -intel_syntax "$T/nopie" "$T/nopie.heap" > "$T/intel.out" 2>&1
"$CPROF" -disasm='\bgrab\b' "$T/nopie" "$T/nopie.heap" > "$T/att.out" 2>&1
if grep -q '%[a-z]' "$T/intel.out" || ! grep -q '%[a-z]' "$T/att.out" ||
   [ "$(sh -c "$addrs" < "$T/intel.out")" != "$(sh -c "$addrs" < "$T/att.out")" ]; then
  echo "FAIL: -intel_syntax"; head -5 "$T/intel.out"; fails=$((fails + 1))
fi

# The shell's disasm, and a pattern that matches nothing.
checks=$((checks + 1))
printf 'sample_index=alloc_objects\ndisasm lib_grab\nquit\n' | "$CPROF" "$T/pie.heap" > "$T/sh.out" 2>&1
grep -q '^ROUTINE ======================== lib_grab$' "$T/sh.out" || { echo "FAIL: shell disasm"; sed 's/^/    /' "$T/sh.out" | head; fails=$((fails + 1)); }
checks=$((checks + 1))
"$CPROF" -disasm=nosuchfunction "$T/pie.heap" > "$T/n.out" 2> "$T/n.err"
[ $? -ne 0 ] && grep -q 'no matches found for regexp: nosuchfunction' "$T/n.err" ||
  { echo "FAIL: no match"; fails=$((fails + 1)); }
finish
