#!/bin/sh
# The tag filters of cprof's web UI on labels (tests/progs/labels_server.c
# at CPROF_RATE=1): /ui/top?tf=kind=a (Tag focus) and ?ti= (Tag ignore)
# give the rows of cprof -top -tagfocus / -tagignore, and the kind's
# numbers are the program's truth (temp_alloc's alloc_space).
# timeout: 180
. "$(dirname "$0")/webui_common.inc"
. "$(dirname "$0")/labels_common.inc"

run_server w 20 0 CPROF_RATE=1
start_ui ui -sample_index=alloc_space "$T/ls" "$T/w.heap"
for q in "tf=kind%3Da:-tagfocus=kind=a" "tf=kind%3Db:-tagfocus=kind=b" "ti=kind%3Da:-tagignore=kind=a"; do
  expect "/ui/top?${q%%:*}&unit=byte" 200
  html_part "$T/body" rows > "$T/web.rows"
  cli_rows -unit=byte -sample_index=alloc_space "${q#*:}" "$T/ls" "$T/w.heap" > "$T/cli.rows"
  cmp -s "$T/web.rows" "$T/cli.rows" || { diff "$T/web.rows" "$T/cli.rows" | head; fail "top?${q%%:*} differs from ${q#*:}"; }
done
# temp_alloc: TEMPS (128) blocks of 1000 bytes a unit
for k in a b; do
  expect "/ui/top?tf=kind%3D$k&unit=byte" 200
  got=$(html_part "$T/body" rows | awk -F '\t' '$2 == "temp_alloc" { v = $1; sub(/B$/, "", v); print v }')
  units=$(truth w $k units); want=$((units * 128000))
  [ "$got" = "$want" ] || fail "web top?tf=kind=$k: temp_alloc $got, truth $want"
done
note "web UI tag focus/ignore = the command line's, kinds exact"
