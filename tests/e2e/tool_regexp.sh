#!/bin/sh
# timeout: 300
# Go (RE2) regular expressions in -focus/-ignore/-show/-hide and peek's
# argument: the same reports as go tool pprof for the spellings pprof users
# type ((?i), \b, \d, (?:...), lazy quantifiers, alternation, anchors, POSIX
# and Unicode classes, \Q...\E), and pprof's words for a bad pattern.
. "$(dirname "$0")/tool_common.inc"
GEN=$CPROF_BUILD/profgen
[ -x "$GEN" ] || { echo "skip: no $GEN (make tests builds it)"; exit 77; }
"$GEN" -seed 5 -samples 400 -locations 150 -functions 70 -depth 1-12 -o "$T/g.pb.gz" ||
  { echo "FAIL: profgen"; exit 1; }
# Function names look like "net.component087.fn_8".
for re in '(?i)NET\.' '\bfn_\d\b' 'component0\d+' '(?:io|db)\.comp' 'fn_.*?2$' '^json|^rpc' \
          'fn_[[:digit:]]{2}$' '\.fn_(?:1|2)\d?$' '(?i:Cache)\.component[0-4]' '\Qjson.\E' \
          '^(?:net|io)\.component\d{3}\.fn_\d+$' 'fn_\D' '[^a-z.0-9_]' '\p{Lu}' '(?s).+?_4' \
          'co(?:mp)+?onent1' 'fn_(4|5){1,}$' '\x{6a}son' '\Bomponent' '[\d]{3}\.fn_1\z' 'a{,2}|^x{'; do
  for opt in focus ignore show hide; do
    cmp_tools "$T/g.pb.gz" -top -nodecount=12 "-$opt=$re"
  done
done
cmp_tools "$T/g.pb.gz" -peek '(?i)FN_1\d$'
# Bad patterns: the first line of stderr is pprof's message.
for re in '(abc' 'abc)' '[a-' 'a**' 'x+*' '*a' '\Z' '(?=x)' 'x{1001}' '[z-a]' '(?P<>x)' 'ab\' \
          '[[:foo:]]' '(?<x>a)' 'a++' '\8' '(?x)a' '\pX{' '(|*)' 'x{2}{3}' '[\q]'; do
  checks=$((checks + 1))
  "$CPROF" -top "-focus=$re" "$T/g.pb.gz" >/dev/null 2>"$T/c.err"; crc=$?
  go tool pprof -top "-focus=$re" "$T/g.pb.gz" >/dev/null 2>"$T/g.err"; grc=$?
  c=$(grep -v '^For tag' "$T/c.err" | head -1); g=$(grep -v '^For tag' "$T/g.err" | head -1)
  if [ "$c" != "$g" ] || [ "$crc" = 0 ] || [ "$grc" = 0 ]; then
    echo "FAIL: -focus='$re': cprof (exit $crc) '$c', pprof (exit $grc) '$g'"
    fails=$((fails + 1))
  fi
done
finish
