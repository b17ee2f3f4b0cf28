#!/bin/sh
# The threads profile (Go's goroutine profile, for threads) of a program
# whose named threads wait in known functions (tests/progs/threads_known.c),
# written through the API: every thread, and no other, with its name
# (label thread=NAME) and the function it waits in — in the protobuf (go
# tool pprof -traces and -tags, cprof -traces), in the grouped text (which
# go tool pprof reads into the protobuf's numbers) and in the per-thread
# dump (names, states, frames, "created by", and the thread that blocks
# every signal listed without a stack). Also under CPROF_UNWIND=fp, and
# while threads are created and end all the time.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null 2>&1 || skip "skip: go (golang-go) not installed"
CPROF=$BUILD/cprof

cc_prog "$T/tk" "$PROGS/threads_known.c" -DLINKED -I"$TOP/include" -L"$BUILD" -lcprof \
  -Wl,-rpath,"$BUILD"

# traces_by_thread FILE: "NAME fn1 fn2 ..." per sample of a -traces report
# (leaf first), sorted by name.
traces_by_thread() {
  awk '/^-+\+-+$/ { if (name != "") print name stack; name = ""; stack = ""; next }
       $1 == "thread:" { name = $2; next }
       name != "" && NF > 0 { stack = stack " " $NF }
       END { if (name != "") print name stack }' "$1" | sort
}

# expect_threads FILE: the thread -> function table the program guarantees.
expect_threads() {
  f=$1
  [ "$(wc -l < "$f")" -eq 8 ] || { cat "$f"; fail "$f: $(wc -l < "$f") threads, want 8"; }
  for want in "reader-0 block_in_read reader_main" "reader-1 block_in_read reader_main" \
              "reader-2 block_in_read reader_main" "waiter-0 block_in_cond waiter_main" \
              "waiter-1 block_in_cond waiter_main" "spinner spin_forever spinner_main" \
              "masked cprof_thread_signal_blocked" "tk main_waits main"; do
    thr=${want%% *}; fns=${want#* }
    line=$(grep "^$thr " "$f") || { cat "$f"; fail "$f: no thread $thr"; }
    for fn in $fns; do
      echo "$line " | grep -q " $fn " || { cat "$f"; fail "$f: thread $thr is not in $fn"; }
    done
  done
}

run() { # NAME [ENV...]
  name=$1; shift
  mkdir -p "$T/$name"
  env "$@" "$T/tk" "$T/$name" || fail "$name: program failed"
  d=$T/$name

  # --- protobuf: go tool pprof and cprof ----------------------------------------
  go tool pprof -raw "$d/threads.pb.gz" > "$d/raw" 2>&1 || { cat "$d/raw"; fail "$name: unreadable"; }
  grep -q '^PeriodType: goroutine count$' "$d/raw" || fail "$name: period type"
  grep -q '^goroutine/count$' "$d/raw" || fail "$name: sample type"
  go tool pprof -traces "$d/threads.pb.gz" > "$d/traces" 2>/dev/null
  traces_by_thread "$d/traces" > "$d/go.threads"
  expect_threads "$d/go.threads"
  go tool pprof -tags "$d/threads.pb.gz" 2>/dev/null | grep -q '^ *thread: Total 8' ||
    fail "$name: -tags does not count 8 threads"
  if [ -x "$CPROF" ]; then
    "$CPROF" -traces "$d/threads.pb.gz" > "$d/ctraces" 2>&1 || { cat "$d/ctraces"; fail "$name: cprof -traces"; }
    traces_by_thread "$d/ctraces" > "$d/cprof.threads"
    expect_threads "$d/cprof.threads"
  fi

  # --- debug=1: Go's grouped text, read by pprof into the same counts -----------
  head -n1 "$d/threads.txt" | grep -qx 'goroutine profile: total 8' ||
    fail "$name: text header \"$(head -n1 "$d/threads.txt")\""
  grep -q '^# labels: {"thread":"reader-0"}$' "$d/threads.txt" || fail "$name: text labels"
  grep -Eq '^#	0x[0-9a-f]+	block_in_read\+0x[0-9a-f]+	' "$d/threads.txt" ||
    fail "$name: text frame lines"
  pprof_flat_dwarf goroutine "$d/threads.pb.gz" > "$d/flat.proto"
  pprof_flat_dwarf goroutine "$d/threads.txt" "$T/tk" > "$d/flat.text"
  cmp -s "$d/flat.proto" "$d/flat.text" ||
    { diff "$d/flat.proto" "$d/flat.text"; fail "$name: text and protobuf differ"; }

  # --- debug=2: one block per thread ----------------------------------------------
  dump=$d/threads.dump
  [ "$(grep -c '^thread [0-9]* ".*" \[.*\]:$' "$dump")" -eq 8 ] || { cat "$dump"; fail "$name: dump headers"; }
  head -n1 "$dump" | grep -q '^thread [0-9]* "tk" \[running' || fail "$name: the caller is not first"
  # the frames of a thread: its block, from its header to the blank line
  block() { awk -v n="\"$1\"" '$1 == "thread" && $3 == n { on = 1 } on && /^$/ { exit } on' "$dump"; }
  for t in reader-0 reader-1 reader-2 waiter-0 waiter-1; do
    block $t | head -n1 | grep -Eq '\[sleeping(, .*)?\]:$' || { block $t; fail "$name: $t not sleeping"; }
  done
  block spinner | head -n1 | grep -q '\[running' || { block spinner; fail "$name: spinner not running"; }
  block reader-1 | grep -Eq '^block_in_read\+0x[0-9a-f]+$' || { block reader-1; fail "$name: reader frames"; }
  block reader-1 | grep -Eq '^	.*/tk\+0x[0-9a-f]+$' || { block reader-1; fail "$name: frame objects"; }
  block reader-1 | grep -Eq '^created by spawn_readers\+0x[0-9a-f]+$' || { block reader-1; fail "$name: created by"; }
  block waiter-0 | grep -Eq '^created by spawn_waiters\+' || fail "$name: waiter created by"
  block masked | grep -Eq '^\(no stack: the thread blocks signal [0-9]+\)$' ||
    { block masked; fail "$name: masked thread"; }
  note "$name: 8 threads, names and functions in proto, text and dump"
}

run linked
run linked_fp CPROF_UNWIND=fp
# Taking it again and again: the signals keep being answered.
mkdir -p "$T/again"
for i in 1 2 3 4 5; do "$T/tk" "$T/again" || fail "again: run $i"; done

# While threads come and go: every profile completes, and at the end the
# 200 idle threads are all there, each with its stack.
cc_prog "$T/storm" "$PROGS/threads_storm.c" -I"$TOP/include" -L"$BUILD" -lcprof -Wl,-rpath,"$BUILD"
timeout -k 5 100 "$T/storm" "$T/storm.txt" > "$T/storm.out" || fail "storm: failed or hung"
n=$(sed -n 's/^goroutine profile: total //p' "$T/storm.txt")
[ "${n:-0}" -ge 201 ] || fail "storm: $n threads listed"
grep -q '^200 @ ' "$T/storm.txt" || { head -n 20 "$T/storm.txt"; fail "storm: the 200 idle threads are not one group"; }
note "storm: $(cat "$T/storm.out")"
exit 0
