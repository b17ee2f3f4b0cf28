#!/bin/sh
# Hostile input through the command line: a corpus made here from a valid
# profile (build/profgen, gzipped and raw, and a legacy text profile) —
# truncated at many lengths, bit-flipped (the gzipped bytes, and the
# protobuf bytes re-gzipped), random bytes (with and without a gzip
# header), gzip bombs (concatenated members inflating past the 1 GiB
# limit; 32 MiB of zeros), a protobuf claiming a huge length, an empty
# file, a directory, a missing file — through `cprof -top`, built plainly
# and under ASan/UBSan (build/asan/cprof). Every run must end by itself
# (exit < 128, no sanitizer report, no crash); inputs that cannot be read
# must exit 1 with one message naming the file (plus pprof's "failed to
# fetch any source profiles"); inputs that still decode may report.
# timeout: 300
. "$(dirname "$0")/../lib.sh"

CPROF=$BUILD/cprof
ASAN=$BUILD/asan/cprof
[ -x "$CPROF" ] || fail "no $CPROF (run make)"
[ -x "$ASAN" ] || fail "no $ASAN (run make tests)"
[ -x "$BUILD/profgen" ] || fail "no $BUILD/profgen (run make tests)"
command -v python3 >/dev/null 2>&1 || skip "skip: python3 not installed"
export HOME="$T/home"; mkdir -p "$HOME"
unset PPROF_BINARY_PATH DEBUGINFOD_URLS
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1

C=$T/corpus
mkdir -p "$C/bad" "$C/any"
"$BUILD/profgen" -seed 5 -samples 60 -locations 50 -functions 25 -o "$T/valid.pb.gz" || fail profgen
"$BUILD/profgen" -seed 5 -samples 60 -locations 50 -functions 25 -raw -o "$T/valid.pb" || fail profgen
printf 'heap profile: 2: 3000 [4: 5000] @ heap/1048576\n1: 1000 [2: 2000] @ 0x401000 0x402000\n1: 2000 [2: 3000] @ 0x401100\n' > "$T/legacy.txt"

# corpus/bad: must fail to load; corpus/any: may load (then a report).
python3 - "$T" "$C" <<'EOF' || fail "making the corpus"
import gzip, os, random, struct, sys, zlib
T, C = sys.argv[1], sys.argv[2]
gz = open(T + "/valid.pb.gz", "rb").read()
raw = open(T + "/valid.pb", "rb").read()
leg = open(T + "/legacy.txt", "rb").read()
r = random.Random(1234)
def put(kind, name, data):
    with open("%s/%s/%s" % (C, kind, name), "wb") as f:
        f.write(data)
# truncations: a truncated gzip stream never inflates; a truncated
# protobuf may end on a field boundary (then it is a smaller profile)
for n in sorted(set([1, 2, 3, 9, 10, 11, 17, len(gz) - 1, len(gz) - 4, len(gz) - 8] +
                    [r.randrange(1, len(gz)) for _ in range(15)])):
    put("bad", "trunc-gz-%05d" % n, gz[:n])
for n in sorted(set([1, 2, 3, len(raw) - 1] + [r.randrange(1, len(raw)) for _ in range(15)])):
    put("any", "trunc-pb-%05d" % n, raw[:n])
    put("any", "trunc-pbgz-%05d" % n, gzip.compress(raw[:n], mtime=0))
for n in range(1, len(leg), 13):
    put("any", "trunc-legacy-%03d" % n, leg[:n])
# bit flips
def flip(b, k):
    b = bytearray(b)
    for _ in range(k):
        i = r.randrange(len(b))
        b[i] ^= 1 << r.randrange(8)
    return bytes(b)
for i in range(20):
    put("any", "flip-gz-%02d" % i, flip(gz, 1 + i % 4))
for i in range(40):
    put("any", "flip-pbgz-%02d" % i, gzip.compress(flip(raw, 1 + i % 8), mtime=0))
for i in range(10):
    put("any", "flip-pb-%02d" % i, flip(raw, 1 + i % 3))
for i in range(10):
    put("any", "flip-legacy-%02d" % i, flip(leg, 1 + i % 3))
# random bytes; random bytes behind a gzip header
for i in range(10):
    put("bad", "random-%02d" % i, bytes(r.randrange(256) for _ in range(r.randrange(1, 3000))))
    put("bad", "random-gzhdr-%02d" % i, b"\x1f\x8b\x08\x00" + bytes(r.randrange(256) for _ in range(r.randrange(1, 500))))
# bombs: 72 members of 16 MiB of zeros each (1.1 GiB inflated, ~1.2 MB
# file); 32 MiB of zeros in one member (not a profile)
m16 = gzip.compress(bytes(16 << 20), compresslevel=9, mtime=0)
put("bad", "bomb-1g", m16 * 72)
put("bad", "bomb-32m", gzip.compress(bytes(32 << 20), compresslevel=9, mtime=0))
# a protobuf whose first field claims 2^62 bytes; one claiming 10 MB with 3 present
put("bad", "huge-len", b"\x0a" + bytes([0x80] * 8) + b"\x40" + b"abc")
put("bad", "long-len", b"\x0a\x80\xad\xe2\x04abc")
# deep/odd varints
put("bad", "varint-11", b"\x08" + b"\xff" * 11)
put("bad", "empty", b"")
put("bad", "empty-gz", gzip.compress(b"", mtime=0))
os.mkdir(C + "/bad/a-directory")
EOF
ln -s "$C/nonexistent-target" "$C/bad/dangling-link"

# check BIN FILE KIND
n=0
check() {
  bin=$1; f=$2; kind=$3
  n=$((n + 1))
  "$bin" -top "$f" > "$T/out" 2> "$T/err"; rc=$?
  if grep -aEq 'Sanitizer|runtime error:|Segmentation|Aborted|core dumped' "$T/err" || [ $rc -ge 128 ] || [ $rc = 99 ]; then
    head -40 "$T/err"; fail "$(basename "$bin") -top $(basename "$f"): crashed (exit $rc)"
  fi
  [ $rc = 0 ] && [ "$kind" = any ] && return
  [ $rc = 1 ] || { cat "$T/err"; fail "$(basename "$bin") -top $(basename "$f"): exit $rc, want 1"; }
  [ -s "$T/out" ] && fail "$(basename "$f"): failed but printed a report"
  # one message naming the file (+ pprof's summary line); for inputs that
  # loaded and failed later, one line without warnings' prefixes
  grep -av '^failed to fetch any source profiles$\|^For tag \|^Local symbolization failed\|^Some binary filenames\|^Try setting PPROF_BINARY_PATH\|^Main binary filename not available' "$T/err" > "$T/msg"
  [ "$(wc -l < "$T/msg")" = 1 ] || { cat "$T/err"; fail "$(basename "$f"): not one message"; }
  if grep -aq '^failed to fetch any source profiles$' "$T/err"; then
    grep -aqF "$f: " "$T/msg" || { cat "$T/msg"; fail "$(basename "$f"): message does not name the file"; }
  fi
}
for f in "$C"/bad/* "$C/missing-file"; do
  check "$CPROF" "$f" bad
  check "$ASAN" "$f" bad
done
for f in "$C"/any/*; do
  check "$CPROF" "$f" any
  check "$ASAN" "$f" any
done
note "$n runs (plain and ASan/UBSan), no crash, one message per unreadable input"
exit 0
