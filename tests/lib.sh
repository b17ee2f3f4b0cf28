# lib.sh — shared helpers for the end-to-end tests (sourced, POSIX sh).
# Each test gets a scratch directory $T, removed at exit.
set -u
TOP=${CPROF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${CPROF_BUILD:-$TOP/build}
LIB=${CPROF_LIB:-$BUILD/libcprof.so} # runtime_ubsan.sh points it at the UBSan build
PROGS=$TOP/tests/progs
T=$(mktemp -d "${TMPDIR:-/tmp}/cprof-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
trap 'exit 143' TERM INT HUP # so that the EXIT trap runs (a timeout's SIGTERM)
export GOCACHE=${GOCACHE:-${TMPDIR:-/tmp}/cprof-gocache} GOFLAGS=-mod=mod GO111MODULE=off

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
note() { echo "# $*"; }

# HEX: an awk function hex(S) for "awk \"$HEX\"'...'" (Debian's awk is
# mawk, without strtonum); doubles hold the 48-bit addresses exactly.
HEX='function hex(s,   i, n) { s = tolower(s); sub(/^0x/, "", s); n = 0
  for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }'

# fifo_reader FIFO OUT: a reader of FIFO in the background (its pid in
# READER) that has it open when this returns — so that a program started
# next finds a reader (`cat FIFO &` may not have opened it yet, and the
# program is then refused, and cat waits forever) — and copies to OUT what
# the first writer writes, until that writer closes it (at most 120 s;
# exit 1 if nothing came).
# wait_for FLAG PATH SECONDS WHAT: until `test FLAG PATH` holds (-e, -s...),
# checked every 10 ms; fails with WHAT after SECONDS.
wait_for() {
  _i=0
  until [ "$1" "$2" ]; do
    _i=$((_i + 1)); [ $_i -gt $(($3 * 100)) ] && fail "$4"
    sleep 0.01
  done
}

fifo_reader() {
  rm -f "$2.ready"
  python3 - "$1" "$2" <<'PY' &
import os, select, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[2] + ".ready", "w").close()
got, t0 = b"", time.time()
while time.time() - t0 < 120:
    select.select([fd], [], [], 0.05)
    try:
        b = os.read(fd, 65536)
    except BlockingIOError:
        continue  # a writer, no data yet
    if b:
        got += b
    elif got:
        break  # the writer closed it
    else:
        time.sleep(0.01)  # no writer yet
open(sys.argv[2], "wb").write(got)
sys.exit(0 if got else 1)
PY
  READER=$!
  wait_for -e "$2.ready" 60 "fifo_reader: $1 not opened"
}

# gen_inputs DIR: the real programs' inputs, made by the tests: DIR/data.json
# (5000 records for jq) and DIR/script.sql (4000 rows and three queries for
# sqlite3).
gen_inputs() {
  awk 'BEGIN { printf "["
    for (i = 0; i < 5000; i++) { if (i) printf ","
      printf "{\"id\":%d,\"name\":\"n%d\",\"tags\":[\"a\",\"b%d\"],\"v\":%d}", i, i, i % 7, i % 13 }
    print "]" }' > "$1/data.json"
  awk 'BEGIN { q = sprintf("%c", 39)
    print "create table t(id integer primary key, name text, v real);"
    print "create index t_v on t(v);"
    print "begin;"
    for (i = 0; i < 4000; i++) printf "insert into t(name, v) values(%sn%d%s, %d.5);\n", q, i, q, i % 97
    print "commit;"
    print "select count(*), sum(v), max(name) from t where v > 10;"
    print "select name from t order by v desc, id limit 3;"
    print "select v, count(*) from t group by v order by 2 desc, 1 limit 2;" }' > "$1/script.sql"
}

