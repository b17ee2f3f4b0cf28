#!/bin/sh
# cprof fetching profiles over HTTP, against tests/progs/fake_pprof_server.py
# on 127.0.0.1 (a free port): the fetched report equals the file's; the
# profile is saved as $PPROF_TMPDIR (else $HOME/pprof)/pprof.PROG.TYPES.NNN.pb.gz
# and "Saved profile in ..." is printed; URL rules (host:port/path, empty
# path, -seconds replacing seconds=, sorted query); 404/500/403 (status and
# first line of a text body), a refused connection, garbage and empty
# bodies, -timeout cutting a slow answer and a trickling one, and the
# default timeout of 1.5 x -seconds: one message, exit 1. Remote
# symbolization: a profile whose binary is gone gets its names from the
# server's /debug/pprof/symbol. With libcprof-http.so, the same against
# the in-process server of a preloaded program (tests/progs/http_server.c).
# timeout: 120
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
[ -x "$CPROF" ] || fail "no $CPROF (run make)"
[ -f "$LIB" ] || fail "no $LIB (run make)"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
unset PPROF_BINARY_PATH DEBUGINFOD_URLS CPROF_RATE CPROF_HEAP_PROFILE LD_PRELOAD
export HOME="$T/home" PPROF_TMPDIR="$T/saved"
mkdir -p "$HOME"
PIDS=""
trap 'for p in $PIDS; do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

wait_file() { # FILE [SECONDS]
  i=0
  while [ ! -s "$1" ]; do
    i=$((i + 1)); [ $i -gt $((${2:-10} * 10)) ] && return 1; sleep 0.1
  done
}

# fake NAME PROFILE: starts a fake server; its URL in $U, log in $T/NAME.log.
fake() {
  python3 "$PROGS/fake_pprof_server.py" "$2" "$T/$1.port" "$T/$1.log" 2> "$T/$1.err" &
  PIDS="$PIDS $!"
  wait_file "$T/$1.port" || { cat "$T/$1.err"; fail "$1: the fake server did not start"; }
  U="http://127.0.0.1:$(cat "$T/$1.port")"
  HP="127.0.0.1:$(cat "$T/$1.port")"
}

# the served profile: record_prog at rate 1, binary in place
cc_prog "$T/prog" "$PROGS/record_prog.c"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/p.pb.gz" LD_PRELOAD="$LIB" "$T/prog" > /dev/null || fail "record_prog"
fake srv "$T/p.pb.gz"
name=pprof.prog.alloc_objects.alloc_space.inuse_objects.inuse_space.temp_objects.temp_space.resident_space

# --- the fetched report is the file's; the profile is saved -------------------------
for flags in "-top" "-traces" "-top -sample_index=alloc_space -cum"; do
  "$CPROF" $flags "$T/p.pb.gz" > "$T/file.out" 2> /dev/null || fail "cprof $flags file"
  "$CPROF" $flags "$U/debug/pprof/heap" > "$T/url.out" 2> "$T/url.err" || { cat "$T/url.err"; fail "cprof $flags URL"; }
  cmp -s "$T/file.out" "$T/url.out" || { diff "$T/file.out" "$T/url.out" | head; fail "cprof $flags: URL and file differ"; }
done
grep -qx "Fetching profile over HTTP from $U/debug/pprof/heap" "$T/url.err" || { cat "$T/url.err"; fail "no Fetching line"; }
grep -qx "Saved profile in $PPROF_TMPDIR/$name.003.pb.gz" "$T/url.err" || { cat "$T/url.err"; ls "$PPROF_TMPDIR"; fail "third fetch not saved as $name.003.pb.gz"; }
for n in 001 002 003; do [ -s "$PPROF_TMPDIR/$name.$n.pb.gz" ] || fail "no $name.$n.pb.gz"; done
"$CPROF" -top "$PPROF_TMPDIR/$name.001.pb.gz" > "$T/saved.out" 2>/dev/null || fail "saved profile unreadable"
"$CPROF" -top "$T/p.pb.gz" > "$T/file.out" 2>/dev/null
cmp -s "$T/file.out" "$T/saved.out" || { diff "$T/file.out" "$T/saved.out"; fail "saved profile reports differently"; }
# no PPROF_TMPDIR: $HOME/pprof
env -u PPROF_TMPDIR "$CPROF" -top "$U/debug/pprof/heap" > /dev/null 2> "$T/home.err" || fail "fetch without PPROF_TMPDIR"
grep -qx "Saved profile in $HOME/pprof/$name.001.pb.gz" "$T/home.err" || { cat "$T/home.err"; fail "not saved in \$HOME/pprof"; }
note "fetched = file, saved as $name.NNN.pb.gz"

