#!/bin/sh
# timeout: 120
# cprof's command line: --version, help, -h, bad flags and unreadable
# sources (one message, nonzero exit, as go tool pprof), flags in both
# spellings, the BINARY argument, -output, and -proto round trips.
. "$(dirname "$0")/tool_common.inc"
build_go heapgo
(cd "$T" && ./heapgo h.pb.gz 1) || { echo "FAIL: heapgo"; exit 1; }
p=$T/h.pb.gz
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_rc() { # RC CMD...: runs CMD, checks its exit status
  want=$1; shift
  checks=$((checks + 1))
  "$@" >"$T/o" 2>"$T/e"; rc=$?
  [ "$rc" = "$want" ] || fail "$* exited $rc, want $want ($(head -c 300 "$T/e"))"
}

expect_rc 0 "$CPROF" --version
grep -q '^cprof [0-9]' "$T/o" || fail "--version prints 'cprof VERSION'"
expect_rc 0 "$CPROF" help
grep -q 'Output formats' "$T/o" || fail "help prints the usage"
expect_rc 0 "$CPROF" -h
expect_rc 2 "$CPROF" -top -nosuchflag "$p"
grep -q 'flag provided but not defined: -nosuchflag' "$T/e" || fail "bad flag message: $(cat "$T/e")"
[ "$(wc -l < "$T/e")" -eq 1 ] && grep -q "(cprof -h for usage)$" "$T/e" || fail "a usage error is one line: $(cat "$T/e")"
expect_rc 2 "$CPROF" -top -nodecount=x "$p"
grep -q 'invalid value "x" for flag -nodecount' "$T/e" || fail "bad value message"
expect_rc 2 "$CPROF" -top -nodecount
expect_rc 2 "$CPROF" -top
grep -q 'no profile source specified' "$T/e" || fail "no source message"
[ "$(wc -l < "$T/e")" -eq 1 ] || fail "a usage error is one line: $(cat "$T/e")"
expect_rc 2 "$CPROF" -top -traces "$p"
grep -q 'at most one output format' "$T/e" || fail "two formats message"
expect_rc 2 "$CPROF" -top -cum -flat "$p"
grep -q 'conflicting options set' "$T/e" || fail "conflicting options message"
expect_rc 2 "$CPROF" -top -base "$p" -diff_base "$p" "$p"
expect_rc 1 "$CPROF" -top "$T/missing.pb.gz"
grep -q "missing.pb.gz" "$T/e" && grep -q 'failed to fetch any source profiles' "$T/e" ||
  fail "missing file message: $(cat "$T/e")"
printf 'garbage' >"$T/bad"
expect_rc 1 "$CPROF" -top "$T/bad"
expect_rc 1 "$CPROF" -top -sample_index=nope "$p"
grep -q 'sample_index "nope" must be one of: \[alloc_objects alloc_space inuse_objects inuse_space\]' "$T/e" ||
  fail "sample_index message: $(cat "$T/e")"
expect_rc 1 "$CPROF" -list 'nosuchfunction' "$p"
grep -q 'no matches found for regexp: nosuchfunction' "$T/e" || fail "list no match message"
expect_rc 1 "$CPROF" -top -focus='(' "$p"
grep -q 'parsing focus regexp' "$T/e" || fail "bad regexp message"
expect_rc 0 "$CPROF" -top -focus=nomatch "$p"
grep -q 'Focus expression matched no samples' "$T/e" || fail "no-match warning"

# --flag, -flag value, -flag=value give the same report.
"$CPROF" -top -nodecount=3 "$p" >"$T/a"
"$CPROF" --top --nodecount 3 "$p" >"$T/b"
checks=$((checks + 1)); cmp -s "$T/a" "$T/b" || fail "--flag value spelling"

# The first argument is the binary when it is an ELF file.
checks=$((checks + 1))
"$CPROF" -top "$T/heapgo" "$p" >"$T/a" 2>"$T/e" || fail "BINARY PROFILE: $(cat "$T/e")"
head -1 "$T/a" | grep -q '^File: heapgo$' || fail "BINARY sets File: ($(head -1 "$T/a"))"

# -output writes the report to a file and says so on stderr.
expect_rc 0 "$CPROF" -top -output "$T/out.txt" "$p"
grep -q "Generating report in $T/out.txt" "$T/e" || fail "-output message"
"$CPROF" -top "$p" >"$T/a"
checks=$((checks + 1)); cmp -s "$T/a" "$T/out.txt" || fail "-output content"

# -proto: go tool pprof reads what we write, and reports it as we do.
expect_rc 0 "$CPROF" -proto -output "$T/re.pb.gz" "$p"
cmp_tools "$T/re.pb.gz" -top
cmp_tools "$T/re.pb.gz" -traces
"$CPROF" -proto -focus=Medium "$p" >"$T/f.pb.gz"
cmp_tools "$T/f.pb.gz" -top
finish