# cc_prog OUT SRC [FLAGS...]: builds a test program with DWARF.
cc_prog() {
  out=$1; src=$2; shift 2
  case "$src" in
    *.cc) g++ -g -O1 -o "$out" "$src" "$@" -lpthread ;;
    *) gcc -std=gnu11 -g -O1 -o "$out" "$src" "$@" -lpthread ;;
  esac || fail "cannot build $src"
}

# pprof_flat INDEX PROFILE [BINARY]: "name flat" per node of go tool pprof -top,
# exact (bytes in B, counts plain). PPROF="$BUILD/cprof" asks cprof's tool instead.
pprof_flat() {
  idx=$1; prof=$2; shift 2
  ${PPROF:-go tool pprof} -top -unit=byte -nodefraction=0 -nodecount=100000 -sample_index="$idx" \
    "$@" "$prof" 2>/dev/null |
    awk 'started { v=$1; sub(/(B|byte)$/, "", v); name=$6; for (i=7;i<=NF;i++) name=name" "$i; print name, v }
         /^ *flat  flat%/ { started=1 }'
}

# pprof_flat_dwarf INDEX PROFILE [BINARY]: "name flat" per leaf function as
# the binaries' DWARF names it (go tool pprof -raw), sorted; a location named
# only by the runtime's symbol tables (no line) counts as "[object]", as go
# tool pprof shows a text form's unnamed frames. For two forms of a profile
# taken apart in time (a thread may have moved within its function), or
# a text form and its protobuf.
pprof_flat_dwarf() {
  idx=$1; prof=$2; shift 2
  go tool pprof -raw "$@" "$prof" 2>/dev/null | awk -v idx="$idx" '
    /^Samples:/ { sec = "s"; hdr = 1; next }
    /^Locations/ { sec = "l"; next }
    /^Mappings/ { sec = "m"; next }
    sec == "s" && hdr { for (i = 1; i <= NF; i++) { t = $i; sub(/\/.*/, "", t); if (t == idx) col = i }; hdr = 0; next }
    sec == "s" && /: / { split($0, a, ": "); split(a[1], v, " "); split(a[2], ids, " "); val[++n] = v[col]; leaf[n] = ids[1]; next }
    sec == "l" && /^ +[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); m = $3; sub(/^M=/, "", m); map[id] = m
      fn[id] = (NF >= 5 && $5 != ":0") ? $4 : "" }
    sec == "m" && /^[0-9]+: / { id = $1; sub(/:$/, "", id); f = $3; sub(/.*\//, "", f); obj[id] = f }
    END { for (i = 1; i <= n; i++) { l = leaf[i]; name = fn[l] != "" ? fn[l] : "[" obj[map[l]] "]"; flat[name] += val[i] }
          for (k in flat) print k, flat[k] }' | sort
}

# check_truth TRUTHFILE PROFILE [BINARY]: every "TRUTH fn ao ab io ib" line
# must equal go tool pprof's flat values for fn in the four sample types.
check_truth() {
  truthf=$1; prof=$2; shift 2
  i=2
  for idx in alloc_objects alloc_space inuse_objects inuse_space; do
    pprof_flat "$idx" "$prof" "$@" > "$T/flat.$idx"
    awk -v col=$i -v idx=$idx 'NR==FNR { got[$1]=$2; next }
      $1=="TRUTH" { want=$(col+1); have=($2 in got) ? got[$2] : 0
        if (have != want) { printf "%s %s: profile %s, truth %s\n", $2, idx, have, want; bad=1 } }
      END { exit bad }' "$T/flat.$idx" "$truthf" || { cat "$T/flat.$idx"; fail "$prof: numbers differ from the truth"; }
    i=$((i+1))
  done
}

# check_peak OUT PEAK LABEL [BINARY]: the program's "PEAK name objects bytes"
# lines in OUT against the peak profile's flat inuse objects and bytes.
check_peak() {
  out=$1; prof=$2; label=$3; shift 3
  pprof_flat inuse_objects "$prof" "$@" > "$T/flat.o"
  pprof_flat inuse_space "$prof" "$@" > "$T/flat.b"
  awk -v label="$label" 'FILENAME ~ /flat.o$/ { o[$1] = $2; next }
    FILENAME ~ /flat.b$/ { b[$1] = $2; next }
    $1 == "PEAK" { go = ($2 in o) ? o[$2] : 0; gb = ($2 in b) ? b[$2] : 0
      if (go != $3 || gb != $4) { printf "%s peak %s: profile %s objects %s B, truth %s / %s\n", label, $2, go, gb, $3, $4; bad = 1 } }
    END { exit bad }' "$T/flat.o" "$T/flat.b" "$out" || fail "$label: the peak profile differs from the truth"
}

# raw_totals PROFILE: the first four sample values ("alloc_objects alloc_space
# inuse_objects inuse_space" in a heap profile) summed over the samples of
# go tool pprof -raw; fails if pprof cannot load it.
raw_totals() {
  go tool pprof -symbolize=none -raw "$1" > "$T/raw" 2> "$T/raw.err" || { cat "$T/raw.err"; fail "$1: go tool pprof cannot load it"; }
  awk '/^ *-?[0-9]+( +-?[0-9]+)+: / { sub(/:.*/, ""); a+=$1; b+=$2; c+=$3; d+=$4 }
       END { printf "%.0f %.0f %.0f %.0f\n", a, b, c, d }' "$T/raw"
}

# check_sampled SITES PROFILE SEED [BINARY]: a heap profile taken at the
# default rate (512 KiB) from tests/progs/heapsampled.c, whose "SITE fn n
# size kept" lines are in SITES: each site's alloc_space and inuse_space
# within four standard errors of the truth (n objects of size s sampled
# with probability p = 1 - exp(-s/R): sd s*sqrt(n(1-p)/p)), an object far
# larger than the rate exactly.
check_sampled() {
  sites=$1; prof=$2; seed=$3; shift 3
  pprof_flat alloc_space "$prof" "$@" > "$T/alloc"
  pprof_flat inuse_space "$prof" "$@" > "$T/inuse"
  pprof_flat inuse_objects "$prof" "$@" > "$T/inuse_obj"
  awk -v R=524288 -v seed=$seed '
    FILENAME ~ /alloc$/ { alloc[$1]=$2; next }
    FILENAME ~ /inuse$/ { inuse[$1]=$2; next }
    FILENAME ~ /inuse_obj$/ { iobj[$1]=$2; next }
    $1 == "SITE" {
      fn=$2; n=$3; s=$4; kept=$5; p=1-exp(-s/R)
      if (s >= 40*R) {   # exact: one object, its size
        if (inuse[fn] != s*kept || iobj[fn] != kept) { printf "seed %d %s: inuse %s B / %s objects, want exactly %d / %d\n", seed, fn, inuse[fn], iobj[fn], s*kept, kept; bad=1 }
        next
      }
      split("alloc inuse", kinds, " ")
      for (k=1; k<=2; k++) {
        cnt = (k==1) ? n : kept; got = (k==1) ? alloc[fn] : inuse[fn]; truth = cnt*s
        if (cnt == 0) { if (got+0 != 0) { printf "seed %d %s %s: %s, want 0\n", seed, fn, kinds[k], got; bad=1 }; continue }
        sd = s*sqrt(cnt*(1-p)/p); dev = (got - truth)/sd
        printf "# seed %d %-12s %-5s truth %10d got %10d (%+.2f sd)\n", seed, fn, kinds[k], truth, got, dev
        if (dev > 4 || dev < -4) { printf "seed %d %s %s: %s is %.1f sd from %d\n", seed, fn, kinds[k], got, dev, truth; bad=1 }
      }
    }
    END { exit bad }' "$T/alloc" "$T/inuse" "$T/inuse_obj" "$sites" || fail "estimate outside 4 standard errors (seed $seed)"
}
