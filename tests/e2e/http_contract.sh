#!/bin/sh
# The contract between libcprof.so and libcprof-http.so (httpops.h): a
# module built for another CPROF_HTTP_OPS_VERSION (here 5, the tables
# before the registry of profile kinds) is refused with one line, the
# server off and the program running on; the module built with the
# runtime, copied beside it the same way, serves.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
command -v pkg-config > /dev/null && pkg-config --exists libmicrohttpd || skip "no libmicrohttpd"

# module DIR [CFLAGS]: libcprof-http.so built from the sources into DIR,
# beside a copy of libcprof.so.
module() {
  dir=$1; shift
  mkdir -p "$dir" && cp "$LIB" "$dir/" || fail "cannot copy $LIB"
  # shellcheck disable=SC2046
  gcc -std=gnu11 -O1 -shared -fPIC -fvisibility=hidden -D_GNU_SOURCE "$@" \
    -I"$TOP/include" -I"$TOP/src" -I"$BUILD/gen" -o "$dir/libcprof-http.so" \
    "$TOP"/src/http/*.c "$TOP/src/runtime/symtab.c" "$BUILD/lib/profile.a" "$BUILD/lib/base.a" \
    $(pkg-config --cflags --libs libmicrohttpd) -lz -lm -L"$dir" -lcprof ||
    fail "cannot build the module in $dir"
}

# run DIR NAME: a shell under DIR's libcprof.so with CPROF_HTTP; its
# output must be a plain run's.
run() {
  env CPROF_HTTP=127.0.0.1:0 LD_PRELOAD="$1/libcprof.so" sh -c 'echo ran' > "$T/$2.out" 2> "$T/$2.err" ||
    fail "$2: the program failed"
  grep -qx ran "$T/$2.out" || fail "$2: the program did not run"
}

module "$T/old" -DCPROF_HTTP_OPS_VERSION=5
run "$T/old" old
[ "$(grep -c . "$T/old.err")" = 1 ] || { cat "$T/old.err"; fail "old module: not one line"; }
grep -qx 'cprof: CPROF_HTTP="127.0.0.1:0": cannot start the server: Protocol error; the HTTP server is off' \
  "$T/old.err" || { cat "$T/old.err"; fail "old module: message"; }
note "a module of contract version 5: refused, one line"

module "$T/same"
run "$T/same" same
grep -q '^cprof: serving /debug/pprof/ on http://127.0.0.1:[0-9]*/debug/pprof/$' "$T/same.err" ||
  { cat "$T/same.err"; fail "same module: not served"; }
note "the module of this contract: serves"
