#!/bin/sh
# CPROF_DUMP_SIGNAL=USR2: each kill -USR2 makes the dump thread write every
# configured profile (heap and peak here) as a new numbered file, soon after
# the signal; the program's own USR2 handler still runs each time, it reads
# back its own action (not cprof's), and its output and exit code are what
# they are without cprof. Then: a signal with no handler of the program's
# does not end it (USR2's default action), cprof takes it alone, and a
# read it interrupts goes on (no EINTR the program does not expect); a
# forked worker dumps its own heap on its own signal.
# timeout: 120
. "$(dirname "$0")/../lib.sh"

cc_prog "$T/prog" "$PROGS/dump_signal.c"
"$T/prog" 0 > "$T/plain.out" || fail "program failed without cprof"

# wait_file PATH: until it exists (written whole: the writer renames it into place).
wait_file() { wait_for -e "$1" 60 "no $1 after 60 s"; }
# mtime_ns PATH: when its writer finished it.
mtime_ns() { stat -c %.9Y "$1" | tr -d .; }

mkdir "$T/d"
CPROF_RATE=1 CPROF_DUMP_SIGNAL=USR2 CPROF_HEAP_PROFILE="$T/d/heap.pb.gz" \
  CPROF_PEAK_PROFILE="$T/d/peak.pb.gz" LD_PRELOAD="$LIB" "$T/prog" 2 "$T/stop" > "$T/out" 2> "$T/err" &
pid=$!
i=0
until grep -q ready "$T/out"; do
  i=$((i + 1)); [ $i -gt 6000 ] && fail "the program never got ready"
  sleep 0.01
done
# Each signal, then the dump it caused: the files are numbered by the
# runtime's file sequence, so the n-th dump's is found by count.
for n in 1 2; do
  t0=$(date +%s%N)
  kill -USR2 $pid
  i=0
  until [ "$(ls "$T/d" | grep -c '^heap\.[0-9]*\.pb\.gz$')" -ge $n ] &&
        [ "$(ls "$T/d" | grep -c '^peak\.[0-9]*\.pb\.gz$')" -ge $n ]; do
    i=$((i + 1)); [ $i -gt 6000 ] && fail "signal $n: no dump after 60 s: $(ls "$T/d"); $(cat "$T/err")"
    sleep 0.01
  done
  f=$(ls "$T/d" | grep '^heap\.[0-9]*\.pb\.gz$' | sort -t. -k2 -n | tail -n1)
  g=$(ls "$T/d" | grep '^peak\.[0-9]*\.pb\.gz$' | sort -t. -k2 -n | tail -n1)
  t1=$(mtime_ns "$T/d/$f"); t2=$(mtime_ns "$T/d/$g")
  [ "$t2" -gt "$t1" ] && t1=$t2
  ms=$(( (t1 - t0) / 1000000 ))
  note "signal $n: $f and $g complete $ms ms after the signal"
  # The bound the issue asks, 200 ms, with room for a loaded 2-core machine;
  # a dump that waited for a poll or the rate limit (1 s) would exceed it.
  [ "$ms" -lt 900 ] || fail "signal $n: the dump took $ms ms"
  [ $n = 1 ] || [ "$ms" -lt "$best" ] && best=$ms
  v=$(pprof_flat inuse_space "$T/d/$f" | awk '$1=="hold_three_mib" {print $2}')
  [ "$v" = 3145728 ] || fail "signal $n: $f has hold_three_mib inuse ${v:-none}, not 3145728"
  [ $n = 1 ] && sleep 1.1 # past the dump rate limit (DUMP_MIN_GAP_NS), so the next is not delayed
done
[ "$best" -lt 200 ] || fail "neither dump was complete within 200 ms of its signal (best $best ms)"
touch "$T/stop"
wait $pid || fail "the program failed (exit $?): $(cat "$T/out" "$T/err")"
printf 'ready\nold action default\naction now mine\nhandled 2\n' > "$T/want"
cmp -s "$T/want" "$T/out" || fail "program output: $(cat "$T/out")"
[ "$(ls "$T/d" | grep -c '^heap\.[0-9]*\.pb\.gz$')" = 2 ] || fail "not two heap dumps: $(ls "$T/d")"
[ -s "$T/d/heap.pb.gz" ] && [ -s "$T/d/peak.pb.gz" ] || fail "no exit profiles: $(ls "$T/d")"
[ "$(grep -c '^cprof: dump [0-9]* (signal 12' "$T/err")" = 2 ] || fail "not two announcements: $(cat "$T/err")"
ls "$T/d" | grep -q tmp && fail "temporary files left: $(ls "$T/d")"

