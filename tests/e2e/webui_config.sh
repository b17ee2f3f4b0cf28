#!/bin/sh
# Saved configurations of the web UI, as pprof has them: in headless
# chromium (see webui_browser.sh) Config > Save as ... stores the current
# view's settings under a name, the menu lists it, choosing it applies it,
# its cross deletes it. The settings file ($XDG_CONFIG_HOME/pprof/
# settings.json) is byte for byte the one go tool pprof's own UI writes for
# the same requests, and go tool pprof lists what cprof saved.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"
need_browser
export XDG_CONFIG_HOME="$T/xdg"
SETTINGS=$XDG_CONFIG_HOME/pprof/settings.json

cc_prog "$T/known" "$PROGS/heapknown.c"
(cd "$T" && CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/known.pb.gz" LD_PRELOAD="$LIB" ./known > /dev/null) ||
  fail "heapknown failed"
start_ui main "$T/known.pb.gz"

CHROME="$CHROME" NODE_PATH="$NODE_DIR/node_modules" HOME="$T/home" \
  node "$(dirname "$0")/webui_config.js" "$UI" "$SETTINGS" || fail "browser checks"

# The same saves through go tool pprof's UI write the same file.
command -v go >/dev/null 2>&1 || skip "skip: no go (golang-go) to compare the settings file with"
# pprof 1.19 does not say which port :0 gave it: an ephemeral port the
# kernel just handed out is passed instead.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '#!/bin/sh\nshift\nexec go tool pprof -http=127.0.0.1:%s "$@"\n' "$port" > "$T/gopprof"
chmod +x "$T/gopprof"
rm -f "$SETTINGS"
start_ui go -bin "$T/gopprof" "$T/known.pb.gz"
GO=http://127.0.0.1:$port
start_ui cprof "$T/known.pb.gz"
CP=$UI
# saves URL: the same saves and a delete through the UI at URL
saves() {
  for q in 'config=mine&f=use_&g=lines&nf=0.01&calltree=true&n=30&si=alloc_space' \
           'config=a%3Cb%22%26&h=x%26y%3C&unit=MB&sort=cum' 'config=tiny&nf=0.0000001&ef=1e-21&noinlines=t' \
           'config=mine&f=other&trim=false'; do
    curl -sS -X POST "$1/ui/saveconfig?$q" > /dev/null
  done
  curl -sS -X POST "$1/ui/deleteconfig?config=tiny" > /dev/null
}
saves "$GO"
cp "$SETTINGS" "$T/go.json"
rm -f "$SETTINGS"
saves "$CP"
cmp -s "$SETTINGS" "$T/go.json" || { diff "$SETTINGS" "$T/go.json"; fail "settings.json differs from go tool pprof's"; }
# each tool lists the other's saved configurations
UI=$GO; get "/ui/top"
grep -q 'a&lt;b&#34;&amp;' "$T/body" || fail "go tool pprof does not list a configuration cprof saved"
UI=$CP; get "/ui/top"
grep -q 'data-config="mine"' "$T/body" || fail "cprof does not list its configuration"
# errors in pprof's words
get "/ui/deleteconfig?config=nosuch"
[ "$CODE" = 400 ] && grep -q 'config nosuch not found' "$T/body" || fail "deleting a missing config: $CODE $(cat "$T/body")"
get "/ui/saveconfig?config="
[ "$CODE" = 400 ] && grep -q 'invalid config name' "$T/body" || fail "saving without a name: $CODE"
note "settings.json = go tool pprof's"
exit 0
