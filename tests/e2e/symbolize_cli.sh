#!/bin/sh
# cprof symbolizes the address-only heap profiles libcprof.so writes, from
# the programs' ELF/DWARF: function names, source lines and inline frames
# (checked against go tool pprof where it answers at all), C++ names in each
# demangling mode, -symbolize=none/fastlocal, a binary moved away (warning,
# the runtime's symbol-table names), given as BINARY, found on PPROF_BINARY_PATH by build id, a
# wrong BINARY refused by build id, and a stripped binary read through its
# .gnu_debuglink debug file.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || skip "no $CPROF (run make)"
[ -f "$LIB" ] || skip "no $LIB (run make)"
export HOME="$T/home"; mkdir -p "$HOME"     # no ~/pprof/binaries of the user's
unset PPROF_BINARY_PATH DEBUGINFOD_URLS CPROF_DEBUG_FILE_DIRECTORY

CSRC=$PROGS/symbolize_alloc.c
XSRC=$PROGS/symbolize_heap.cc
line_of() { grep -n -F -- "$2" "$1" | head -n1 | cut -d: -f1; }
profile() { # BINARY OUT: runs BINARY under the runtime, every allocation sampled
  CPROF_RATE=1 CPROF_HEAP_PROFILE="$2" LD_PRELOAD="$LIB" "$1" || fail "running $1"
  [ -s "$2" ] || fail "$1 wrote no profile"
}
top() { "$CPROF" -top -nodefraction=0 "$@" 2>"$T/err"; }
has() { # FILE REGEX WHAT
  grep -q -- "$2" "$1" || { cat "$1" "$T/err"; fail "$3"; }
}
hasnt() {
  if grep -q -- "$2" "$1"; then cat "$1"; fail "$3"; fi
}

gcc -g -O2 -fno-omit-frame-pointer -o "$T/alloc" "$CSRC" || fail "build $CSRC"
profile "$T/alloc" "$T/c.pb.gz"
BID=$(readelf -n "$T/alloc" | sed -n 's/.*Build ID: *//p')

# --- names, lines, inline frames -------------------------------------------
top -lines "$T/c.pb.gz" > "$T/lines" || fail "cprof -top -lines: $(cat "$T/err")"
[ -s "$T/err" ] && { cat "$T/err"; fail "warnings for a profile whose binaries are all there"; }
has "$T/lines" " helper_alloc .*symbolize_alloc.c:$(line_of "$CSRC" @helper-alloc) (inline)\$" \
  "inlined helper_alloc with its malloc line"
has "$T/lines" " via_helper .*symbolize_alloc.c:$(line_of "$CSRC" @via-helper-call)\$" \
  "via_helper at the line calling the inlined helper"
has "$T/lines" " static_alloc .*symbolize_alloc.c:$(line_of "$CSRC" @static-alloc)\$" "static_alloc"
has "$T/lines" " plain_alloc .*symbolize_alloc.c:$(line_of "$CSRC" @plain-alloc)\$" "plain_alloc"
hasnt "$T/lines" "\[alloc\]" "unsymbolized frames of the program"

"$CPROF" -traces "$T/c.pb.gz" 2>/dev/null | tr -s ' ' | grep -A2 "^ *8MB helper_alloc" > "$T/trace"
[ "$(sed 's/^ *//' "$T/trace" | tr '\n' ' ')" = "8MB helper_alloc (inline) via_helper main " ] ||
  { cat "$T/trace"; fail "-traces: helper_alloc, via_helper, main"; }

