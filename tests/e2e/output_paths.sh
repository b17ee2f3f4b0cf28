#!/bin/sh
# Output paths are opened as Go's os.Create would, never replaced by
# something else (outfile.h), for every output variable: CPROF_HEAP_PROFILE,
# CPROF_CPU_PROFILE, CPROF_MUTEX_PROFILE, CPROF_BLOCK_PROFILE and
# CPROF_HTTP_ADDR_FILE (and cprof record -o for the first three kinds):
#   a character device (our own mknod'ed null) and a FIFO with a reader are
#     written in place and stay what they are;
#   a FIFO without reader, a directory and a socket are refused with one
#     line saying what the path is;
#   a symlink is followed (the link stays, its target gets the profile; a
#     dangling link gets its target created); a file keeps its mode;
#   temporaries "PATH.tmp.PID.N" of dead processes are removed, those of
#     live ones are left alone.
# The program's stdout and exit status are always those of a plain run.
# timeout: 240
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/known" "$PROGS/heapknown.c"
"$T/known" > "$T/plain.out" 2>/dev/null || fail "plain run failed"

# run VAR PATH [ASSIGNMENT...]: the program with VAR=PATH; $T/err its stderr.
run() {
  var=$1 path=$2; shift 2
  env "$var=$path" "$@" LD_PRELOAD="$LIB" "$T/known" > "$T/out" 2> "$T/err"
  rc=$?
  [ $rc = 0 ] || { cat "$T/err"; fail "$var=$path: exit status $rc"; }
  cmp -s "$T/plain.out" "$T/out" || fail "$var=$path: stdout differs from a plain run"
}

# The variables, each with what makes its profile be written.
vars="CPROF_HEAP_PROFILE CPROF_CPU_PROFILE CPROF_MUTEX_PROFILE CPROF_BLOCK_PROFILE CPROF_HTTP_ADDR_FILE"
extra() {
  case $1 in
    CPROF_HTTP_ADDR_FILE) echo CPROF_HTTP=127.0.0.1:0 ;;
    *) echo CPROF_SEED=1 ;;
  esac
}

# loads VAR FILE: FILE holds what VAR writes.
loads() {
  if [ "$1" = CPROF_HTTP_ADDR_FILE ]; then
    grep -qE '^127\.0\.0\.1:[0-9]+$' "$2" || fail "$1: $2 holds no address: $(cat "$2")"
  else
    "$BUILD/cprof" -raw "$2" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$1: $2 does not load"; }
  fi
}

# refused VAR PATH PHRASE: one stderr line naming PHRASE; PATH unchanged
# (checked by the caller); no temporary left.
refused() {
  run "$1" "$2" $(extra "$1")
  grep -v 'serving /debug/pprof' "$T/err" > "$T/err.1"
  [ "$(wc -l < "$T/err.1")" = 1 ] || { cat "$T/err"; fail "$1=$2: want one line"; }
  grep -q "$3" "$T/err.1" || { cat "$T/err"; fail "$1=$2: no '$3'"; }
  ls "$2".tmp.* > /dev/null 2>&1 && fail "$1=$2: a temporary was left"
  note "$1: $(cat "$T/err.1")"
}

