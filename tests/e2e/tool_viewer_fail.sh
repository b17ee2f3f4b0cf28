#!/bin/sh
# A viewer that fails: -web and -weblist with a $BROWSER that exits
# non-zero print the command that failed and exit non-zero (pprof returns
# the viewer's error); with no viewer at all, the file is named instead.
# And web UI error pages title the profile ("FILE TYPE") as other pages do,
# not "unknown unknown".
# timeout: 120
. "$(dirname "$0")/webui_common.inc"
cc_prog "$T/known" "$PROGS/heapknown.c"
(cd "$T" && CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/known.pb.gz" LD_PRELOAD="$LIB" ./known > /dev/null) ||
  fail "heapknown failed"
P=$T/known.pb.gz
printf '#!/bin/sh\nexit 3\n' > "$T/badbrowser"; chmod +x "$T/badbrowser"
for cmd in -web -weblist=use_large; do
  BROWSER="$T/badbrowser" "$CPROF" $cmd "$P" > /dev/null 2> "$T/err" && fail "$cmd: exit 0 with a failing browser"
  grep -q "badbrowser /.*: exit status 3" "$T/err" || fail "$cmd: the failing command is not named: $(cat "$T/err")"
done
BROWSER= DISPLAY= WAYLAND_DISPLAY= "$CPROF" -web "$P" > /dev/null 2> "$T/err" ||
  fail "-web without a browser: non-zero exit"
grep -q 'no browser found (set $BROWSER); the report is in /' "$T/err" || fail "-web without a browser: $(cat "$T/err")"

start_ui main "$P"
get "/ui/top"
title=$(grep -o '<title>[^<]*</title>' "$T/body")
[ "$title" = "<title>known inuse_space</title>" ] || fail "top's title: $title"
for bad in "/ui/top?si=nosuch" "/ui/nosuch" "/ui/peek?f=%28"; do
  get "$bad"
  [ "$CODE" -ge 400 ] || fail "$bad: $CODE"
  t=$(grep -o '<title>[^<]*</title>' "$T/body")
  [ "$t" = "$title" ] || fail "$bad: title $t, not $title"
done
note "failing viewers named, exit non-zero; error pages titled like the others"
exit 0
