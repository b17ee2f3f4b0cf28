#!/bin/sh
# cprof record: runs tests/progs/record_prog.c under libcprof.so and checks
# the profile's exact numbers at -rate 1, the report on stderr (top 10,
# inuse_space) with the program's stdout untouched, where the profile goes
# (-o, else $PPROF_TMPDIR / $HOME/pprof as pprof.PROG.TYPES.NNN.pb.gz), exit
# statuses passed on (codes, 128+signal; 125/126/127 for cprof's own
# failures), children's profiles kept apart, and an installed layout
# (PREFIX/bin/cprof finding PREFIX/lib/libcprof.so).
# timeout: 60
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || fail "no $CPROF (run make)"
[ -f "$LIB" ] || fail "no $LIB (run make)"
export HOME="$T/home"; mkdir -p "$HOME"
unset PPROF_TMPDIR CPROF_RATE CPROF_HEAP_PROFILE LD_PRELOAD
cc_prog "$T/prog" "$PROGS/record_prog.c"

# flat NAME INDEX PROFILE: the exact flat value of NAME for sample INDEX.
flat() {
  "$CPROF" -top -unit=byte -nodefraction=0 -nodecount=1000 -sample_index="$2" "$3" 2>/dev/null |
    awk -v n="$1" '$6 == n { v = $1; sub(/(B|byte)$/, "", v); print v; found = 1 } END { if (!found) print 0 }'
}
expect_flat() { # NAME INDEX PROFILE WANT
  got=$(flat "$1" "$2" "$3")
  [ "$got" = "$4" ] || fail "$3: $1 $2 = $got, want $4"
}

# --- a run with -o, exact at -rate 1 ------------------------------------------
"$CPROF" record -o "$T/r.pb.gz" -rate 1 -- "$T/prog" > "$T/out" 2> "$T/err"
rc=$?
[ $rc = 0 ] || { cat "$T/err"; fail "record exited $rc"; }
[ "$(cat "$T/out")" = "hello from record_prog" ] || fail "stdout is not the program's alone: $(cat "$T/out")"
grep -qx "Saved profile in $T/r.pb.gz" "$T/err" || { cat "$T/err"; fail "no 'Saved profile in' line"; }
[ -s "$T/r.pb.gz" ] || fail "no profile at -o"
for x in "keep_a inuse_space 10000" "keep_a inuse_objects 10" "keep_b inuse_space 20480" \
         "keep_b inuse_objects 5" "churn alloc_objects 100" "churn alloc_space 6400" \
         "churn inuse_space 0"; do
  set -- $x
  expect_flat "$1" "$2" "$T/r.pb.gz" "$3"
done
# The report: inuse_space, top 10, symbolized, keep_b above keep_a.
grep -qx 'Type: inuse_space' "$T/err" || { cat "$T/err"; fail "report is not inuse_space"; }
rows=$(awk '/^ *flat  flat%/ { on = 1; next } on' "$T/err" | wc -l)
[ "$rows" -ge 2 ] && [ "$rows" -le 10 ] || { cat "$T/err"; fail "$rows report rows, want 2..10"; }
awk '/ keep_b$/ { b = NR } / keep_a$/ { a = NR } END { exit !(b && a && b < a) }' "$T/err" ||
  { cat "$T/err"; fail "report: keep_b (20kB) then keep_a (9.77kB)"; }
note "-o, exact numbers, report"

# --- exit statuses ----------------------------------------------------------------
"$CPROF" record -o "$T/s7.pb.gz" -rate 1 -- "$T/prog" 7 > /dev/null 2> "$T/err7"
rc=$?
[ $rc = 7 ] || fail "exit 7 came back as $rc"
[ -s "$T/s7.pb.gz" ] || fail "exit 7: no profile"
"$CPROF" record -o "$T/sig.pb.gz" -rate 1 "$T/prog" signal 15 > /dev/null 2> "$T/errsig"
rc=$?
[ $rc = 143 ] || fail "SIGTERM came back as $rc, want 143"
grep -q "killed by signal 15" "$T/errsig" || { cat "$T/errsig"; fail "no signal message"; }
[ -e "$T/sig.pb.gz" ] && fail "a killed program left an (empty) -o file"
"$CPROF" record -rate 1 "$T/prog" signal 6 > /dev/null 2> "$T/errabrt"
rc=$?
[ $rc = 134 ] || fail "SIGABRT came back as $rc, want 134"
"$CPROF" record -rate 1 "$T/prog" _exit > /dev/null 2> "$T/errx"
rc=$?
[ $rc = 0 ] || fail "_exit(0) came back as $rc"
grep -q "wrote no profile" "$T/errx" || { cat "$T/errx"; fail "_exit: no 'wrote no profile' message"; }
note "exit statuses"