# --- URL rules (cmd/pprof's adjustURL) -----------------------------------------------
: > "$T/srv.log"
"$CPROF" -top "$HP/debug/pprof/heap" > /dev/null 2>&1 || fail "host:port/path"
"$CPROF" -top "$HP" > /dev/null 2>&1 || fail "host:port"
"$CPROF" -top -seconds 1 "$U/debug/pprof/heap?z=1&seconds=9&gc=1" > /dev/null 2> "$T/sec.err" || fail "-seconds"
"$CPROF" -top "$U/redirect" > /dev/null 2>&1 || fail "redirect"
printf '%s\n' "GET /debug/pprof/heap" "GET /debug/pprof/profile" "GET /debug/pprof/heap?gc=1&seconds=1&z=1" \
  "GET /redirect" "GET /debug/pprof/heap" | cmp -s - "$T/srv.log" || { cat "$T/srv.log"; fail "requests sent"; }
grep -qx "Please wait... (1s)" "$T/sec.err" || { cat "$T/sec.err"; fail "no 'Please wait... (1s)'"; }
note "URL rules"

# --- failures: one message, exit 1 --------------------------------------------------------
# expect_fail WHAT REGEX CPROF_ARGS...: exit 1, the error line names the
# source and matches REGEX; nothing else but pprof's Fetching/summary lines.
expect_fail() {
  what=$1; re=$2; shift 2
  "$CPROF" "$@" > "$T/f.out" 2> "$T/f.err"; rc=$?
  [ $rc = 1 ] || { cat "$T/f.err"; fail "$what: exit $rc, want 1"; }
  [ -s "$T/f.out" ] && fail "$what: printed a report"
  grep -v '^Fetching profile over HTTP from \|^Please wait\|^failed to fetch any source profiles$' "$T/f.err" > "$T/f.msg"
  [ "$(wc -l < "$T/f.msg")" = 1 ] || { cat "$T/f.err"; fail "$what: not one message"; }
  grep -Eq "$re" "$T/f.msg" || { cat "$T/f.msg"; fail "$what: message does not match $re"; }
}
expect_fail 404 "^$U/404: server response: 404 Not Found - no such profile here\$" -top "$U/404"
expect_fail 500 "^$U/500: server response: 500 Internal Server Error - Could not enable CPU profiling: cpu profiling already in use\$" -top "$U/500"
expect_fail "403, binary body" "^$U/403bin: server response: 403 Forbidden\$" -top "$U/403bin"
expect_fail garbage "^$U/garbage: parsing profile: " -top "$U/garbage"
expect_fail empty "^$U/empty: parsing profile: empty input\$" -top "$U/empty"
# a port nobody listens on: a server started and stopped
fake dead "$T/p.pb.gz"
dead=$U
kill -9 ${PIDS##* }; wait ${PIDS##* } 2>/dev/null
expect_fail refused "Connection refused" -top "$dead/debug/pprof/heap"
expect_fail "bad scheme" 'unsupported protocol scheme "ftp"' -top "ftp://127.0.0.1:1/x"
fake srv2 "$T/p.pb.gz"   # (a fresh server: the first may hold slow threads)
start=$(date +%s)
expect_fail "-timeout 1, slow answer" "timeout: no complete response within 1s" -top -timeout 1 "$U/slow?delay=30"
expect_fail "-timeout 2, trickling body" "timeout: no complete response within 2s" -top -timeout 2 "$U/trickle"
expect_fail "-seconds 1: default timeout 1.5s" "timeout: no complete response within 1.5s" -top -seconds 1 "$U/slow?delay=30"
el=$(( $(date +%s) - start ))
[ $el -le 9 ] || fail "three timeouts (1 s, 2 s, 1.5 s) took $el s"
note "failures: one message, exit 1; timeouts in ${el}s"

# --- remote symbolization --------------------------------------------------------------------
mkdir -p "$T/gone"
cc_prog "$T/gone/prog" "$PROGS/record_prog.c"
CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/g.named.pb.gz" LD_PRELOAD="$LIB" "$T/gone/prog" > /dev/null ||
  fail "record_prog"
rm -f "$T/gone/prog"
# Without the function names the runtime writes: only the server can name.
"$BUILD/profdump" -addresses -proto "$T/g.pb.gz" "$T/g.named.pb.gz" || fail "profdump -addresses"
fake sym "$T/g.pb.gz"
"$CPROF" -top -nodefraction=0 "$U/debug/pprof/heap" > "$T/sym.out" 2> "$T/sym.err" || { cat "$T/sym.err"; fail "remote symbolization"; }
grep -q "Local symbolization failed for prog" "$T/sym.err" || { cat "$T/sym.err"; fail "the binary was found"; }
grep -qx "POST /debug/pprof/symbol" "$T/sym.log" || { cat "$T/sym.log"; fail "no POST to /debug/pprof/symbol"; }
grep -Eq '^BODY 0x[0-9a-f]+(\+0x[0-9a-f]+)*$' "$T/sym.log" || { cat "$T/sym.log"; fail "symbol request body"; }
grep -Eq ' fn_[0-9a-f]+$' "$T/sym.out" || { cat "$T/sym.out"; fail "no names from the symbol server"; }
grep -Eq '\[prog\]' "$T/sym.out" && { cat "$T/sym.out"; fail "unsymbolized frames left"; }
saved=$(sed -n 's/^Saved profile in //p' "$T/sym.err")
"$CPROF" -top -nodefraction=0 "$saved" > "$T/sym.saved" 2>/dev/null
cmp -s "$T/sym.out" "$T/sym.saved" || { diff "$T/sym.out" "$T/sym.saved"; fail "the saved profile lacks the remote names"; }
: > "$T/sym.log"
"$CPROF" -top -symbolize=local "$U/debug/pprof/heap" > "$T/local.out" 2>/dev/null || fail "-symbolize=local"
grep -q POST "$T/sym.log" && fail "-symbolize=local asked the server"
grep -q '\[prog\]' "$T/local.out" || { cat "$T/local.out"; fail "-symbolize=local: [prog] frames"; }
note "remote symbolization through /debug/pprof/symbol"

# --- the in-process server (libcprof-http.so) ------------------------------------------------
if [ -f "$BUILD/libcprof-http.so" ] && [ -f "$PROGS/http_server.c" ]; then
  cc_prog "$T/srv" "$PROGS/http_server.c"
  mkdir -p "$T/srvgone" && cp "$T/srv" "$T/srvgone/srv"
  for v in here gone; do
    bin=$T/srv; [ $v = gone ] && bin=$T/srvgone/srv
    env CPROF_HTTP=127.0.0.1:0 CPROF_HTTP_ADDR_FILE="$T/$v.addr" CPROF_RATE=1 LD_PRELOAD="$LIB" \
      "$bin" "$T/$v.count" 2> "$T/$v.srverr" &
    PIDS="$PIDS $!"
    wait_file "$T/$v.addr" || { cat "$T/$v.srverr"; fail "$v: in-process server: no address file"; }
    wait_file "$T/$v.count" || fail "$v: http_server does not run"
    [ $v = gone ] && rm -f "$T/srvgone/srv"
    "$CPROF" -top -unit=byte -nodefraction=0 "http://$(cat "$T/$v.addr")/debug/pprof/heap" > "$T/$v.top" 2> "$T/$v.err" ||
      { cat "$T/$v.err"; fail "$v: cprof -top against the in-process server"; }
    for fn in keep_small keep_large; do
      grep -Eq "^ *1000000B .* $fn\$" "$T/$v.top" || { cat "$T/$v.top"; fail "$v: $fn not 1000000B"; }
    done
    # (the mapping of a deleted binary is "srv (deleted)", as /proc/PID/maps says)
    grep -Eq "^Saved profile in $PPROF_TMPDIR/pprof\.srv( \(deleted\))?\.alloc_objects\.alloc_space\.inuse_objects\.inuse_space\.temp_objects\.temp_space\.resident_space\.0" "$T/$v.err" ||
      { cat "$T/$v.err"; fail "$v: not saved"; }
  done
  grep -q "Local symbolization failed" "$T/gone.err" || { cat "$T/gone.err"; fail "gone: the binary was found"; }
  note "in-process server: exact numbers, names through its symbol endpoint without the binary"
else
  note "no libcprof-http.so: in-process server not tested"
fi
exit 0
