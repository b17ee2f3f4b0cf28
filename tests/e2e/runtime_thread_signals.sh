#!/bin/sh
# cprof's own threads block every signal: a signal sent to the process is
# then taken by one of the program's threads, whose handlers expect them,
# never by cprof's (which would run the program's handler there, or stop
# a snapshot or trace write midway). The program (tests/progs/own_threads.c)
# runs with each feature that starts a thread — heap snapshots, the CPU
# profile's drain, the trace's writer, the HTTP server, dumps on a signal,
# push — and each thread named cprof-* shows, in /proc, signals 1-31
# blocked but SIGKILL and SIGSTOP (which cannot be). The snapshot thread
# once did not.
# timeout: 60
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/ot" "$PROGS/own_threads.c"
mkfifo "$T/in"
CPROF_HEAP_PROFILE="$T/h.pb.gz" CPROF_HEAP_PROFILE_EVERY=60 CPROF_CPU_PROFILE="$T/c.pb.gz" \
  CPROF_TRACE="$T/t.trace" CPROF_HTTP=127.0.0.1:0 CPROF_DUMP_SIGNAL=USR2 \
  CPROF_PUSH=http://127.0.0.1:9/ingest CPROF_PUSH_INTERVAL=60 \
  LD_PRELOAD="$LIB" "$T/ot" < "$T/in" > "$T/out" 2> "$T/err" &
prog=$!
exec 3> "$T/in" # the program's stdin, open until the checks are done
wait_for -s "$T/out" 10 "the program did not start"
pid=$(awk '$1 == "ready" { print $2 }' "$T/out")
[ -n "$pid" ] || fail "the program wrote $(cat "$T/out")"

want="cprof-cpu cprof-dump cprof-http cprof-push cprof-push-tx cprof-snapshot cprof-trace"
names() { for t in /proc/$pid/task/*; do cat "$t/comm"; done 2> /dev/null | grep '^cprof-' | sort -u | tr '\n' ' '; }
i=0
until [ "$(names)" = "$want " ]; do
  i=$((i + 1)); [ $i -gt 1000 ] && fail "cprof's threads: $(names), not $want"
  sleep 0.01
done
for t in /proc/$pid/task/*; do
  name=$(cat "$t/comm")
  case $name in cprof-*) ;; *) continue ;; esac
  blk=$(awk '$1 == "SigBlk:" { print $2 }' "$t/status")
  # signals 1-31 are bits 0-30; KILL (9) and STOP (19) cannot be blocked
  python3 -c 'import sys; m = int(sys.argv[1], 16); sys.exit((m & 0x7ffbfeff) != 0x7ffbfeff)' "$blk" ||
    fail "$name (${t##*/}) leaves signals unblocked: SigBlk $blk"
  note "$name: SigBlk $blk"
done
exec 3>&-
wait $prog || { cat "$T/err"; fail "the program failed"; }
[ "$(tail -n 1 "$T/out")" = done ] || fail "the program wrote $(cat "$T/out")"
exit 0
