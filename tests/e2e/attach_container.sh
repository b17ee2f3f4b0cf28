#!/bin/sh
# cprof attach to a program in a container: tests/progs/attach_prog.c started
# in its own mount, PID and network namespaces (unshare, as a container
# runtime would), with cprof's build directory hidden under a tmpfs in its
# mount namespace, so that the library cprof loads is not at the path cprof
# sees (the tool hands it over in a memfd). Attached from outside at
# -rate=1: the server listens in the program's network namespace (reached
# with nsenter --net), the heap profile equals the program's own truth, the
# -cpu file is written at the target's path (under /proc/PID/root), detach
# leaves it running, a second attach and detach find the runtime in its
# memfd, and the output and exit status are those of a plain run.
# timeout: 300
. "$(dirname "$0")/attach_common.inc"
need_go
[ "$(id -u)" = 0 ] || skip "skip: making mount, PID and network namespaces needs root"
command -v unshare >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 ||
  skip "skip: unshare or nsenter (util-linux) not installed"
command -v ip >/dev/null 2>&1 || skip "skip: ip (iproute2) not installed: the box's loopback stays down"
unshare --mount --pid --net --fork --mount-proc true 2>/dev/null ||
  skip "skip: unshare cannot make mount, PID and network namespaces here"

cc_prog "$T/prog" "$PROGS/attach_prog.c" -ldl
plain_run plain "$T/prog"

# start_boxed NAME: the program as PID 1 of new namespaces, loopback up,
# $BUILD hidden; sets PID (its pid outside), BOX (unshare's), D.
start_boxed() {
  D=$T/$1
  rm -rf "$D"; mkdir -p "$D"
  unshare --mount --pid --net --fork --mount-proc sh -c '
    mount -t tmpfs cprof-hidden "$1" && ip link set lo up && cd "$3" || exit 99
    shift; exec "$@"' sh "$BUILD" "$T/prog" "$D" > "$D.out" 2> "$D.err" &
  BOX=$!
  PIDS="$PIDS $BOX"
  i=0
  while [ ! -e "$D/ready" ]; do
    i=$((i + 1)); [ $i -gt 300 ] && { cat "$D.err"; fail "$1: never ready"; }
    sleep 0.1
  done
  PID=$(tr -d " " < "/proc/$BOX/task/$BOX/children")
  [ "$(readlink "/proc/$PID/exe")" = "$T/prog" ] || fail "$1: no program under unshare ($PID)"
  [ "$(readlink "/proc/$PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] &&
    [ "$(readlink "/proc/$PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
    fail "$1: the program shares cprof's namespaces"
  [ ! -e "/proc/$PID/root$BUILD/libcprof.so" ] || fail "$1: $BUILD is not hidden in the box"
}

# in_box CMD...: CMD in the program's network namespace.
in_box() { nsenter --net="/proc/$PID/ns/net" "$@"; }

start_boxed box
"$CPROF" attach -rate=1 -cpu=box.cpu "$PID" > "$T/attach.out" 2> "$T/attach.err" ||
  { cat "$T/attach.err"; fail "cprof attach to the boxed program failed"; }
URL=$(sed -n 's|/$||p' "$T/attach.out")
case "$URL" in http://127.0.0.1:*/debug/pprof) ;; *) fail "attach printed '$(cat "$T/attach.out")'" ;; esac
grep -q "network namespace" "$T/attach.err" || { cat "$T/attach.err"; fail "attach did not say where the server listens"; }
curl -sf -o /dev/null --max-time 2 "$URL/" && fail "the server listens in cprof's network namespace"
step box go phase2
in_box curl -sf --max-time 60 -o "$T/box.pb.gz" "$URL/heap" || fail "no heap profile from inside the box"
grep TRUTH "$T/plain.out" > "$T/truth"
check_truth "$T/truth" "$T/box.pb.gz" "$T/prog"

"$CPROF" detach "$PID" > "$T/detach.out" 2> "$T/detach.err" ||
  { cat "$T/detach.err"; fail "cprof detach failed"; }
# The CPU profile, written at detach at the path as the target sees it
# (relative to its working directory, D).
cpu=/proc/$PID/root$(readlink "/proc/$PID/cwd")/box.cpu
wait_file "$cpu" 30 || fail "no CPU profile at $cpu"
go tool pprof -top "$T/prog" "$cpu" > "$T/cpu.top" 2>&1 || { cat "$T/cpu.top"; fail "go tool pprof cannot read the CPU profile"; }
grep -qE " spin\$" "$T/cpu.top" || { cat "$T/cpu.top"; fail "no spin in the CPU profile"; }
in_box curl -sf -o /dev/null --max-time 2 "$URL/" && fail "the server still answers after detach"
[ -d "/proc/$PID" ] || fail "the program died at detach"
# Attached again: the runtime already there is found in its memfd.
"$CPROF" attach "$PID" > "$T/attach2.out" 2> "$T/attach2.err" ||
  { cat "$T/attach2.err"; fail "the second attach failed"; }
URL=$(sed -n 's|/$||p' "$T/attach2.out")
in_box curl -sf --max-time 60 -o /dev/null "$URL/heap" || fail "no heap profile after the second attach"
"$CPROF" detach "$PID" > /dev/null 2> "$T/detach2.err" || { cat "$T/detach2.err"; fail "second detach"; }

touch "$D/finish"
wait "$BOX"; rc=$?
[ $rc -eq 0 ] || { cat "$D.err"; fail "box: exit status $rc"; }
same_output box
exit 0
