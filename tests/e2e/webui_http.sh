#!/bin/sh
# The web UI (cprof -http) over HTTP, with curl: every view with the URL
# parameters that change it (sample index, filters, granularity, ...) —
# status, content type, and the numbers against the command line (the top
# table against -top, peek and source against -peek/-list); pprof's
# redirects; error pages (unknown view 404, bad regexp / sample index /
# value 400, with the message); escaping of names holding < > & " (C++
# names, demangle=full); the diff view (-base); the download round trip;
# access rules (Host header, methods); port 0 and -http=:PORT (loopback);
# $BROWSER; and a burst of hostile requests against cprof built plainly
# and under ASan/UBSan: the server answers each, keeps serving, and exits
# cleanly on SIGTERM with no sanitizer report.
# timeout: 300
. "$(dirname "$0")/webui_common.inc"

ASAN=$BUILD/asan/cprof
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1

# --- profiles with known contents -------------------------------------------------
# A private copy of the runtime: its frames symbolize the same way for the
# server and for the command line even if build/ is rebuilt meanwhile.
cp "$LIB" "$T/libcprof.so" && LIB=$T/libcprof.so
cc_prog "$T/known" "$PROGS/heapknown.c"
(cd "$T" && CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/known.pb.gz" LD_PRELOAD="$LIB" ./known > truth.txt) ||
  fail "heapknown failed"
cat > "$T/evil.cc" <<'EOF'
#include <cstdlib>
#include <utility>
static void *E(void *p) { __asm__ volatile("" : : "g"(p) : "memory"); return p; }
template <typename T> __attribute__((noinline)) void hold(int n) { for (int i = 0; i < n; i++) E(malloc(sizeof(T) * 1000)); }
struct Km { unsigned long long v; };
__attribute__((noinline)) Km operator"" _leak(unsigned long long v) { E(malloc(v)); return Km{v}; }
struct A { int x; };
__attribute__((noinline)) void *operator&(A &, int n) { return E(malloc(n)); }
int main() { hold<std::pair<int, char>>(10); Km k = 50000_leak; A a{1}; void *p = a & 70000; (void)k; (void)p; return 0; }
EOF
cc_prog "$T/evil" "$T/evil.cc"
(cd "$T" && CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/evil.pb.gz" LD_PRELOAD="$LIB" ./evil) || fail "evil failed"
# a second, different profile of heapknown for -base
(cd "$T" && CPROF_RATE=4096 CPROF_SEED=7 CPROF_HEAP_PROFILE="$T/known2.pb.gz" LD_PRELOAD="$LIB" ./known > /dev/null) ||
  fail "heapknown (2) failed"
P=$T/known.pb.gz

# --- every view ------------------------------------------------------------------------
start_ui main "$P"
for v in "" top flamegraph peek source memory; do
  expect "/ui/$v" 200
  grep -q '<header id="bar">' "$T/body" || fail "/ui/$v: no menu bar"
done
note "views: 200 text/html"
expect "/ui/top" 200 'id="toptable"'
expect "/ui/" 200 '<svg'
expect "/ui/flamegraph" 200
expect "/ui/peek" 200 '<pre id="text" class="peek">'
expect "/ui/source" 200 'id="picker"'
expect "/ui/memory" 200 'several heap profiles'
get /ui/download
[ "$CODE" = 200 ] && [ "$CTYPE" = "application/vnd.google.protobuf+gzip" ] || fail "download: $CODE $CTYPE"
grep -qi '^content-disposition: attachment;filename=profile.pb.gz' "$T/headers" || fail "download: no file name"
cp "$T/body" "$T/downloaded.pb.gz"
"$CPROF" -top "$T/downloaded.pb.gz" > "$T/dl.top" 2>/dev/null || fail "the download does not load"
"$CPROF" -top "$P" > "$T/orig.top" 2>/dev/null
cmp -s "$T/dl.top" "$T/orig.top" || { diff "$T/dl.top" "$T/orig.top"; fail "the download reports differently"; }
grep -qi '^content-security-policy:' "$T/headers" || fail "no Content-Security-Policy"

# --- the top table is -top, for every sample index and some parameters ---------------------
for si in alloc_objects alloc_space inuse_objects inuse_space 0 3; do
  get "/ui/top?si=$si"
  [ "$CODE" = 200 ] || fail "top si=$si: status $CODE"
  html_part "$T/body" rows > "$T/web.rows"
  cli_rows -sample_index=$si "$P" > "$T/cli.rows"
  [ -s "$T/cli.rows" ] || fail "no rows from cprof -top -sample_index=$si"
  cmp -s "$T/web.rows" "$T/cli.rows" || { diff "$T/web.rows" "$T/cli.rows" | head; fail "top si=$si differs from -top"; }
  grep -q 'class="si current" href="?si=' "$T/body" || fail "top si=$si: no current sample type in the menu"
done
first() { head -n 1 "$T/web.rows" | cut -f 2; }
get "/ui/top?si=inuse_space"; html_part "$T/body" rows > "$T/web.rows"
[ "$(first)" = use_large ] || fail "top inuse_space: first is $(first)"
get "/ui/top?si=alloc_objects"; html_part "$T/body" rows > "$T/web.rows"
[ "$(first)" = thread_work ] || fail "top alloc_objects: first is $(first)"
note "top table = cprof -top for every sample index"

# URL parameter -> the flags they stand for
check_top() { # QUERY FLAGS...
  q=$1; shift
  get "/ui/top?$q"
  [ "$CODE" = 200 ] || fail "top?$q: status $CODE"
  html_part "$T/body" rows > "$T/web.rows"
  cli_rows "$@" "$P" > "$T/cli.rows"
  cmp -s "$T/web.rows" "$T/cli.rows" || { diff "$T/web.rows" "$T/cli.rows" | head; fail "top?$q differs from -top $*"; }
}
check_top "f=use_" -focus=use_
check_top "i=thread" -ignore=thread
check_top "h=main" -hide=main
check_top "s=use_" -show=use_
check_top "sf=thread_main" -show_from=thread_main
check_top "prunefrom=main" -prune_from=main
check_top "g=lines" -lines
check_top "g=files" -files
check_top "g=addresses" -addresses
check_top "sort=cum" -cum
check_top "unit=kb" -unit=kb
check_top "mean=t&si=alloc_space" -mean -sample_index=alloc_space
check_top "nf=0.1" -nodefraction=0.1
check_top "trim=f" -trim=false
check_top "noinlines=t" -noinlines
check_top "tf=1kb:&si=alloc_space" -tagfocus=1kb: -sample_index=alloc_space
check_top "f=use_&i=large&si=alloc_objects" -focus=use_ -ignore=large -sample_index=alloc_objects
check_top "f=use_&f=ignored_second" -focus=use_
note "URL parameters = flags"

# Active filters are shown, each with a link that removes it
expect "/ui/top?f=use_&i=large" 200 'focus=<code>use_</code>'
grep -q 'href="?f=use_">' "$T/body" || fail "no link removing the ignore filter"

# peek and source against the command line (f is the regexp and the focus)
get "/ui/peek?f=use_large"
[ "$CODE" = 200 ] || fail "peek: $CODE"
html_part "$T/body" text > "$T/web.peek"
"$CPROF" -peek=use_large -focus=use_large -lines "$P" > "$T/cli.peek" 2>/dev/null
cmp -s "$T/web.peek" "$T/cli.peek" || { diff "$T/web.peek" "$T/cli.peek" | head; fail "peek differs from -peek"; }
# source: pprof's weblist page, each line's values as -list's
get "/ui/source?f=use_malloc_keep"
[ "$CODE" = 200 ] || fail "source: $CODE"
html_part "$T/body" weblist > "$T/web.list"
cli_list -list=use_malloc_keep -focus=use_malloc_keep "$P" > "$T/cli.list"
[ -s "$T/cli.list" ] && cmp -s "$T/web.list" "$T/cli.list" || { diff "$T/web.list" "$T/cli.list" | head; fail "source differs from -list"; }
grep -q '<span class=asm>' "$T/body" || fail "source: no instructions under the lines"
grep -q 'KEEP(malloc(1000))' "$T/body" || fail "source: no source text"
get "/ui/source"
grep -q 'href="./source?f=%5Euse_large%28%20%7C%24%29"' "$T/body" || fail "source picker: no link to use_large"
note "peek, source = -peek, -list"

# graph: a call graph of the focused nodes only
get "/ui/?f=thread_work"
[ "$CODE" = 200 ] || fail "graph f=: $CODE"
grep -q '>thread_work<' "$T/body" || fail "graph f=thread_work: no thread_work node"
grep -q '>use_large<' "$T/body" && fail "graph f=thread_work: use_large is still there"

# --- errors: pages with the message ---------------------------------------------------------
expect "/ui/nosuchview" 404 'there is no view &#34;nosuchview&#34;'
expect "/ui/top/extra" 404 'there is no view'
expect "/ui/top?f=(" 400 'parsing focus regexp'
expect "/ui/top?i=a%5B" 400 'parsing ignore regexp'
expect "/ui/?h=*" 400 'parsing hide regexp'
expect "/ui/flamegraph?sf=(" 400 'parsing show_from regexp'
expect "/ui/peek?f=(" 400 'regexp'
expect "/ui/top?si=bogus" 400 'sample_index &#34;bogus&#34; must be one of: [alloc_objects alloc_space inuse_objects inuse_space temp_objects temp_space resident_space]'
expect "/ui/?si=7" 400 'sample_index 7 is outside the range [0..6]'
expect "/ui/flamegraph?si=-1" 400 'outside the range'
expect "/ui/top?n=abc" 400 'error setting config field nodecount'
expect "/ui/top?g=bogus" 400 'error setting config field granularity'
expect "/ui/top?trim=maybe" 400 'error setting config field trim'
expect "/ui/top?f=nothing_matches_this" 200 'Focus expression matched no samples'
html_part "$T/body" errors | grep -qx 'Focus expression matched no samples' || fail "warning not shown"
get "/ui/top?f=("
html_part "$T/body" errors | grep -q '^parsing focus regexp' || fail "error box"
note "error pages: 404/400 with messages"

# --- pprof's redirects, methods, Host --------------------------------------------------------
get "/?si=alloc_space&f=a%20b"
[ "$CODE" = 307 ] || fail "/ : $CODE"
grep -qi '^location: /ui/?si=alloc_space&f=a%20b' "$T/headers" || { cat "$T/headers"; fail "/ : bad Location"; }
get "/ui"; [ "$CODE" = 307 ] && grep -qi '^location: /ui/' "$T/headers" || fail "/ui: no redirect"
get "/debug/pprof/"; [ "$CODE" = 307 ] || fail "/debug/pprof/: $CODE"
get "/ui/top" -X POST -d x=1; [ "$CODE" = 405 ] || fail "POST: $CODE"
get "/ui/top" -I; [ "$CODE" = 200 ] || fail "HEAD: $CODE"
get "/ui/top" -H "Host: attacker.example"; [ "$CODE" = 403 ] || fail "foreign Host: $CODE"
get "/ui/top" -H "Host: attacker.example:80"; [ "$CODE" = 403 ] || fail "foreign Host with port: $CODE"
get "/ui/top" -H "Host: localhost:1234"; [ "$CODE" = 200 ] || fail "Host localhost: $CODE"
get "/ui/top" -H "Host: 127.0.0.1"; [ "$CODE" = 200 ] || fail "Host 127.0.0.1: $CODE"
note "redirects, methods, Host checks"
stop_ui "$UI_PID"
[ "$STOP_RC" = 0 ] || fail "cprof -http exited $STOP_RC on SIGTERM"

# --- escaping of hostile names -----------------------------------------------------------------
start_ui evil -symbolize=demangle=full "$T/evil.pb.gz"
for v in "" top flamegraph peek "source?f=hold" "top?f=operator%22" "nosuch%3Cscript%3E" "top?f=%3Cscript%3E"; do
  get "/ui/$v"
  grep -q '<std::pair' "$T/body" && fail "/ui/$v: a name with < is not escaped"
  grep -q 'operator""' "$T/body" && fail "/ui/$v: a name with \" is not escaped"
  grep -qi '<script>alert\|<script%3E' "$T/body" && fail "/ui/$v: the URL is not escaped"
  grep -q '</script>' "$T/body" || true
done
get "/ui/top"
grep -qF 'hold&lt;std::pair&lt;int, char&gt; &gt;(int)' "$T/body" || fail "top: escaped template name missing"
grep -qF 'data-name="operator&#34;&#34; _leak(unsigned long long)"' "$T/body" || fail "top: escaped operator\"\" name missing"
grep -qF 'operator&amp;(A&amp;, int)' "$T/body" || fail "top: escaped operator& missing"
html_part "$T/body" rows > "$T/web.rows"
cli_rows -symbolize=demangle=full "$T/evil.pb.gz" > "$T/cli.rows"
cmp -s "$T/web.rows" "$T/cli.rows" || { diff "$T/web.rows" "$T/cli.rows"; fail "evil: top differs"; }
get "/ui/top?f=%3C/script%3E%3Cscript%3Ealert(1)%3C/script%3E"
grep -qF '</script><script>alert(1)' "$T/body" && fail "a filter value reaches the page unescaped"
grep -qF 'focus=<code>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>' "$T/body" || fail "filter value not shown escaped"
stop_ui "$UI_PID"
note "names with < > & \" escaped"

# --- the diff view --------------------------------------------------------------------------------
start_ui diff -base "$T/known2.pb.gz" "$P"
get "/ui/top"
[ "$CODE" = 200 ] || fail "diff top: $CODE"
grep -q '<body data-view="topbtn" class="diff">' "$T/body" || fail "diff: page not marked as a diff"
html_part "$T/body" rows > "$T/web.rows"
cli_rows -base "$T/known2.pb.gz" "$P" > "$T/cli.rows"
cmp -s "$T/web.rows" "$T/cli.rows" || { diff "$T/web.rows" "$T/cli.rows" | head; fail "diff top differs from -top -base"; }
for v in "" flamegraph peek; do expect "/ui/$v" 200; done
stop_ui "$UI_PID"
note "diff view = -top -base"

# --- addresses, $BROWSER ------------------------------------------------------------------------------
"$CPROF" -http=127.0.0.1 -no_browser "$P" > /dev/null 2> "$T/noport.err" && fail "-http without a port served"
grep -q 'missing port in address' "$T/noport.err" || fail "-http without a port: $(cat "$T/noport.err")"
"$CPROF" -http=127.0.0.1:99999 -no_browser "$P" > /dev/null 2> "$T/badport.err" && fail "port 99999 served"
grep -q 'invalid port number' "$T/badport.err" || fail "bad port: $(cat "$T/badport.err")"
# -http=:0 is localhost, bound to loopback only
"$CPROF" -http=:0 -no_browser "$P" > /dev/null 2> "$T/lo.err" &
LO=$!; UI_PIDS="$UI_PIDS $LO"
i=0; while ! grep -q '^Serving' "$T/lo.err"; do i=$((i+1)); [ $i -gt 300 ] && fail "-http=:0 not serving"; sleep 0.1; done
port=$(sed -n 's|^Serving web UI on http://localhost:\([0-9]*\)$|\1|p' "$T/lo.err")
[ -n "$port" ] || fail "-http=:0 printed $(cat "$T/lo.err")"
hex=$(printf '%04X' "$port")
grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A" /proc/net/tcp || fail "-http=:0 does not listen on 127.0.0.1:$port"
grep -q "^ *[0-9]*: 00000000:$hex " /proc/net/tcp && fail "-http=:0 listens on every address"
curl -sS -o /dev/null "http://127.0.0.1:$port/ui/top" || fail "-http=:0 does not answer on 127.0.0.1"
stop_ui "$LO"
# without -no_browser: $BROWSER gets the URL
printf '#!/bin/sh\necho "$@" > "%s/browser.args"\n' "$T" > "$T/browser"; chmod +x "$T/browser"
BROWSER="$T/browser" "$CPROF" -http=127.0.0.1:0 "$P" > /dev/null 2> "$T/br.err" &
BR=$!; UI_PIDS="$UI_PIDS $BR"
wait_args=0; while [ ! -s "$T/browser.args" ]; do wait_args=$((wait_args+1)); [ $wait_args -gt 100 ] && fail "\$BROWSER not run: $(cat "$T/br.err")"; sleep 0.1; done
url=$(sed -n 's/^Serving web UI on //p' "$T/br.err")
grep -qF "$url" "$T/browser.args" || fail "\$BROWSER got '$(cat "$T/browser.args")', not $url"
stop_ui "$BR"
note "addresses, loopback, \$BROWSER"

# --- hostile requests, plain and under ASan/UBSan -------------------------------------------------------
hostile() { # NAME BINARY
  start_ui "$1" -bin "$2" "$P"
  python3 - "$UI" > "$T/$1.hostile" <<'EOF' || { cat "$T/$1.hostile"; fail "$1: hostile requests"; }
import socket, sys, urllib.parse
base = sys.argv[1]
host, port = base[len("http://"):].split(":")
port = int(port)
def raw(data, read=True):
    # Sends data; reads until the server closes, or (kept alive) until it
    # has been quiet for 5 s after answering. A server that says nothing
    # for 60 s fails the test (socket.timeout).
    s = socket.create_connection((host, port), timeout=60)
    try:
        s.sendall(data)
        if not read:
            return b""
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                if out:
                    return out
                raise
            if not b:
                break
            out += b
            s.settimeout(5)
        return out
    except (ConnectionResetError, BrokenPipeError):
        return b"RESET"
    finally:
        s.close()
def get(path, extra=b""):
    return raw(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra + b"\r\n")
paths = [b"/ui/top?f=%", b"/ui/top?f=%zz%", b"/ui/top?f=%00", b"/ui/top?%00=%00", b"/ui/?si=%ff%fe",
         b"/ui/top?f=" + b"a" * 20000, b"/ui/top?" + b"&".join(b"f=%d" % i for i in range(2000)),
         b"/ui/top?f=(((((((((((((((((((((a)))))))))))))))))))))", b"/ui/top?f=(a*)*b&i=(a|a)*c",
         b"/ui/top?f=[[:alpha:]", b"/ui/top?f=\\", b"/ui/top?f=a{1000000}", b"/ui/top?n=99999999999999999999",
         b"/ui/top?n=-5", b"/ui/top?nf=nan", b"/ui/top?nf=1e400", b"/ui/top?ef=-inf", b"/ui/?n=0&nf=0&ef=0",
         b"/ui/top?si=-9223372036854775808", b"/ui/top?si=18446744073709551616", b"/ui/top?unit=%ff",
         b"/ui/top?tf=%3a%3a%3a", b"/ui/top?tf=bytes=1kb:1kb:1kb", b"/ui/top?ti=kb", b"/ui/top?ts=(", b"/ui/top?th=)",
         b"/ui/memory?site=%00", b"/ui/memory?site=" + b"x" * 5000, b"/ui/source?f=.", b"/ui/peek?f=.*",
         b"/ui/disasm?f=main", b"/ui/../../etc/passwd", b"/ui/%2e%2e/%2e%2e/", b"/ui//top", b"/ui/top#frag",
         b"/ui/top?g=lines&noinlines=t&calltree=t&mean=t&dropneg=t&rel=t&compact=t&norm=t",
         b"/ui/flamegraph?g=addresses", b"/ui/flamegraph?f=nothing_matches", b"/ui/?f=nothing_matches",
         b"/" + b"a" * 70000, b"*", b"/ui/\xff\xfe\r\n"]
bad = 0
for p in paths:
    r = get(p)
    status = r.split(b"\r\n", 1)[0]
    print(p[:60], status[:40])
    # an answer, or the connection closed (MHD refuses requests larger
    # than a connection's memory by closing it)
    if not r.startswith(b"HTTP/1.") and r not in (b"RESET", b""):
        print("no HTTP answer:", r[:80]); bad += 1
for data in [b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET /ui/top HTTP/9.9\r\n\r\n", b"\x00" * 1000,
             b"GET /ui/top HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X: " + b"y" * 100000 + b"\r\n\r\n",
             b"GET /ui/top HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n\r\nabc",
             b"GET /ui/top HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
             b"GET /ui/top HTTP/1.1\r\nHost: 127.0.0.1\r\n"]:
    raw(data, read=(data[-4:] == b"\r\n\r\n" or b"chunked" in data))
    print("raw", data[:30])
# still serving
r = get(b"/ui/top")
if b" 200 " not in r.split(b"\r\n", 1)[0] or b"use_large" not in r:
    print("not serving afterwards:", r[:200]); bad += 1
sys.exit(1 if bad else 0)
EOF
  kill -0 "$UI_PID" 2>/dev/null || fail "$1: the server died"
  stop_ui "$UI_PID"
  [ "$STOP_RC" = 0 ] || { tail -n 30 "$T/$1.err"; fail "$1: exit status $STOP_RC after SIGTERM"; }
  if grep -q 'AddressSanitizer\|LeakSanitizer\|runtime error:' "$T/$1.err"; then
    grep -m 5 -A 10 'AddressSanitizer\|LeakSanitizer\|runtime error:' "$T/$1.err"
    fail "$1: sanitizer report"
  fi
}
hostile plain "$CPROF"
if [ -x "$ASAN" ]; then
  hostile asan "$ASAN"
  note "hostile requests: plain and ASan/UBSan builds answer, keep serving, exit cleanly"
else
  note "no $ASAN: hostile requests checked on the plain build only"
fi
exit 0
