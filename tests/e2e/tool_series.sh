#!/bin/sh
# timeout: 300
# A series of snapshots given together (cprof -top p1 ... pN): cprof merges
# them as go tool pprof does, holding a few decoded snapshots at a time (the
# one merged and up to three read ahead of it on a second thread).
# - The merged reports (-raw, -top, -traces) are byte for byte go's.
# - A source that cannot be read is left out with go's messages, in their
#   place although the next sources are read ahead (also under ASan).
# - Each snapshot is read once when the headers agree; when they do not,
#   the merge is still go's.
# - Peak memory: 30 snapshots of 50,000 locations each (~10 MB decoded
#   apiece) cost cprof at most 3x the peak of one; holding every decoded
#   snapshot until the merge cost ~11x.
. "$(dirname "$0")/tool_common.inc"
GEN=$CPROF_BUILD/profgen
[ -x "$GEN" ] || { echo "skip: no $GEN (make tests builds it)"; exit 77; }
[ -x /usr/bin/time ] || { echo "skip: no /usr/bin/time (Debian package time)"; exit 77; }

# small series: same locations, different samples in each snapshot
small=""
for k in 1 2 3 4 5 6; do
  "$GEN" -seed 4 -samples 200 -locations 150 -functions 70 -depth 1-14 -sample_seed $k \
    -o "$T/s$k.pb.gz" || { echo "FAIL: profgen"; exit 1; }
  small="$small $T/s$k.pb.gz"
done
for f in "-raw" "-top" "-traces" "-top -sample_index=alloc_space"; do
  checks=$((checks + 1))
  # shellcheck disable=SC2086
  "$CPROF" $f $small >"$T/c.out" 2>"$T/c.err" || { echo "FAIL: cprof $f: $(cat "$T/c.err")"; fails=$((fails + 1)); continue; }
  # shellcheck disable=SC2086
  go tool pprof $f $small >"$T/g.out" 2>/dev/null
  cmp -s "$T/c.out" "$T/g.out" || {
    echo "FAIL: cprof $f on 6 snapshots differs from go tool pprof:"
    diff "$T/c.out" "$T/g.out" | head -20 | sed 's/^/    /'
    fails=$((fails + 1))
  }
done

# each snapshot is read once (merged as it is read; the first is also
# opened by the flag parser, which checks whether it is an executable)
if command -v strace >/dev/null 2>&1; then
  checks=$((checks + 1))
  # shellcheck disable=SC2086
  strace -f -e trace=openat -o "$T/st" "$CPROF" -raw $small >"$T/c.out" 2>"$T/c.err" ||
    { echo "FAIL: cprof -raw under strace: $(tail -n2 "$T/c.err")"; fails=$((fails + 1)); }
  go tool pprof -raw $small >"$T/g.out" 2>/dev/null
  cmp -s "$T/c.out" "$T/g.out" || { echo "FAIL: cprof -raw under strace differs from go's"; fails=$((fails + 1)); }
  for k in 2 3 4 5 6; do
    n=$(grep -c "\"$T/s$k.pb.gz\"" "$T/st")
    [ "$n" = 1 ] || { echo "FAIL: s$k.pb.gz opened $n times, not once"; fails=$((fails + 1)); }
  done
fi

# headers that differ (another comment from another seed): read again and
# merged as go does
checks=$((checks + 1))
"$GEN" -seed 5 -samples 200 -locations 150 -functions 70 -depth 1-14 -sample_seed 7 \
  -o "$T/o7.pb.gz" || { echo "FAIL: profgen"; exit 1; }
"$CPROF" -raw "$T/s1.pb.gz" "$T/s2.pb.gz" "$T/o7.pb.gz" "$T/s3.pb.gz" >"$T/c.out" 2>"$T/c.err" ||
  { echo "FAIL: cprof -raw on mixed headers: $(tail -n2 "$T/c.err")"; fails=$((fails + 1)); }
go tool pprof -raw "$T/s1.pb.gz" "$T/s2.pb.gz" "$T/o7.pb.gz" "$T/s3.pb.gz" >"$T/g.out" 2>/dev/null
cmp -s "$T/c.out" "$T/g.out" || {
  echo "FAIL: cprof -raw on mixed headers differs from go tool pprof:"
  diff "$T/c.out" "$T/g.out" | head -10 | sed 's/^/    /'
  fails=$((fails + 1))
}

