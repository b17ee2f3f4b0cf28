#!/bin/sh
# timeout: 300
# Flame graphs and folded stacks.
#  -folded: for every sample column of Go heap and CPU profiles, random
#   profgen profiles (negative values included) and a -base diff, each
#   distinct stack (function names root first, inline frames expanded, as
#   go tool pprof -raw lists the samples) carries the sum of its samples,
#   and the lines add up to the column's total.
#  -flame FILE: a self-contained page (no external URL), naming the
#   profile's functions, with a consistent frame tree; under 2 MB for the
#   large generated profile (build/profgen -large: 200,000 samples, 50,000
#   locations); `flame` in the shell opens it in $BROWSER, `flame >f` saves
#   it. With chromium: the page runs, draws frames, and a search from the
#   URL fragment reports the share go tool pprof gives the function.
. "$(dirname "$0")/tool_common.inc"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not installed"; exit 77; }
CHECK="python3 $CPROF_TOP/tests/viz_check.py"
GEN=$CPROF_BUILD/profgen
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { # NAME CHECK-ARGS...
  okname=$1; shift
  checks=$((checks + 1))
  $CHECK "$@" >"$T/chk" 2>&1 || { fail "$okname: $(cat "$T/chk")"; return; }
  echo "# $okname: $(cat "$T/chk")"
}
# folded NAME NCOLUMNS PROFILE [FLAGS...]: every column against -raw
folded() {
  name=$1; ncol=$2; prof=$3; shift 3
  go tool pprof -raw "$@" "$prof" >"$T/raw" 2>/dev/null || { fail "$name: go tool pprof -raw"; return; }
  i=0
  while [ $i -lt "$ncol" ]; do
    "$CPROF" -folded -sample_index=$i "$@" "$prof" >"$T/folded" 2>"$T/err" ||
      fail "$name: -folded -sample_index=$i: $(cat "$T/err")"
    ok "$name -folded column $i" folded "$T/raw" $i "$T/folded"
    i=$((i + 1))
  done
}

build_go heapgo
(cd "$T" && ./heapgo h1.pb.gz 1 && ./heapgo h2.pb.gz 524288) || { echo "FAIL: heapgo"; exit 1; }
build_go cpugo
(cd "$T" && ./cpugo c.pb.gz 300) || { echo "FAIL: cpugo"; exit 1; }
folded "go heap" 4 "$T/h1.pb.gz"
folded "go heap sampled" 4 "$T/h2.pb.gz"
folded "go cpu" 2 "$T/c.pb.gz"
folded "diff" 4 "$T/h1.pb.gz" -base "$T/h2.pb.gz"
if [ -x "$GEN" ]; then
  "$GEN" -seed 3 -samples 500 -locations 200 -functions 80 -depth 1-14 -labels 2 -inline 30 \
    -o "$T/g3.pb.gz" && folded "profgen" 4 "$T/g3.pb.gz"
  "$GEN" -seed 4 -types 3 -samples 500 -locations 200 -functions 80 -depth 1-14 -inline 30 \
    -o "$T/g4.pb.gz" && folded "profgen negative" 3 "$T/g4.pb.gz"
fi
# frames root first, separated by ';'. allocLarge keeps 16 MiB, and its
# appends' old backing arrays (a few hundred bytes) when Go's last GC
# cycle had not yet swept them.
checks=$((checks + 1))
"$CPROF" -folded "$T/h1.pb.gz" 2>/dev/null | grep -Eqx 'runtime.main;main.main;main.allocLarge 16777[0-9]{3}' ||
  fail "-folded: no 'runtime.main;main.main;main.allocLarge 16777216(+ a few hundred)' line"