# go tool pprof (DWARF only, no inline frames) agrees wherever it names a
# location of the program: its function is our outermost frame, its
# file:line our innermost line. (Go 1.19 names neither main nor static
# functions of this -O2 binary: DWARF 5 range lists it does not follow;
# those keep the runtime's symbol-table name, without a line: ":0".)
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
  raw_locs() { sed -n '/^Locations/,/^Mappings/p' | awk '
    /^ +[0-9]+: 0x/ { id=$1; if ($3 != "M=1" || NF != 6 || $5 == ":0") { id=""; next } inner[id]=$5; outer[id]=$4; next }
    /^ +[^ ]+ [^ ]+:[0-9]+ s=/ && id != "" { outer[id]=$1 }
    END { for (i in inner) if (outer[i] != "" && inner[i] != "") print i, outer[i], inner[i] }' | sort; }
  "$CPROF" -raw "$T/c.pb.gz" 2>/dev/null | raw_locs > "$T/ours"
  GOCACHE=$T/gocache go tool pprof -raw "$T/c.pb.gz" 2>/dev/null | raw_locs > "$T/go"
  [ -s "$T/go" ] || fail "go tool pprof named no location"
  join "$T/go" "$T/ours" | awk '$2 != $4 || $3 != $5 { print; bad=1 } END { exit bad }' ||
    fail "cprof and go tool pprof differ (id go-fn go-line cprof-fn cprof-line above)"
  note "$(wc -l < "$T/go") locations agree with go tool pprof"
fi

# --- modes -------------------------------------------------------------------
# The runtime names functions from the symbol tables (no lines, no inline
# frames); the tools add DWARF's when they have the binary.
top -symbolize=none "$T/c.pb.gz" > "$T/none"
has "$T/none" " via_helper\$" "-symbolize=none: the runtime's names"
hasnt "$T/none" "helper_alloc" "-symbolize=none read DWARF"
top -symbolize=fastlocal "$T/c.pb.gz" > "$T/fast"
has "$T/fast" " via_helper\$" "fastlocal: symbol names"
has "$T/fast" " static_alloc\$" "fastlocal: GCC clone suffixes dropped from C names"
hasnt "$T/fast" "(inline)\|@" "fastlocal: no inline frames, no symbol versions"

# --- C++ names -----------------------------------------------------------------
g++ -g -O2 -fno-omit-frame-pointer -o "$T/cxx" "$XSRC" || fail "build $XSRC"
profile "$T/cxx" "$T/x.pb.gz"
top "$T/x.pb.gz" > "$T/x1"
has "$T/x1" " shapes::Grid::grow\$" "demangled, simplified C++ name"
has "$T/x1" " shapes::raw_alloc (inline)\$" "inlined C++ function"
top -symbolize=demangle=full "$T/x.pb.gz" > "$T/x2"
has "$T/x2" " shapes::Grid::grow(unsigned long)\$" "demangle=full keeps the parameters"
top -symbolize=demangle=none "$T/x.pb.gz" > "$T/x3"
has "$T/x3" " _ZN6shapes4Grid4growEm\$" "demangle=none keeps the linker name"

# --- finding the binary --------------------------------------------------------
mv "$T/alloc" "$T/alloc.moved"
top "$T/c.pb.gz" > "$T/gone"
has "$T/err" "^Local symbolization failed for alloc (build ID $BID): open $T/alloc: no such file or directory\$" \
  "warning for the missing binary"
has "$T/gone" " via_helper\$" "missing binary: the runtime's names"
hasnt "$T/gone" "helper_alloc" "missing binary: inline frames from nowhere"
top "$T/alloc.moved" "$T/c.pb.gz" > "$T/given"
has "$T/given" "^File: alloc.moved\$" "BINARY names the file"
has "$T/given" " helper_alloc (inline)\$" "symbolized from BINARY"
top "$T/cxx" "$T/c.pb.gz" > "$T/wrong"
has "$T/err" "Local symbolization failed for cxx (build ID $BID): build ID mismatch" "wrong BINARY refused"
hasnt "$T/wrong" "helper_alloc" "symbolized from the wrong binary"
mkdir -p "$T/bins/$BID" && cp "$T/alloc.moved" "$T/bins/$BID/alloc"
PPROF_BINARY_PATH="$T/nothing:$T/bins" top "$T/c.pb.gz" > "$T/path"
has "$T/path" " helper_alloc (inline)\$" "found on PPROF_BINARY_PATH by build id"
[ -s "$T/err" ] && { cat "$T/err"; fail "warnings although PPROF_BINARY_PATH has the binary"; }

# --- stripped binary, debug file by .gnu_debuglink -------------------------------
gcc -g -O2 -fno-omit-frame-pointer -o "$T/stripped" "$CSRC" || fail "build"
(cd "$T" && objcopy --only-keep-debug stripped stripped.debug && strip --strip-all stripped &&
  objcopy --add-gnu-debuglink=stripped.debug stripped) || fail "split debug"
profile "$T/stripped" "$T/s.pb.gz"
top -lines "$T/s.pb.gz" > "$T/strip"
has "$T/strip" " helper_alloc .*symbolize_alloc.c:$(line_of "$CSRC" @helper-alloc) (inline)\$" \
  "stripped binary symbolized from its debug file"
exit 0
