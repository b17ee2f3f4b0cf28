#!/bin/sh
# -weblist and the web UI's source and disassembly views in a real browser
# (headless chromium through playwright-core, as webui_browser.sh): on a C
# program's heap profile the pages load without a console error or any
# request but to the server, a click on a source line shows its
# instructions, and each line's values are -list's; /ui/disasm is in the
# View menu and its numbers are -disasm's; -weblist -output writes the
# same self-contained page, and the shell's weblist opens it in $BROWSER.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"
command -v objdump >/dev/null 2>&1 || skip "skip: no objdump (binutils)"
need_browser

gcc -g -O1 -fno-omit-frame-pointer -fPIC -shared -o "$T/libdis.so" "$PROGS/disasm_lib.c" &&
  gcc -g -O1 -fno-omit-frame-pointer -o "$T/prog" "$PROGS/disasm_main.c" -L"$T" -ldis -Wl,-rpath,"$T" ||
  fail "building"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/heap.pb.gz" LD_PRELOAD="$LIB" "$T/prog" 100 || fail "running"
P=$T/heap.pb.gz

# -weblist -output: the page, its values those of -list
"$CPROF" -weblist='\bgrab\b' -output "$T/wl.html" "$P" 2> "$T/wl.err" || fail "-weblist: $(cat "$T/wl.err")"
html_part "$T/wl.html" weblist > "$T/wl.vals"
cli_list -list='\bgrab\b' "$P" > "$T/list.vals"
[ -s "$T/list.vals" ] && cmp -s "$T/wl.vals" "$T/list.vals" ||
  { diff "$T/wl.vals" "$T/list.vals"; fail "-weblist values differ from -list"; }
grep -q '<span class=asm>' "$T/wl.html" || fail "-weblist: no instructions"
grep -Eq '(src|href)="?(http|//)' "$T/wl.html" && fail "-weblist: the page loads something from elsewhere"

# the shell's weblist opens the page in the browser ($BROWSER, a stand-in)
mkdir -p "$T/bin"
printf '#!/bin/sh\ncp "$1" "%s/o.tmp" && mv "%s/o.tmp" "%s/opened.html"\n' "$T" "$T" "$T" > "$T/bin/opener"
chmod +x "$T/bin/opener"
printf 'weblist lib_grab\nquit\n' | BROWSER="$T/bin/opener" "$CPROF" "$P" > "$T/sh.out" 2>&1
i=0  # the shell does not wait for its browser
while [ ! -s "$T/opened.html" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
grep -q '<h2>lib_grab</h2>' "$T/opened.html" 2>/dev/null || { cat "$T/sh.out"; fail "shell weblist did not open the page"; }

start_ui main "$P"
get "/ui/source?f=%5Cbgrab%5Cb"
html_part "$T/body" weblist > "$T/ui.vals"
cli_list -list='\bgrab\b' -focus='\bgrab\b' "$P" > "$T/list.vals"
cmp -s "$T/ui.vals" "$T/list.vals" || { diff "$T/ui.vals" "$T/list.vals"; fail "/ui/source values differ from -list"; }
get "/ui/disasm?f=%5Cbgrab%5Cb"
[ "$CODE" = 200 ] || fail "/ui/disasm: $CODE"
html_part "$T/body" text > "$T/ui.dis"
"$CPROF" -disasm='\bgrab\b' -focus='\bgrab\b' "$P" > "$T/cli.dis" 2>/dev/null
cmp -s "$T/ui.dis" "$T/cli.dis" || { diff "$T/ui.dis" "$T/cli.dis" | head; fail "/ui/disasm differs from -disasm"; }

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_weblist.js" "$UI" "file://$T/wl.html" || fail "browser checks"
exit 0
