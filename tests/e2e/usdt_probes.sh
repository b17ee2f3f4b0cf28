#!/bin/sh
# The otel_memory USDT probes (src/runtime/usdt.h): readelf -n shows
# otel_memory:alloc with three 8-byte arguments and otel_memory:free with
# one, each behind a semaphore; only the sampled path (heap_record_alloc,
# heap_record_free) reads the semaphores, never the hooks' fast path; and,
# where bpftrace can attach uprobes, the alloc probes' weighted_bytes over a
# run add up to the heap profile's alloc_space within 1% (the program
# allocates only after the tracer said it is attached), the free probes fire,
# and the program's own output and status are unchanged.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
command -v readelf >/dev/null 2>&1 || skip "skip: readelf (binutils) not installed"

# --- the notes --------------------------------------------------------------------
readelf -n "$LIB" > "$T/notes" || fail "readelf -n $LIB failed"
python3 - "$T/notes" <<'PY' || fail "stapsdt notes wrong (above)"
import re, sys
text = open(sys.argv[1]).read()
probes = {}
for m in re.finditer(r'Provider: (\S+)\s+Name: (\S+)\s+Location: (\S+), Base: (\S+), Semaphore: (\S+)\s+Arguments: ([^\n]*)', text):
    probes[(m.group(1), m.group(2))] = (int(m.group(5), 16), m.group(6).split())
want = {("otel_memory", "alloc"): 3, ("otel_memory", "free"): 1}
bad = False
for key, n in want.items():
    if key not in probes:
        print(f"no stapsdt note for {key[0]}:{key[1]}; notes: {sorted(probes)}"); bad = True; continue
    sem, args = probes[key]
    if sem == 0:
        print(f"{key[1]}: no semaphore"); bad = True
    # 8@: unsigned 64-bit (ptr, size, weighted_bytes; ptr)
    if len(args) != n or not all(a.startswith("8@") for a in args):
        print(f"{key[1]}: arguments {args}, want {n} of 8@"); bad = True
sys.exit(1 if bad else 0)
PY
note "notes: otel_memory:alloc (3 x 8@), otel_memory:free (1 x 8@), semaphores set"

# --- only the sampled path reads the semaphores -----------------------------------
if command -v objdump >/dev/null 2>&1; then
  readers=$(objdump -d "$LIB" | awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /<otel_memory_(alloc|free)_semaphore>/ { print fn }' | sort -u | tr '\n' ' ')
  # heap.c's sampled path: its entry points, and record_sampled (shared with the
  # custom-heap API, customheap.c), which fires the alloc probe
  [ -n "$readers" ] && [ -z "$(echo "$readers" | tr ' ' '\n' | grep -v '^$' |
    grep -vx '<heap_record_alloc>:' | grep -vx '<heap_record_free>:' | grep -vx '<record_sampled>:')" ] ||
    fail "the semaphores are read outside the sampled path: $readers"
  note "semaphores read only on the sampled path (heap_record_alloc, heap_record_free, record_sampled)"
fi

# --- a tracer: weighted_bytes against alloc_space ---------------------------------
command -v bpftrace >/dev/null 2>&1 || skip "skip: the notes are right; bpftrace not installed, no tracer to attach"
[ -d /sys/bus/event_source/devices/uprobe ] || skip "skip: the notes are right; no uprobe PMU in this kernel"
timeout 30 bpftrace -e 'BEGIN { exit(); }' > "$T/bt0" 2>&1 ||
  skip "skip: the notes are right; bpftrace cannot load a program here: $(tail -1 "$T/bt0")"

cc_prog "$T/prog" "$PROGS/usdt_heap.c"
mkfifo "$T/in"
CPROF_RATE=4096 CPROF_HEAP_PROFILE="$T/heap.pb.gz" LD_PRELOAD="$LIB" "$T/prog" < "$T/in" > "$T/prog.out" &
PID=$!
exec 7> "$T/in" # the program waits for its line
i=0
until grep -q '^ready$' "$T/prog.out"; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "the program never said ready"
  sleep 0.1
done
# The library's path as the program maps it (the tracer resolves it).
cat > "$T/probes.bt" <<EOB
usdt:$LIB:otel_memory:alloc { @weighted = sum(arg2); @allocs = count(); }
usdt:$LIB:otel_memory:free { @frees = count(); }
BEGIN { printf("attached\n"); }
EOB
timeout 150 bpftrace -p $PID "$T/probes.bt" > "$T/bt.out" 2> "$T/bt.err" &
BT=$!
i=0
until grep -q '^attached$' "$T/bt.out"; do
  if ! kill -0 $BT 2>/dev/null; then
    exec 7>&-; wait $PID
    skip "skip: the notes are right; bpftrace could not attach: $(grep -m1 ERROR "$T/bt.err" "$T/bt.out")"
  fi
  i=$((i + 1)); [ $i -gt 1200 ] && fail "bpftrace never attached"
  sleep 0.1
done
echo go >&7
exec 7>&-
rc=0
wait $PID || rc=$?
[ $rc -eq 0 ] || fail "the program exited with $rc under the tracer"
grep -qx 'allocated 20000 blocks, 55014000 bytes' "$T/prog.out" || fail "program output: $(cat "$T/prog.out")"
# bpftrace -p ends with its process and prints its maps then.
i=0
while kill -0 $BT 2>/dev/null; do
  i=$((i + 1)); [ $i -eq 100 ] && kill -INT $BT
  [ $i -gt 600 ] && fail "bpftrace did not end"
  sleep 0.1
done
wait $BT || true
weighted=$(sed -n 's/^@weighted: \([0-9]*\)$/\1/p' "$T/bt.out")
allocs=$(sed -n 's/^@allocs: \([0-9]*\)$/\1/p' "$T/bt.out")
frees=$(sed -n 's/^@frees: \([0-9]*\)$/\1/p' "$T/bt.out")
[ -n "$weighted" ] && [ -n "$allocs" ] && [ -n "$frees" ] || fail "no sums from bpftrace: $(cat "$T/bt.out" "$T/bt.err")"
set -- $(raw_totals "$T/heap.pb.gz")
alloc_space=$2
# At 4096 bytes per sample, 55 MB give about 13000 samples; every sample is
# in both sums, but for those taken before the tracer attached (stdio's
# buffer: a few KB) and the integer rounding of each weight (< 1 byte each).
awk -v w="$weighted" -v a="$alloc_space" 'BEGIN { d = w - a; if (d < 0) d = -d; exit !(a > 0 && d <= a / 100) }' ||
  fail "weighted_bytes sum $weighted vs alloc_space $alloc_space: more than 1% apart"
[ "$frees" -gt 0 ] && [ "$frees" -lt "$allocs" ] || fail "free probes: $frees for $allocs allocations"
note "bpftrace: $allocs alloc probes, weighted_bytes $weighted vs alloc_space $alloc_space; $frees free probes"
exit 0