# --- default location: $PPROF_TMPDIR, else $HOME/pprof ------------------------------
name=pprof.prog.alloc_objects.alloc_space.inuse_objects.inuse_space
PPROF_TMPDIR="$T/tmpdir" "$CPROF" record -rate 1 "$T/prog" > /dev/null 2>&1 || fail "record to PPROF_TMPDIR"
PPROF_TMPDIR="$T/tmpdir" "$CPROF" record -rate 1 "$T/prog" > /dev/null 2>&1 || fail "record to PPROF_TMPDIR"
[ -s "$T/tmpdir/$name.001.pb.gz" ] && [ -s "$T/tmpdir/$name.002.pb.gz" ] ||
  { ls -l "$T/tmpdir"; fail "not $name.001/.002.pb.gz in PPROF_TMPDIR"; }
"$CPROF" record -rate 1 "$T/prog" > /dev/null 2> "$T/errh" || fail "record to HOME"
grep -qx "Saved profile in $HOME/pprof/$name.001.pb.gz" "$T/errh" || { cat "$T/errh"; fail "not in \$HOME/pprof"; }
expect_flat keep_b inuse_space "$HOME/pprof/$name.001.pb.gz" 20480
# CPROF_RATE from the environment when -rate is not given
CPROF_RATE=1 "$CPROF" record -o "$T/env.pb.gz" "$T/prog" > /dev/null 2>&1 || fail "record with CPROF_RATE=1"
expect_flat keep_a inuse_space "$T/env.pb.gz" 10000
note "default locations"

# --- children: their profiles are kept apart -------------------------------------
"$CPROF" record -o "$T/f.pb.gz" -rate 1 "$T/prog" fork > /dev/null 2> "$T/errf" || fail "fork run"
grep -q "1 more profile, of processes started by the program, in " "$T/errf" ||
  { cat "$T/errf"; fail "no message about the child's profile"; }
expect_flat child_alloc inuse_space "$T/f.pb.gz" 0
dir=$(sed -n 's/.*of processes started by the program, in //p' "$T/errf")
expect_flat child_alloc inuse_space "$(ls "$dir"/heap.*.pb.gz | head -n1)" 2331
rm -rf "$dir"
note "child profiles apart"

# --- cprof's own failures --------------------------------------------------------------
"$CPROF" record -rate 1 -- "$T/nosuchprog" > /dev/null 2> "$T/e1"; rc=$?
[ $rc = 127 ] || fail "missing program: exit $rc, want 127"
[ "$(wc -l < "$T/e1")" = 1 ] && grep -q "nosuchprog: No such file or directory" "$T/e1" ||
  { cat "$T/e1"; fail "missing program: one message"; }
printf 'not a program\n' > "$T/notexec"; chmod 644 "$T/notexec"
"$CPROF" record -- "$T/notexec" > /dev/null 2> "$T/e2"; rc=$?
[ $rc = 126 ] || fail "non-executable: exit $rc, want 126"
"$CPROF" record -rate x -- "$T/prog" > /dev/null 2> "$T/e3"; rc=$?
[ $rc = 125 ] || fail "bad -rate: exit $rc, want 125"
grep -q 'invalid value "x" for flag -rate' "$T/e3" || { cat "$T/e3"; fail "bad -rate message"; }
"$CPROF" record > /dev/null 2> "$T/e4"; rc=$?
[ $rc = 125 ] && grep -q "no program to run" "$T/e4" || fail "no program: exit $rc"
"$CPROF" record -o "$T/no/such/dir/x.pb.gz" "$T/prog" > /dev/null 2> "$T/e5"; rc=$?
[ $rc = 125 ] || fail "unwritable -o: exit $rc, want 125"
"$CPROF" record -h > "$T/help" 2>&1 || fail "record -h"
grep -q "usage: cprof record" "$T/help" || fail "record -h prints the usage"
note "cprof's failures: 125/126/127"

# --- installed layout: PREFIX/bin/cprof + PREFIX/lib/libcprof.so -------------------------
mkdir -p "$T/inst/bin" "$T/inst/lib" "$T/bare"
cp "$CPROF" "$T/inst/bin/cprof" && cp "$LIB" "$T/inst/lib/libcprof.so"
"$T/inst/bin/cprof" record -o "$T/i.pb.gz" -rate 1 "$T/prog" > /dev/null 2> "$T/ei" || { cat "$T/ei"; fail "installed layout"; }
expect_flat keep_a inuse_space "$T/i.pb.gz" 10000
cp "$CPROF" "$T/bare/cprof"
"$T/bare/cprof" record "$T/prog" > /dev/null 2> "$T/eb"; rc=$?
[ $rc = 125 ] && grep -q "cannot find libcprof.so" "$T/eb" || { cat "$T/eb"; fail "no runtime: exit $rc"; }
note "installed layout"
exit 0