# an unreadable source in the middle: left out, the rest merged
checks=$((checks + 1))
printf 'not a profile' > "$T/bad.pb.gz"
"$CPROF" -top "$T/s1.pb.gz" "$T/bad.pb.gz" "$T/s2.pb.gz" >"$T/c.out" 2>"$T/c.err"
rc=$?
"$CPROF" -top "$T/s1.pb.gz" "$T/s2.pb.gz" >"$T/c2.out" 2>/dev/null
if [ $rc -ne 0 ] || ! grep -q "Fetched 2 source profiles out of 3" "$T/c.err" ||
   ! grep -q "bad.pb.gz" "$T/c.err" || ! cmp -s "$T/c.out" "$T/c2.out"; then
  echo "FAIL: a bad source among good ones (exit $rc):"; sed 's/^/    /' "$T/c.err" | head -5
  fails=$((fails + 1))
fi

# a corrupt 3rd of 5 sources (truncated; a wrong CRC): the sources after it
# are read ahead on a second thread, yet its message comes first, exactly
# as go's, the rest are merged as go merges them, and nothing of it shows;
# also under ASan/UBSan (build/asan/cprof: no report, same output)
head -c 1500 "$T/s3.pb.gz" >"$T/t3.pb.gz"
python3 - "$T/s3.pb.gz" "$T/x3.pb.gz" <<'EOF2' || { echo "FAIL: making x3.pb.gz"; exit 1; }
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-8] ^= 0x55  # the gzip trailer's CRC32
open(sys.argv[2], "wb").write(b)
EOF2
good="$T/s1.pb.gz $T/s2.pb.gz $T/s4.pb.gz $T/s5.pb.gz"
# shellcheck disable=SC2086
"$CPROF" -top $good >"$T/c4.out" 2>/dev/null
for bad in "t3.pb.gz: decompressing profile: truncated gzip data" \
           "x3.pb.gz: decompressing profile: corrupt gzip data: incorrect data check"; do
  f=$T/${bad%%:*}
  five="$T/s1.pb.gz $T/s2.pb.gz $f $T/s4.pb.gz $T/s5.pb.gz"
  # shellcheck disable=SC2086
  go tool pprof -top $five >"$T/g.out" 2>/dev/null
  cmp -s "$T/c4.out" "$T/g.out" || { echo "FAIL: cprof -top of 4 sources differs from go's of 5 with ${bad%%:*}"; fails=$((fails + 1)); }
  for tool in "$CPROF" "$CPROF_BUILD/asan/cprof"; do
    [ -x "$tool" ] || { echo "note: no $tool (make tests builds it)"; continue; }
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    ASAN_OPTIONS=detect_leaks=1:exitcode=99 "$tool" -top $five >"$T/c.out" 2>"$T/c.err"
    rc=$?
    case "$(sed -n 1p "$T/c.err")" in
      "$T/$bad" | "$T/$bad ("*) first=ok ;;
      *) first=bad ;;
    esac
    if [ $rc -ne 0 ] || [ $first != ok ] ||
       [ "$(sed -n 2p "$T/c.err")" != "Fetched 4 source profiles out of 5" ] ||
       ! cmp -s "$T/c.out" "$T/c4.out"; then
      echo "FAIL: $tool -top with ${bad%%:*} 3rd of 5 (exit $rc):"; sed 's/^/    /' "$T/c.err" | head -5
      fails=$((fails + 1))
    fi
  done
done

# peak RSS: one snapshot against thirty
big=""
for k in $(seq 1 30); do
  "$GEN" -seed 1 -shape snapshot -sample_seed "$k" -o "$T/b$k.pb.gz" || { echo "FAIL: profgen"; exit 1; }
  big="$big $T/b$k.pb.gz"
done
peak() { # peak KB of cprof -top on the arguments; its report must be there
  /usr/bin/time -f %M -o "$T/m" "$CPROF" -top "$@" >"$T/p.out" 2>"$T/p.err" ||
    { echo "FAIL: cprof -top on $# snapshots: $(tail -n2 "$T/p.err")"; fails=$((fails + 1)); }
  grep -q '^Showing nodes accounting for' "$T/p.out" ||
    { echo "FAIL: no report on $# snapshots"; fails=$((fails + 1)); }
  tail -n1 "$T/m"
}
checks=$((checks + 1))
one=$(peak "$T/b1.pb.gz")
# shellcheck disable=SC2086
all=$(peak $big)
echo "peak RSS: 1 snapshot $one KB, 30 snapshots $all KB"
[ "$all" -le $((3 * one)) ] || { echo "FAIL: 30 snapshots take more than 3x one's peak"; fails=$((fails + 1)); }
finish
