#!/bin/sh
# A program linked with cprof and installed setuid (here to nobody, run by
# root: the loader sets AT_SECURE when the effective user differs from the
# real one) reads no CPROF_* setting: the user who runs it must not choose
# where its owner writes files. It runs as always, writes no profile where
# CPROF_HEAP_PROFILE points, and says why in one line. The same program
# run plainly writes it (the test can fail).
# timeout: 60
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (to make a program setuid to another user)"
id nobody >/dev/null 2>&1 || skip "needs the user nobody"
findmnt -n -o OPTIONS -T "$T" 2>/dev/null | grep -qw nosuid && skip "$T is mounted nosuid"

cc_prog "$T/prog" "$PROGS/noalloc.c" -L"$BUILD" -Wl,--no-as-needed -lcprof -Wl,-rpath,"$BUILD"
# nobody, once it is the program, reaches only this directory.
chmod 711 "$T" && mkdir "$T/out" && chmod 777 "$T/out" || fail "cannot make the output directory"

CPROF_HEAP_PROFILE="$T/out/plain.pb.gz" "$T/prog" > "$T/plain.out" 2> "$T/plain.err" ||
  { cat "$T/plain.err"; fail "plain: exit status $?"; }
grep -qx ok "$T/plain.out" || fail "plain: unexpected output"
[ -s "$T/out/plain.pb.gz" ] || { cat "$T/plain.err"; fail "plain: no profile written"; }

chown nobody "$T/prog" && chmod u+s "$T/prog" || fail "cannot make the program setuid"
CPROF_HEAP_PROFILE="$T/out/suid.pb.gz" CPROF_HTTP=127.0.0.1:0 "$T/prog" > "$T/suid.out" 2> "$T/suid.err"
rc=$?
[ $rc = 0 ] || { cat "$T/suid.err"; fail "setuid: exit status $rc"; }
grep -qx ok "$T/suid.out" || fail "setuid: unexpected output"
[ -e "$T/out/suid.pb.gz" ] && fail "setuid: the profile was written where the user chose"
[ "$(grep -c 'setuid or setgid: CPROF_\* settings are ignored' "$T/suid.err")" = 1 ] ||
  { cat "$T/suid.err"; fail "setuid: not the one line that says why"; }
[ "$(wc -l < "$T/suid.err")" = 1 ] || { cat "$T/suid.err"; fail "setuid: more than one line"; }
note "setuid: no profile, one line"
exit 0
