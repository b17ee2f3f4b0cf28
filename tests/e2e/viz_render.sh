#!/bin/sh
# timeout: 300
# Call graphs rendered by Graphviz: -svg parses as XML (a graph with the
# expected function names, our pan/zoom script and viewport group), -png has
# a valid header and size, -pdf/-ps/-gif start as they should, for a small
# Go heap profile and for the large generated one (build/profgen -large);
# `web` (and -web) hand an SVG file to $BROWSER, or name the file when there
# is no browser; the shell's svg writes profileNNN.svg; -output works; a
# missing Graphviz is one clear message. With chromium, the SVG's script
# runs in a headless browser without breaking the page.
. "$(dirname "$0")/tool_common.inc"
command -v dot >/dev/null 2>&1 || { echo "skip: Graphviz dot not installed"; exit 77; }
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

build_go heapgo
(cd "$T" && ./heapgo h.pb.gz 1) || { echo "FAIL: heapgo"; exit 1; }
p=$T/h.pb.gz

"$CPROF" -svg "$p" >"$T/h.svg" 2>"$T/err" || fail "-svg: $(cat "$T/err")"
ok "small -svg" svg "$T/h.svg" main.allocLarge main.allocMedium runtime.main "inuse_space"
grep -q '<g id="viewport" transform="scale(0.5,0.5) translate(0,0)">' "$T/h.svg" || fail "-svg: no viewport group"
grep -q 'getElementById("viewport")' "$T/h.svg" || fail "-svg: no pan/zoom script"
grep -q '<svg width="100%" height="100%"' "$T/h.svg" || fail "-svg: not sized to the window"
"$CPROF" -png "$p" >"$T/h.png" 2>"$T/err" || fail "-png: $(cat "$T/err")"
ok "small -png" png "$T/h.png"
"$CPROF" -pdf -output "$T/h.pdf" "$p" 2>"$T/err" || fail "-pdf -output: $(cat "$T/err")"
ok "small -pdf" pdf "$T/h.pdf"
"$CPROF" -ps "$p" 2>/dev/null | head -c 4 | grep -q '^%!PS' || fail "-ps: not PostScript"
"$CPROF" -gif "$p" 2>/dev/null | head -c 6 | grep -q '^GIF8' || fail "-gif: not a GIF"
checks=$((checks + 3))

# a graph of one node and none
"$CPROF" -svg -focus=allocLarge -hide=main.main -hide=runtime "$p" >"$T/one.svg" 2>/dev/null
ok "one-node -svg" svg "$T/one.svg" main.allocLarge
"$CPROF" -svg -focus=nosuchfunction "$p" >"$T/none.svg" 2>/dev/null
checks=$((checks + 1))
python3 -c "import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])" "$T/none.svg" 2>/dev/null ||
  fail "empty graph: SVG does not parse"

# --- large ---------------------------------------------------------------------------------
if [ -x "$GEN" ]; then
  "$GEN" -seed 1 -large -o "$T/large.pb.gz" || { echo "FAIL: profgen -large"; exit 1; }
  "$CPROF" -svg "$T/large.pb.gz" >"$T/l.svg" 2>"$T/err" || fail "large -svg: $(tail -1 "$T/err")"
  ok "large -svg" svg "$T/l.svg" "Showing top" io.component
  "$CPROF" -png -output "$T/l.png" "$T/large.pb.gz" 2>"$T/err" || fail "large -png: $(tail -1 "$T/err")"
  ok "large -png" png "$T/l.png"
  # trimmed as the legend says (nodelets count against -nodecount=80)
  n=$(grep -c '<title>N[0-9]*</title>' "$T/l.svg")
  want=$(sed -n 's/.*Showing top \([0-9]*\) nodes out of.*/\1/p' "$T/l.svg" | head -n1)
  checks=$((checks + 1))
  [ -n "$want" ] && [ "$n" -eq "$want" ] && [ "$n" -le 80 ] || fail "large -svg: $n nodes, legend: $want"
fi

# --- web, shell, no Graphviz ---------------------------------------------------------------------
cat >"$T/browser" <<EOF
#!/bin/sh
echo "\$@" >>"$T/opened"
EOF
chmod +x "$T/browser"
checks=$((checks + 1))
BROWSER="$T/browser" TMPDIR="$T" "$CPROF" -web "$p" >/dev/null 2>"$T/err" || fail "-web: $(cat "$T/err")"
f=$(cat "$T/opened" 2>/dev/null)
case "$f" in "$T"/cprof-*.svg) ok "-web hands the browser an SVG" svg "$f" main.allocLarge ;;
  *) fail "-web: \$BROWSER got '$f'" ;; esac
checks=$((checks + 1))
printf 'web\nquit\n' | (unset BROWSER DISPLAY WAYLAND_DISPLAY; TMPDIR="$T" "$CPROF" "$p") >/dev/null 2>"$T/err"
f=$(sed -n 's/.*no browser found.*the report is in \(.*\)$/\1/p' "$T/err")
[ -n "$f" ] && [ -s "$f" ] || fail "web without a browser: $(cat "$T/err")"
checks=$((checks + 1))
(cd "$T" && printf 'svg\npng\nquit\n' | "$CPROF" "$p" >/dev/null 2>"$T/err")
grep -q 'Generating report in profile001.svg' "$T/err" && [ -s "$T/profile001.svg" ] &&
  [ -s "$T/profile001.png" ] || fail "shell svg/png: $(cat "$T/err")"
checks=$((checks + 1))
PATH=/nonexistent "$CPROF" -svg "$p" >/dev/null 2>"$T/err" && fail "-svg without Graphviz succeeded"
grep -q 'failed to execute dot. Is Graphviz installed?' "$T/err" || fail "no Graphviz: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "no Graphviz: more than one line: $(cat "$T/err")"

# --- in a browser ----------------------------------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$CHROME" ]; then
  checks=$((checks + 1))
  timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
    --dump-dom "file://$T/h.svg" >"$T/dom" 2>/dev/null
  grep -q 'id="viewport" transform="translate(0,0) scale(0.5)"' "$T/dom" ||
    fail "chromium: the pan/zoom script did not run ($(head -c 300 "$T/dom"))"
else
  echo "# no chromium: browser check skipped"
fi
finish
