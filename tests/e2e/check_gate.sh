#!/bin/sh
# cprof check as a CI gate: tests/progs/check_gate.c built twice, the second
# build (-DGROW) adding an allocation in a loop of parse_request. At
# CPROF_RATE=1 the profiles are exact, so the numbers are too: the base
# build passes its limits, the grown build fails them with the stack that
# grew named, two runs of one build are identical (tolerance 0), the JUnit
# file validates against tests/junit.xsd, and bad usage exits 2 with one line.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
CPROF=$BUILD/cprof
[ -x "$CPROF" ] || fail "no $CPROF (run make)"
command -v xmllint >/dev/null 2>&1 || skip "skip: xmllint (libxml2-utils) not installed"

cc_prog "$T/base" "$PROGS/check_gate.c"
cc_prog "$T/grow" "$PROGS/check_gate.c" -DGROW

run() { # NAME PROGRAM EXPECTED_OBJECTS
  env CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$1.pb.gz" LD_PRELOAD="$LIB" "$2" > "$T/$1.out" ||
    fail "$1: the program failed"
  grep -qx "parsed 1000 requests, 10890 bytes, $3 objects" "$T/$1.out" ||
    fail "$1: unexpected output: $(cat "$T/$1.out")"
  [ -s "$T/$1.pb.gz" ] || fail "$1: no profile written"
}
run base "$T/base" 1000
run base2 "$T/base" 1000
run grow "$T/grow" 4000

# check ARGS...: runs cprof check, its status in rc, its output in $T/c.out.
check() {
  rc=0
  "$CPROF" check "$@" > "$T/c.out" 2> "$T/c.err" || rc=$?
}
LIMITS="-max alloc_objects:focus=parse_request=1000 -max inuse_space=1MB"

# The base build holds its limits, alone and against itself.
check $LIMITS "$T/base.pb.gz"
[ $rc -eq 0 ] || fail "base: status $rc: $(cat "$T/c.out" "$T/c.err")"
grep -q '^ok   max alloc_objects:focus=parse_request=1000: 1000$' "$T/c.out" ||
  fail "base: parse_request's objects not exactly 1000: $(cat "$T/c.out")"
# Rate 1 is deterministic: a second run is the same to the object and byte.
check -base "$T/base.pb.gz" -tolerance 0 $LIMITS -max alloc_space=1MB "$T/base2.pb.gz"
[ $rc -eq 0 ] || fail "base2 against base: status $rc: $(cat "$T/c.out" "$T/c.err")"
[ "$(grep -c '^ok   growth .*(+0.0%, tolerance 0%)$' "$T/c.out")" -eq 3 ] ||
  fail "two rate-1 runs differ: $(cat "$T/c.out")"
note "base build passes; two runs identical"

# The grown build fails, naming the limit and the stack that grew by
# exactly 3 allocations per request.
check -base "$T/base.pb.gz" $LIMITS -junit "$T/j.xml" "$T/grow.pb.gz"
[ $rc -eq 1 ] || fail "grow: status $rc, not 1: $(cat "$T/c.out" "$T/c.err")"
grep -q '^FAIL max alloc_objects:focus=parse_request=1000: 4000 > 1000$' "$T/c.out" ||
  fail "grow: no failed limit line: $(cat "$T/c.out")"
grep -q '^FAIL growth alloc_objects:focus=parse_request: 4000, base 1000 (+300.0%, tolerance 5%)$' "$T/c.out" ||
  fail "grow: no failed growth line: $(cat "$T/c.out")"
grep -q '^    +3000  parse_request < handle < main' "$T/c.out" ||
  fail "grow: the stack that grew is not named: $(cat "$T/c.out")"
grep -q '^ok   max inuse_space=1MB' "$T/c.out" || fail "grow: inuse_space limit: $(cat "$T/c.out")"
grep -q '^cprof check: 2 of 4 checks failed$' "$T/c.out" || fail "grow: summary: $(cat "$T/c.out")"
note "grown build fails, naming parse_request < handle < main"

# The JUnit file: valid against the schema, the same verdicts.
xmllint --noout --schema "$TOP/tests/junit.xsd" "$T/j.xml" 2> "$T/x.err" ||
  fail "JUnit file invalid: $(cat "$T/x.err")"
[ "$(xmllint --xpath 'string(/testsuites/testsuite/@tests)' "$T/j.xml")" = 4 ] &&
  [ "$(xmllint --xpath 'count(//testcase/failure)' "$T/j.xml")" = 2 ] &&
  xmllint --xpath 'string(//testcase[@name="max alloc_objects:focus=parse_request=1000"]/failure)' "$T/j.xml" |
    grep -q 'parse_request < handle < main' ||
  fail "JUnit file does not hold the verdicts: $(cat "$T/j.xml")"
note "JUnit file validates"

# Bad usage: status 2 and one line on stderr.
for args in "" "-max inuse_space $T/base.pb.gz" "-max inuse_space=lots $T/base.pb.gz" \
    "-max nosuchtype=1 $T/base.pb.gz" "-tolerance x -base $T/base.pb.gz $T/grow.pb.gz" \
    "-max alloc_objects:nosuchsetting=1=5 $T/base.pb.gz" "-frob $T/base.pb.gz" \
    "-max inuse_space=1MB $T/base.pb.gz $T/grow.pb.gz"; do
  check $args
  [ $rc -eq 2 ] || fail "cprof check $args: status $rc, not 2: $(cat "$T/c.err")"
  [ "$(wc -l < "$T/c.err")" -eq 1 ] || fail "cprof check $args: not one line: $(cat "$T/c.err")"
done
# A profile that cannot be read is a failure, not a pass.
check -max inuse_space=1MB "$T/nosuchfile.pb.gz"
[ $rc -eq 1 ] || fail "unreadable profile: status $rc, not 1"
note "usage errors exit 2 with one line"
exit 0
