#!/bin/sh
# The runtime's profiles carry function names from the loaded objects'
# symbol tables (tests/progs/runtime_names.c): a reader without the
# binaries (a profile fetched from another host) names a static function
# of the program (.symtab) and a C library function (.dynsym), as Go's
# runtime writes named profiles; a reader that has the binary still adds
# file:line from its DWARF (the mappings' has_* flags stay unset), with
# go tool pprof and with cprof.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
export HOME="$T/home" PPROF_TMPDIR="$T/pprof"; mkdir -p "$HOME" "$PPROF_TMPDIR"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS CPROF_DEBUG_FILE_DIRECTORY
SRC=$PROGS/runtime_names.c
LINE=$(grep -n '@static-alloc' "$SRC" | cut -d: -f1)
gcc -g -O2 -fno-omit-frame-pointer -o "$T/names" "$SRC" || fail "build $SRC"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/p.pb.gz" LD_PRELOAD="$LIB" "$T/names" > "$T/out" ||
  fail "the program failed under the preload"
[ "$(cat "$T/out")" = "allocated all" ] || { cat "$T/out"; fail "the program's output"; }

# go_top FILE [FLAGS]: go tool pprof -top's "flat name..." lines, exact bytes.
go_top() {
  f=$1; shift
  go tool pprof -top -unit=byte -nodefraction=0 -nodecount=1000 "$@" "$T/p.pb.gz" 2>"$T/go.err" |
    awk 'started { v=$1; sub(/B$/, "", v); n=$6; for (i=7;i<=NF;i++) n=n" "$i; print v, n }
         /^ *flat  flat%/ { started=1 }' > "$f"
}
want() { # FILE LINE WHAT
  grep -qx -- "$2" "$1" || { cat "$1" "$T/go.err"; fail "$3: no line '$2'"; }
}

# As written: names, no lines.
go_top "$T/none" -symbolize=none
want "$T/none" "4194304 static_alloc" "-symbolize=none: the static function from .symtab"
want "$T/none" "13 strdup" "-symbolize=none: the C library's strdup from .dynsym"

# Without the binary (moved away): still named.
mv "$T/names" "$T/names.away"
go_top "$T/gone"
want "$T/gone" "4194304 static_alloc" "binary gone: static_alloc"
"$CPROF" -top -unit=byte -nodefraction=0 "$T/p.pb.gz" 2>/dev/null | grep -q ' 4194304B .* static_alloc$' ||
  fail "cprof, binary gone: static_alloc"
mv "$T/names.away" "$T/names"

# With the binary: file:line from DWARF, as before.
go_top "$T/lines" -lines
want "$T/lines" "4194304 static_alloc $SRC:$LINE" "binary present: go tool pprof's file:line"
"$CPROF" -top -lines -unit=byte -nodefraction=0 "$T/p.pb.gz" > "$T/cprof.lines" 2>/dev/null
grep -q " 4194304B .* static_alloc .*runtime_names.c:$LINE\$" "$T/cprof.lines" ||
  { cat "$T/cprof.lines"; fail "binary present: cprof's file:line"; }
