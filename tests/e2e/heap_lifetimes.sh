#!/bin/sh
# The lifetime profile (CPROF_LIFETIME_PROFILE, src/runtime/lifetimes.h)
# at CPROF_RATE=1 on tests/progs/lifetimes_known.c, whose objects' lifetimes
# the program measures itself (clock_gettime after malloc, before free):
# per allocating function, the count is exact, the label freed= is
# same-thread, other-thread or live as the program frees them, and the
# summed lifetime and the median (from the profile's lifetime histogram
# label) are within 10% of the program's; go tool pprof (1.19 and 1.23)
# reads it, and /debug/pprof/lifetimes serves it. Without CPROF_RECORD the
# profile is empty and says why. The program's output and status are its
# own.
# timeout: 180
. "$(dirname "$0")/http_common.inc"
need_go

cc_prog "$T/prog" "$PROGS/lifetimes_known.c"
"$T/prog" "$T/plain.truth" > "$T/plain.out" || fail "the program fails without cprof"

CPROF_RATE=1 CPROF_RECORD=1m CPROF_LIFETIME_PROFILE="$T/life.pb.gz" LD_PRELOAD="$LIB" \
  "$T/prog" "$T/truth" > "$T/out" 2> "$T/err" || fail "the program exited $?: $(cat "$T/err")"
cmp -s "$T/out" "$T/plain.out" || fail "output differs: $(cat "$T/out")"
[ -s "$T/life.pb.gz" ] || fail "no lifetime profile: $(cat "$T/err")"

# check PROFILE GO: per function "fn freed count sum median" from -raw.
check() {
  "$2" tool pprof -raw "$T/prog" "$1" > "$T/raw" 2> "$T/raw.err" ||
    fail "$2 tool pprof cannot read $1: $(cat "$T/raw.err")"
  python3 - "$T/raw" "$T/truth" <<'PY' || fail "$1 ($2): lifetimes differ from the truth (above)"
import re, sys
raw = open(sys.argv[1]).read()
samples, locs = raw.split("\nLocations\n")[0], raw.split("\nLocations\n")[1]
fn = {}
for m in re.finditer(r"^ +(\d+): 0x\w+ M=\d+ (\S+)", locs, re.M):
    fn[m.group(1)] = m.group(2)
want_freed = {"life_same": "same-thread", "life_other": "other-thread", "life_live": "live"}
got = {}  # fn -> [count, sum, {freed}, [(bin, count)]]
cur = None
for line in samples.split("\n"):
    m = re.match(r"^ +(\d+) +(\d+): ([\d ]+)$", line)
    if m:
        leaf = [fn.get(i, "") for i in m.group(3).split()]
        name = next((f for f in leaf if f in want_freed), None)
        cur = None
        if name:
            g = got.setdefault(name, [0, 0, set(), []])
            g[0] += int(m.group(1)); g[1] += int(m.group(2))
            cur = (g, int(m.group(1)))
        continue
    if cur:
        m = re.match(r"^ +freed:\[(\S+)\]", line)
        if m: cur[0][2].add(m.group(1))
        m = re.match(r"^ +lifetime:\[(\d+) nanoseconds\]", line)
        if m: cur[0][3].append((int(m.group(1)), cur[1]))
bad = False
for line in open(sys.argv[2]):
    _, name, n, total, median = line.split()
    n, total, median = int(n), int(total), int(median)
    if name not in got:
        print(f"{name}: not in the profile"); bad = True; continue
    c, s, freed, bins = got[name]
    # the median bin: its lower edge and the next (a 16th of an octave up)
    bins.sort(); acc = 0
    for lo, k in bins:
        acc += k
        if 2 * acc >= c: break
    mid = lo * 2 ** (1 / 32)
    print(f"{name}: {c} objects, sum {s} ns, median ~{mid:.0f} ns, freed {sorted(freed)}; "
          f"truth {n}, {total}, {median}")
    if c != n: print(f"  count {c} != {n}"); bad = True
    if freed != {want_freed[name]}: print(f"  freed {freed}"); bad = True
    if abs(s - total) > 0.1 * total: print("  sum off by more than 10%"); bad = True
    if abs(mid - median) > 0.1 * median: print("  median off by more than 10%"); bad = True
sys.exit(1 if bad else 0)
PY
}
check "$T/life.pb.gz" go
note "go $(go env GOVERSION): counts exact, freed labels right, sums and medians within 10%"
GO123=/usr/lib/go-1.23/bin/go
if [ -x "$GO123" ]; then
  check "$T/life.pb.gz" "$GO123"
  note "$($GO123 env GOVERSION) reads it alike"
fi

# --- over HTTP, and without the recorder -------------------------------------------
cc_prog "$T/srv" "$PROGS/http_server.c"
start_server srv "$T/srv" CPROF_RECORD=1m CPROF_RATE=1
code=$(curl -s -o "$T/http.pb.gz" -w '%{http_code}' "$URL/debug/pprof/lifetimes")
[ "$code" = 200 ] || fail "/debug/pprof/lifetimes: HTTP $code"
go tool pprof -raw "$T/http.pb.gz" > "$T/http.raw" 2>&1 || fail "go tool pprof cannot read it: $(cat "$T/http.raw")"
grep -q 'freed:\[' "$T/http.raw" || fail "/debug/pprof/lifetimes: no freed labels"
stop_server $PID
CPROF_LIFETIME_PROFILE="$T/off.pb.gz" LD_PRELOAD="$LIB" "$T/prog" "$T/off.truth" > /dev/null ||
  fail "without CPROF_RECORD the program fails"
go tool pprof -raw "$T/off.pb.gz" 2>/dev/null | grep -q 'off (they need CPROF_RECORD)' ||
  fail "without CPROF_RECORD the profile does not say why it is empty"
note "/debug/pprof/lifetimes serves it; without CPROF_RECORD it is empty and says so"