# Without a handler of the program's: USR2 would end it; under cprof it
# dumps. Then the program sets one with signal() (glibc's calls its own
# sigaction): it reads back the default action, and its handler runs; one
# with SA_RESETHAND runs once, then the program's action is the default.
cat > "$T/nohandler.c" <<'C'
#include <signal.h>
#include <stdio.h>
static volatile sig_atomic_t got;
static void h(int sig) { (void)sig; got++; }
int main(void) {
  raise(SIGUSR2);
  struct sigaction now;
  sigaction(SIGUSR2, NULL, &now);
  printf("%s\n", now.sa_handler == SIG_DFL ? "default" : "other");
  printf("%s\n", signal(SIGUSR2, h) == SIG_DFL ? "default" : "other");
  raise(SIGUSR2);
  printf("got %d\n", (int)got);
  struct sigaction once = {0};
  once.sa_handler = h;
  once.sa_flags = SA_RESETHAND;
  sigaction(SIGUSR2, &once, NULL);
  raise(SIGUSR2); /* h, then the default action is the program's again */
  raise(SIGUSR2); /* the default: cprof's alone, not the end of the program */
  sigaction(SIGUSR2, NULL, &now);
  printf("got %d, then %s\n", (int)got, now.sa_handler == SIG_DFL ? "default" : "other");
  return 0;
}
C
cc_prog "$T/nohandler" "$T/nohandler.c"
mkdir "$T/e"
out=$(CPROF_DUMP_SIGNAL=SIGUSR2 CPROF_HEAP_PROFILE="$T/e/heap.pb.gz" LD_PRELOAD="$LIB" "$T/nohandler" 2> "$T/err2") ||
  fail "USR2 without a handler ended the program: $(cat "$T/err2")"
[ "$out" = "$(printf 'default\ndefault\ngot 1\ngot 2, then default')" ] || fail "the program printed: $out"
[ -s "$T/e/heap.pb.gz" ] || fail "no exit profile"

# A read that the signal interrupts, without a handler of the program's:
# restarted, as when the signal was ignored or not sent.
cat > "$T/reader.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  char c;
  ssize_t n = read(0, &c, 1);
  printf("read %zd%s%s\n", n, n < 0 ? " " : "", n < 0 ? strerror(errno) : "");
  return n == 1 ? 0 : 1;
}
C
cc_prog "$T/reader" "$T/reader.c"
mkfifo "$T/fifo"
mkdir "$T/g"
CPROF_DUMP_SIGNAL=USR2 CPROF_HEAP_PROFILE="$T/g/heap.pb.gz" LD_PRELOAD="$LIB" "$T/reader" \
  < "$T/fifo" > "$T/r.out" 2> "$T/r.err" &
rpid=$!
exec 3> "$T/fifo" # opens once the reader has it open
i=0
until [ "$(cut -d' ' -f1 "/proc/$rpid/syscall" 2>/dev/null)" = 0 ]; do # blocked in read(2)
  i=$((i + 1)); [ $i -gt 6000 ] && fail "the reader never blocked in read"
  sleep 0.01
done
kill -USR2 $rpid
wait_file "$T/g/heap.0.pb.gz"
trap '' PIPE # a reader gone (its read failed) must fail below, not kill this shell
printf x >&3 2> /dev/null
exec 3>&-
wait $rpid || fail "the interrupted read failed: $(cat "$T/r.out" "$T/r.err")"
[ "$(cat "$T/r.out")" = "read 1" ] || fail "reader: $(cat "$T/r.out")"

# A forked worker: its own dump thread, its own heap (%p apart).
cat > "$T/worker.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void *volatile kept;
__attribute__((noinline)) static void hold_worker(void) { kept = malloc(2 << 20); memset(kept, 1, 2 << 20); }
int main(int argc, char **argv) {
  (void)argc;
  pid_t pid = fork();
  if (pid == 0) {
    hold_worker();
    printf("%d\n", (int)getpid());
    fflush(stdout);
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 6000 && access(argv[1], F_OK) != 0; i++) nanosleep(&ts, NULL);
    return 0;
  }
  int st;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
C
cc_prog "$T/worker" "$T/worker.c"
mkdir "$T/f"
CPROF_RATE=1 CPROF_DUMP_SIGNAL=USR2 CPROF_HEAP_PROFILE="$T/f/heap.%p.pb.gz" LD_PRELOAD="$LIB" \
  "$T/worker" "$T/wstop" > "$T/w.out" 2> "$T/w.err" &
wpid=$!
wait_for -s "$T/w.out" 60 "the worker never started"
child=$(cat "$T/w.out")
kill -USR2 "$child"
i=0
until ls "$T/f" | grep -q "^heap\.$child\.[0-9]*\.pb\.gz\$"; do
  i=$((i + 1)); [ $i -gt 3000 ] && fail "forked worker: no dump: $(ls "$T/f"); $(cat "$T/w.err")"
  sleep 0.01
done
f=$(ls "$T/f" | grep "^heap\.$child\.[0-9]*\.pb\.gz\$")
touch "$T/wstop"
wait $wpid || fail "the worker program failed: $(cat "$T/w.err")"
v=$(pprof_flat inuse_space "$T/f/$f" | awk '$1=="hold_worker" {print $2}')
[ "$v" = 2097152 ] || fail "forked worker: $f has hold_worker ${v:-none}"
note "forked worker $child: $f with hold_worker $v"
exit 0
