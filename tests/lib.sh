# lib.sh — shared helpers for the end-to-end tests (sourced, POSIX sh).
# Each test gets a scratch directory $T, removed at exit.
set -u
TOP=${CPROF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${CPROF_BUILD:-$TOP/build}
LIB=${CPROF_LIB:-$BUILD/libcprof.so} # runtime_ubsan.sh points it at the UBSan build
PROGS=$TOP/tests/progs
T=$(mktemp -d "${TMPDIR:-/tmp}/cprof-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export GOCACHE=${GOCACHE:-${TMPDIR:-/tmp}/cprof-gocache} GOFLAGS=-mod=mod GO111MODULE=off

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
note() { echo "# $*"; }

# cc_prog OUT SRC [FLAGS...]: builds a test program with DWARF.
cc_prog() {
  out=$1; src=$2; shift 2
  case "$src" in
    *.cc) g++ -g -O1 -o "$out" "$src" "$@" -lpthread ;;
    *) gcc -std=gnu11 -g -O1 -o "$out" "$src" "$@" -lpthread ;;
  esac || fail "cannot build $src"
}

# pprof_flat INDEX PROFILE [BINARY]: "name flat" per node of go tool pprof -top,
# exact (bytes in B, counts plain).
pprof_flat() {
  idx=$1; prof=$2; shift 2
  go tool pprof -top -unit=byte -nodefraction=0 -nodecount=100000 -sample_index="$idx" \
    "$@" "$prof" 2>/dev/null |
    awk 'started { v=$1; sub(/(B|byte)$/, "", v); name=$6; for (i=7;i<=NF;i++) name=name" "$i; print name, v }
         /^ *flat  flat%/ { started=1 }'
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

# fifo_reader FIFO OUT: a background reader that copies FIFO to OUT until
# its writer closes it; returns once the reader holds FIFO open (a writer's
# O_NONBLOCK open then finds a reader), with $reader its pid. A reader
# merely started may not have opened it yet when the writer looks.
fifo_reader() {
  rm -f "$T/fifo_reader.ready"
  python3 -c '
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)  # never waits for a writer
open(sys.argv[3], "w").close()
p = select.poll(); p.register(fd, select.POLLIN)  # no hang-up before a writer came
with open(sys.argv[2], "wb") as out:
    while True:
        p.poll()
        try:
            b = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not b:
            break
        out.write(b)
' "$1" "$2" "$T/fifo_reader.ready" &
  reader=$!
  until [ -e "$T/fifo_reader.ready" ]; do
    kill -0 $reader 2>/dev/null || fail "fifo_reader: the reader of $1 died"
    sleep 0.01
  done
}