# --- pages ---------------------------------------------------------------------------------
"$CPROF" -flame "$T/h1.html" "$T/h1.pb.gz" 2>"$T/err" || fail "-flame: $(cat "$T/err")"
ok "heap page" html "$T/h1.html" 2000000 main.allocLarge main.allocMedium main.inlinedHelper runtime.main
"$CPROF" -flame "$T/c.html" "$T/c.pb.gz" 2>/dev/null || fail "-flame cpu"
ok "cpu page" html "$T/c.html" 2000000 main.hotLoopA main.hotLoopB
"$CPROF" -flame "$T/d.html" -base "$T/h2.pb.gz" "$T/h1.pb.gz" 2>/dev/null || fail "-flame -base"
ok "diff page" html "$T/d.html" 2000000 main.allocLarge
checks=$((checks + 1))
grep -q '"diff":true' "$T/d.html" || fail "-flame -base: not a diff page"
checks=$((checks + 1))
"$CPROF" -flame - "$T/h1.pb.gz" 2>/dev/null | grep -q 'cprofFlame(' || fail "-flame -: page on stdout"
if [ -x "$GEN" ]; then
  "$GEN" -seed 1 -large -o "$T/large.pb.gz" || { echo "FAIL: profgen -large"; exit 1; }
  "$CPROF" -flame "$T/large.html" "$T/large.pb.gz" 2>"$T/err" || fail "large -flame: $(tail -1 "$T/err")"
  ok "large page (< 2 MB)" html "$T/large.html" 2000000 root
fi

# the shell: flame opens $BROWSER, flame >file saves
cat >"$T/browser" <<EOF
#!/bin/sh
echo "\$@" >>"$T/opened"
EOF
chmod +x "$T/browser"
printf 'flame main\nquit\n' | BROWSER="$T/browser" TMPDIR="$T" "$CPROF" "$T/h1.pb.gz" >/dev/null 2>"$T/err"
i=0 # the shell does not wait for the browser
while [ ! -s "$T/opened" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
f=$(cat "$T/opened" 2>/dev/null)
case "$f" in "$T"/cprof-*.html) ok "shell flame in \$BROWSER" html "$f" 2000000 main.allocLarge ;;
  *) checks=$((checks + 1)); fail "shell flame: \$BROWSER got '$f': $(cat "$T/err")" ;; esac
printf 'flame -Medium >%s\nquit\n' "$T/s.html" | "$CPROF" "$T/h1.pb.gz" >/dev/null 2>&1
ok "shell flame >file" html "$T/s.html" 2000000 main.allocLarge
checks=$((checks + 1))
grep -q '"main.allocMedium"' "$T/s.html" && fail "shell flame -Medium: allocMedium not ignored"

# --- in a browser ----------------------------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$CHROME" ]; then
  dom() { timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
    --dump-dom "$1" 2>/dev/null; }
  # the share of main.allocLarge that go tool pprof prints (cum%)
  want=$(go tool pprof -top -nodefraction=0 "$T/h1.pb.gz" 2>/dev/null | awk '$6 == "main.allocLarge" { print $5 }')
  dom "file://$T/h1.html#s=allocLarge" >"$T/dom"
  got=$(sed -n 's/.*class="cf-match">Matched \([0-9.]*%\).*/\1/p' "$T/dom")
  checks=$((checks + 1))
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "chromium: search allocLarge matched '$got', pprof says '$want'"
  checks=$((checks + 1))
  n=$(grep -o 'class="cf-f[^"]*" data-i=' "$T/dom" | wc -l)
  [ "$n" -ge 6 ] || fail "chromium: $n frames drawn"
  # zoomed (fragment f=path): the other branches are gone, ancestors stay
  dom "file://$T/h1.html#f=runtime.main%3Bmain.main%3Bmain.allocNested" >"$T/dom"
  checks=$((checks + 1))
  grep -q 'data-name="main.nestedHelper"' "$T/dom" && grep -q 'data-name="runtime.main"' "$T/dom" &&
    ! grep -q 'data-name="main.allocLarge"' "$T/dom" || fail "chromium: zoom from the fragment"
  dom "file://$T/large.html" >"$T/dom"
  checks=$((checks + 1))
  n=$(grep -o 'class="cf-f[^"]*" data-i=' "$T/dom" | wc -l)
  [ "$n" -ge 100 ] || fail "chromium: large page drew $n frames"
else
  echo "# no chromium: browser checks skipped"
fi
finish