havemknod=0
mknod "$T/null" c 1 3 2>/dev/null && echo probe > "$T/null" 2>/dev/null && havemknod=1
[ $havemknod = 1 ] || note "no mknod here: the device case is skipped"
i=0
for v in $vars; do
  i=$((i+1))
  d=$T/$i; mkdir "$d"
  # a character device: written, still a device
  if [ $havemknod = 1 ]; then
    run $v "$T/null" $(extra $v)
    [ -c "$T/null" ] || fail "$v: the device was replaced"
    [ -s "$T/err" ] && ! grep -q 'serving' "$T/err" && { cat "$T/err"; fail "$v: device: a message"; }
  fi
  # a FIFO with a reader: the profile goes through it
  mkfifo "$d/fifo"
  fifo_reader "$d/fifo" "$d/fifo.got"
  run $v "$d/fifo" $(extra $v)
  wait $reader
  [ -p "$d/fifo" ] || fail "$v: the FIFO was replaced"
  loads $v "$d/fifo.got"
  # a FIFO without a reader: refused, the program not held up
  refused $v "$d/fifo" "FIFO that no process has open for reading"
  [ -p "$d/fifo" ] || fail "$v: the FIFO was replaced"
  # a directory
  mkdir "$d/dir"
  refused $v "$d/dir" "is a directory"
  [ -d "$d/dir" ] && [ -z "$(ls "$d/dir")" ] || fail "$v: the directory changed"
  # a socket
  python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
  refused $v "$d/sock" "is a socket"
  [ -S "$d/sock" ] || fail "$v: the socket was replaced"
  # a symlink to a file: followed, the link stays
  echo old > "$d/target"
  chmod 600 "$d/target"
  ln -s target "$d/link"
  run $v "$d/link" $(extra $v)
  [ -L "$d/link" ] || fail "$v: the symlink was replaced"
  loads $v "$d/target"
  [ "$(stat -c %a "$d/target")" = 600 ] || fail "$v: the file lost its mode"
  # a dangling symlink: its target is created
  ln -s made "$d/dangling"
  run $v "$d/dangling" $(extra $v)
  [ -L "$d/dangling" ] || fail "$v: the dangling symlink was replaced"
  loads $v "$d/made"
  # stale temporaries: a dead process's go, a live one's stay
  dead=$(sh -c 'echo $$')
  touch "$d/p.tmp.$dead.3" "$d/p.tmp.$dead" "$d/p.tmp.$$.1" "$d/p.tmp.x.1"
  run $v "$d/p" $(extra $v)
  loads $v "$d/p"
  [ -e "$d/p.tmp.$dead.3" ] || [ -e "$d/p.tmp.$dead" ] && fail "$v: a dead process's temporary is left"
  [ -e "$d/p.tmp.$$.1" ] && [ -e "$d/p.tmp.x.1" ] || fail "$v: a temporary that is not stale was removed"
done

# A FIFO whose reader leaves before the profile is written: an error line,
# never SIGPIPE (exit 141). Whether the reader is gone by the write is up to
# the scheduler, so several tries; each must leave the program unharmed.
epipe=0
for i in 1 2 3 4 5; do
  rm -f "$T/gone.fifo"; mkfifo "$T/gone.fifo"
  python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY))' "$T/gone.fifo" &
  sleep 0.2
  run CPROF_HEAP_PROFILE "$T/gone.fifo"
  grep -q "the reader of the FIFO or pipe went away" "$T/err" && epipe=$((epipe+1))
  kill $! 2>/dev/null; wait $! 2>/dev/null
done
note "reader gone before the write: $epipe of 5 tries (the others: no reader at the open, or all written)"

# cprof record -o: the same, through the tool (it used to rename onto them)
rec() {
  "$BUILD/cprof" record -o "$1" -- "$T/known" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record -o $1"; }
  cmp -s "$T/plain.out" "$T/out" || fail "record -o $1: stdout differs from a plain run"
}
echo old > "$T/rec.target"
ln -s rec.target "$T/rec.link"
rec "$T/rec.link"
[ -L "$T/rec.link" ] || fail "record: the symlink was replaced"
loads CPROF_HEAP_PROFILE "$T/rec.target"
mkfifo "$T/rec.fifo"
fifo_reader "$T/rec.fifo" "$T/rec.got"
rec "$T/rec.fifo"
wait $reader
[ -p "$T/rec.fifo" ] || fail "record: the FIFO was replaced"
loads CPROF_HEAP_PROFILE "$T/rec.got"
if [ $havemknod = 1 ]; then
  rec "$T/null"
  [ -c "$T/null" ] || fail "record: the device was replaced"
fi
exit 0
