#!/bin/sh
# cprof's thread wrapper (cprof_thread_start, through which it sees every
# created thread start and end) leaves no frame at the root of the
# thread's stacks: below the start routine comes the C library's
# start_thread, as without cprof (tests/progs/threads_root.c), with each
# unwinder.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
cc_prog "$T/root" "$PROGS/threads_root.c" -fno-omit-frame-pointer
for unwind in cfi libunwind fp; do
  timeout 60 env CPROF_UNWIND=$unwind CPROF_RATE=1 CPROF_HEAP_PROFILE="$T/$unwind.pb.gz" \
    LD_PRELOAD="$LIB" "$T/root" > "$T/out"
  rc=$?
  [ $rc = 0 ] || fail "$unwind: exit status $rc"
  [ "$(cat "$T/out")" = "threads 2" ] || { cat "$T/out"; fail "$unwind: the program's output"; }
  "$CPROF" -traces -focus=worker_alloc "$T/$unwind.pb.gz" > "$T/traces" 2>&1 ||
    { cat "$T/traces"; fail "$unwind: cprof -traces"; }
  # The two threads' stacks: one trace of 2MB, leaf worker_alloc.
  awk '/^-+\+-+$/ { if (n) print s; s = ""; n = 0; next }
       /^ *bytes:/ { next }
       NF { f = $NF; if ($NF == "(inline)") f = $(NF-1); s = s " " f; n++ }
       END { if (n) print s }' "$T/traces" | grep worker_alloc > "$T/stacks"
  [ "$(grep -c . "$T/stacks")" = 1 ] || { cat "$T/traces"; fail "$unwind: want one stack for worker_alloc"; }
  grep -q '2MB' "$T/traces" || { cat "$T/traces"; fail "$unwind: worker_alloc's 2MB"; }
  if grep -q cprof_thread_start "$T/stacks"; then cat "$T/traces"; fail "$unwind: cprof's wrapper in the stack"; fi
  case "$unwind" in
    fp) want=" worker_alloc worker" ;; # may end at the first frame without a frame pointer
    *) want=" worker_alloc worker start_thread" ;;
  esac
  case "$(cat "$T/stacks")" in
    "$want"*) ;;
    *) cat "$T/traces"; fail "$unwind: stack is '$(cat "$T/stacks")', want '$want...'" ;;
  esac
  note "$unwind:$(cat "$T/stacks")"
done
