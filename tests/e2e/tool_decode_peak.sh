#!/bin/sh
# timeout: 300
# Decoding a profile file holds neither the file nor its inflated bytes
# whole: they are read, inflated and decoded in pieces (profile/zread.h).
# tests/progs/decode_peak reads a generated profile (20,000 samples,
# 200,000 locations, 100,000 functions: 11.8 MB of profile.proto) with
# profile_read_file and prints its peak resident set and its resident set
# once decoded. What decoding held beyond its result (peak - after) must
# stay below a quarter of the inflated size, gzip'd or not; reading the
# whole file and inflating it whole first held file + inflated bytes
# (17 MB here). A count of memory, not of time: it holds on a loaded machine.
. "$(dirname "$0")/../lib.sh"
GEN=$BUILD/profgen
[ -x "$GEN" ] || skip "skip: no $GEN (make tests builds it)"
[ -f "$BUILD/lib/profile.a" ] || skip "skip: no $BUILD/lib/profile.a (make)"
cc_prog "$T/decode_peak" "$PROGS/decode_peak.c" -I"$TOP/src" "$BUILD/lib/profile.a" \
  "$BUILD/lib/base.a" -lz -lm

fails=0
"$GEN" -seed 3 -samples 20000 -locations 200000 -functions 100000 -depth 10-30 -labels 3 \
  -raw -o "$T/p.pb" || fail "profgen"
gzip -c "$T/p.pb" > "$T/p.pb.gz" || fail "gzip"
inflated=$(($(wc -c < "$T/p.pb") / 1024))
for f in p.pb.gz p.pb; do
  out=$("$T/decode_peak" "$T/$f") || fail "decode_peak $f: exit $?"
  # before B after A peak P samples N locations N
  set -- $out
  [ "$1 $3 $5 $7 $9" = "before after peak samples locations" ] || fail "decode_peak $f printed: $out"
  after=$4 peak=$6
  # the program's own output: the whole profile decoded
  [ "$8 ${10}" = "20000 200000" ] || fail "decode_peak $f decoded $8 samples, ${10} locations"
  held=$((peak - after))
  note "$f: peak $peak KB, decoded $after KB, held beyond the result $held KB (inflated: $inflated KB)"
  if [ "$held" -gt $((inflated / 4)) ]; then
    echo "FAIL: decoding $f held $held KB beyond its result, more than a quarter of the" \
      "$inflated KB inflated: the whole input is held"
    fails=$((fails + 1))
  fi
done
[ "$fails" -eq 0 ] || exit 1
echo "ok: decoding holds no whole input"
