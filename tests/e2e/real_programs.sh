#!/bin/sh
# A matrix of Debian programs nobody here wrote, in C, C++ (cc1, ICU under
# xmllint), Rust (ripgrep) and Python, plus a program linked by lld: each run
# plain and under cprof at rate 1 and at the default rate with every exit
# profile on (heap, peak, leaks, CPU, trace). Each cell is one named check
# with its own time bound: same stdout, stderr and exit status as the plain
# run, an exit within the bound, and every process's profiles written and
# read by go tool pprof (the traces by go tool trace -d). Oracle checks where
# they are cheap: jq's peak equals valgrind massif's, perl's and git's leaks
# equal memcheck's definitely + indirectly lost, xz's CPU time and shares per
# function agree with perf's (within 5 points, see cpu_vs_perf). The log ends with the table (program x
# mode: ok/FAIL, seconds) and each failure's reason. Inputs are made here;
# the only network is redis-server on 127.0.0.1. CPROF_CELL_LIMIT=N changes
# the bound of each run (default 60 s).
# timeout: 900
. "$(dirname "$0")/../lib.sh"
command -v go > /dev/null 2>&1 || skip "skip: go (golang-go) not installed"

LIMIT=${CPROF_CELL_LIMIT:-60} # seconds a run may take: past it, it hangs
TO="timeout -k 5 $LIMIT"
cd "$T" || fail "no scratch dir"
export HOME="$T" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
# Hash seeds fixed: the oracles' runs must allocate as the cells' runs did.
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 PYTHONHASHSEED=0

# ---- inputs --------------------------------------------------------------
gen_inputs .
cat > script.py <<'EOF'
import json, re
d = {}
for i in range(20000):
    d["k%d" % i] = [i, str(i) * 3, {"x": i, "y": (i, i + 1)}]
s = json.dumps(sorted(d.items(), key=lambda kv: -kv[1][0])[:50])
print(len(d), len(s), len(re.findall(r"\d{4}", s)), sum(v[0] for v in d.values()))
EOF
awk 'BEGIN { print "<?xml version=\"1.0\"?>"; print "<items>"
  for (i = 0; i < 3000; i++) printf "<item id=\"%d\" v=\"%d\"><name>n%d</name><t>b%d</t></item>\n", i, i % 13, i, i % 7
  print "</items>" }' > data.xml
cat > script.pl <<'EOF'
my %h;
for my $i (1 .. 5000) { $h{"k$i"} = [$i, "x" x ($i % 50), {a => $i}]; }
my @k = sort { $h{$b}[0] <=> $h{$a}[0] } keys %h;
my $s = join(",", map { sprintf("%05d", $_) } grep { $_ % 7 == 0 } map { $h{$_}[0] } @k);
my $n = ($s =~ tr/0//);
print scalar(keys %h), " ", length($s), " $n\n";
EOF
awk 'BEGIN { srand(3); for (i = 0; i < 120000; i++)
  printf "%d line %x %s\n", i, int(rand() * 1e9), (i % 7 ? "alpha" : "beta") }' > data.txt
cat data.txt data.txt > xz.txt # ~3 s of CPU: enough samples to compare with perf
mkdir -p tree
awk 'BEGIN { for (f = 0; f < 200; f++) { out = sprintf("tree/d%d/f%03d.txt", f % 10, f)
  system("mkdir -p tree/d" f % 10)
  for (i = 0; i < 200; i++) printf "file %d line %d %s\n", f, i, (i % 37 == f % 37 ? "needle" : "hay") > out
  close(out) } }'
awk 'BEGIN { for (i = 0; i < 300; i++) { printf "SET key:%d value-%d\nGET key:%d\n", i, i * 7, i
    printf "RPUSH list:%d a%d b%d c%d\n", i % 10, i, i, i }
  print "LRANGE list:3 0 -1"; print "INCRBY counter 41"; print "INCR counter"
  print "HSET h f1 v1 f2 v2"; print "HGETALL h"; print "DBSIZE" }' > redis.cmds

# ---- the programs --------------------------------------------------------
# The ones Debian provides here; a missing one is a row marked n/a (the
# matrix needs scripts/deps.sh's packages: ripgrep, pigz, redis-server...).
have() { command -v "$1" > /dev/null 2>&1; }
progs=""
for p in jq sqlite3 python3 xmllint perl git gcc rg ssh pigz xz redis; do
  case $p in redis) b=redis-server ;; *) b=$p ;; esac
  if have "$b" && { [ $p != redis ] || have redis-cli; }; then progs="$progs $p"
  else note "$b is not installed: its row is n/a"; echo "$p n/a" >> absent; fi
done
# python3 may be a wrapper (pyenv's shim is a shell script): the interpreter.
PY=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)

if have ld.lld; then
  # lld puts the read-only segment and the code on a shared file page.
  cc_prog "$T/lldprog" "$PROGS/heapknown.c" -fuse-ld=lld
  progs="$progs lld"
else
  note "ld.lld is not installed: the lld row is n/a"; echo "lld n/a" >> absent
fi

# git: a small repository, made without cprof.
if have git; then
  mkdir -p repo && cp -r tree/d0 tree/d1 tree/d2 repo/ &&
  ( cd repo && export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t \
      GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' &&
    git init -q && git add . && git commit -qm one && sed -i 's/hay/straw/' d1/*.txt &&
    git commit -qam two && cp ../tree/d3/* d2/ && git add . && git commit -qm three ) ||
    fail "cannot make the git repository"
fi

# free_port: a TCP port on 127.0.0.1 nobody listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# redis ENV...: redis-server (with ENV) on a free port, driven by redis-cli
# (its replies are the output) and redis-benchmark (load, -n bounds it), shut
# down by SHUTDOWN; returns the server's exit status.
redis() {
  port=$(free_port)
  $TO env "$@" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$T" --logfile "$T/redis.$port.log" --daemonize no &
  spid=$!
  i=0
  until [ "$(timeout 10 redis-cli -p "$port" ping 2> /dev/null)" = PONG ]; do
    kill -0 $spid 2> /dev/null || break
    i=$((i + 1)); [ $i -gt $((LIMIT * 10)) ] && break
    sleep 0.1
  done
  $TO redis-cli -p "$port" < redis.cmds
  $TO redis-benchmark -p "$port" -q -n 2000 -c 4 -t set,get,lpush,lrange_100 > /dev/null ||
    echo "redis-benchmark failed"
  $TO redis-cli -p "$port" shutdown nosave
  wait $spid
}

# prog P ENV...: runs program P from $T with ENV added, under the time bound.
prog() {
  p=$1; shift
  case $p in
    jq) $TO env "$@" jq -c '[.[] | select(.v > 6) | {id, t: .tags[1]}] | group_by(.t) | map({t: .[0].t, n: length})' data.json ;;
    sqlite3) $TO env "$@" sqlite3 :memory: < script.sql ;;
    python3) $TO env "$@" "$PY" script.py ;;
    xmllint) $TO env "$@" xmllint --xpath 'sum(//item/@v) + count(//item[t="b3"])' data.xml ;;
    perl) $TO env "$@" perl script.pl ;;
    git) $TO env "$@" git -C repo --no-pager grep -n -e needle -e straw ;;
    gcc) $TO env "$@" gcc -O2 -S -o - "$PROGS/heapknown.c" ;;
    rg) $TO env "$@" rg -n -j2 needle tree ;;
    ssh) $TO env "$@" ssh -G -F /dev/null -l someone -p 2222 host.invalid ;;
    pigz) $TO env "$@" pigz -p 2 -n -c < data.txt ;;
    xz) $TO env "$@" xz -T2 --block-size=512KiB -6 -c < xz.txt ;;
    redis) redis "$@" ;;
    lld) $TO env "$@" ./lldprog ;;
  esac
}

# norm P: P's stdout in a form that does not depend on thread timing.
norm() {
  case $1 in
    rg) sort ;;       # files are searched in parallel: lines per file stay whole
    *) cat ;;
  esac
}

# run P MODE: P in MODE (plain, rate1, default) with stdin from /dev/null;
# output in $T/P.MODE.{out,err,rc}, profiles in $T/P.MODE/, seconds in .secs.
run() {
  p=$1; m=$2; d=$T/$p.$m
  mkdir -p "$d"
  case $m in
    plain) set -- ;;
    *) set -- LD_PRELOAD="$LIB" CPROF_SEED=7 CPROF_HEAP_PROFILE="$d/heap.%p.pb.gz" \
         CPROF_PEAK_PROFILE="$d/peak.%p.pb.gz" CPROF_LEAK_PROFILE="$d/leak.%p.pb.gz" \
         CPROF_CPU_PROFILE="$d/cpu.%p.pb.gz" CPROF_TRACE="$d/trace.%p.trace" ;;
  esac
  [ $m = rate1 ] && set -- "$@" CPROF_RATE=1
  start=$(date +%s.%N)
  prog "$p" "$@" < /dev/null > "$d.out" 2> "$d.err"
  echo $? > "$d.rc"
  echo "$start $(date +%s.%N)" | awk '{ printf "%.1f\n", $2 - $1 }' > "$d.secs"
}

# check P MODE: the cell's checks; run in a subshell, fail() ends only it.
check() {
  p=$1; m=$2; d=$T/$p.$m; ref=$T/$p.plain
  rc=$(cat "$d.rc")
  case $rc in 124|137) fail "no exit within ${LIMIT}s (killed): a hang";; esac
  if [ $m = plain ]; then
    [ -s "$d.out" ] || fail "no output from the plain run (exit status $rc): $(head -c 300 "$d.err")"
    return 0
  fi
  [ "$rc" = "$(cat "$ref.rc")" ] || fail "exit status $rc, plain $(cat "$ref.rc"): $(head -c 300 "$d.err")"
  norm "$p" < "$ref.out" > "$ref.norm"; norm "$p" < "$d.out" > "$d.norm"
  cmp -s "$ref.norm" "$d.norm" || fail "stdout differs: $(diff "$ref.norm" "$d.norm" | head -c 300)"
  cmp -s "$ref.err" "$d.err" || fail "stderr differs: $(diff "$ref.err" "$d.err" | head -c 300)"
  # Every process that exited wrote the heap, peak and leak profiles (the
  # same exit path); the CPU profile and the trace are not continued in a
  # forked child (docs/cpu.md, docs/trace.md), so at least one of each. go tool pprof loads
  # every profile; at rate 1 the heap has samples.
  pids=$(ls "$d" | sed -n 's/^heap\.\([0-9]*\)\.pb\.gz$/\1/p')
  [ -n "$pids" ] || fail "no heap profile written"
  alloc=0
  for pid in $pids; do
    for k in heap peak leak; do
      f=$d/$k.$pid.pb.gz
      [ -s "$f" ] || fail "process $pid wrote a heap profile but no $k profile"
      raw_totals "$f" > "$f.totals" || exit 1
    done
    alloc=$((alloc + $(cut -d' ' -f2 "$d/heap.$pid.pb.gz.totals")))
  done
  [ $m = default ] || [ $alloc -gt 0 ] || fail "no allocation in any heap profile at rate 1"
  n=0
  for f in "$d"/cpu.*.pb.gz; do
    [ -s "$f" ] || continue
    raw_totals "$f" > "$f.totals" || exit 1
    n=$((n + 1))
  done
  [ $n -gt 0 ] || fail "no CPU profile written"
  n=0
  for tr in "$d"/trace.*.trace; do
    [ -s "$tr" ] || continue
    go tool trace -d "$tr" > "$tr.d" 2> "$tr.err" || fail "$(basename "$tr"): go tool trace -d: $(tail -n1 "$tr.err")"
    n=$((n + 1))
  done
  [ $n -gt 0 ] || fail "no trace written"
  # Nothing half-written left behind (profiles are renamed into place).
  stray=$(ls "$d" | grep -v -E '^(heap|peak|leak|cpu)\.[0-9]+\.pb\.gz(\.totals)?$|^trace\.[0-9]+\.trace(\.d|\.err)?$')
  [ -z "$stray" ] || fail "stray files: $stray"
  # lld's layout: cprof's tool names the program's functions and counts them exactly.
  if [ $p = lld ] && [ $m = rate1 ]; then
    PPROF=$BUILD/cprof check_truth "$d.out" "$d/heap.$pids.pb.gz"
  fi
  return 0
}

# cell NAME MODE CMD...: runs CMD in a subshell as one named check; records
# "NAME MODE ok|FAIL SECS REASON" in $T/table.
cell() {
  name=$1; mode=$2; shift 2
  s0=$(date +%s.%N)
  ( "$@" ) > "$T/cell.log" 2>&1
  rc=$?
  cat "$T/cell.log"
  secs=$(echo "$s0 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
  if [ $rc = 77 ]; then r="skip $secs $(tail -n1 "$T/cell.log")"
  elif [ $rc = 0 ]; then r="ok $secs"
  else r="FAIL $secs $(grep '^FAIL: ' "$T/cell.log" | tail -n1 | sed 's/^FAIL: //')"; fi
  echo "$name $mode $r" >> "$T/table"
  note "$name $mode: $r"
}

# runcheck P MODE: a matrix cell (the time is the program's).
runcheck() { run "$1" "$2"; check "$1" "$2"; }

for p in $progs; do
  for m in plain rate1 default; do
    cell "$p" "$m" runcheck "$p" "$m"
  done
done

# ---- oracles -------------------------------------------------------------
have valgrind || note "valgrind is not installed: no massif or memcheck checks"

# massif_peak P: P's peak profile at rate 1 holds massif's peak heap bytes.
# massif counts the bytes asked for (--heap-admin=0) and takes its peak
# snapshot exactly (--peak-inaccuracy=0); cprof's peak profile is the live
# set when the live usable sizes were highest, its samples the bytes asked
# for (docs/peak-temporaries-leaks.md, "Peak profile").
massif_peak() {
  p=$1
  have valgrind || skip "no valgrind"
  prof=$(ls "$T/$p.rate1"/peak.*.pb.gz) || fail "no peak profile from the rate 1 cell"
  prog "$p" valgrind --tool=massif --peak-inaccuracy=0 --heap-admin=0 --stacks=no \
    --massif-out-file="$T/$p.massif" < /dev/null > /dev/null 2> "$T/$p.massif.err" ||
    fail "valgrind massif failed: $(tail -n2 "$T/$p.massif.err")"
  want=$(awk -F= '$1 == "mem_heap_B" { b = $2 } $1 == "heap_tree" && $2 == "peak" { print b }' "$T/$p.massif")
  [ -n "$want" ] || fail "massif recorded no peak"
  set -- $(raw_totals "$prof"); got=$4
  note "$p peak: cprof $got B, massif $want B"
  [ "$got" = "$want" ] || fail "peak $got B, massif's $want B"
}

# memcheck_leaks P: P's leak profile at rate 1 holds memcheck's definitely +
# indirectly lost blocks and bytes (both find leaks by reachability).
memcheck_leaks() {
  p=$1
  have valgrind || skip "no valgrind"
  prof=$(ls "$T/$p.rate1"/leak.*.pb.gz) || fail "no leak profile from the rate 1 cell"
  [ "$(echo "$prof" | wc -l)" = 1 ] || fail "more than one process"
  prog "$p" valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=none \
    --log-file="$T/$p.memcheck" < /dev/null > /dev/null 2>&1 || fail "valgrind memcheck failed: $(tail -n2 "$T/$p.memcheck")"
  # "definitely lost: 1,234 bytes in 5 blocks"; absent when nothing was lost.
  want=$(awk '/(definitely|indirectly) lost:/ { for (i = 1; i <= NF; i++) if ($i == "lost:") { b = $(i + 1); o = $(i + 4) }
      gsub(/,/, "", b); gsub(/,/, "", o); B += b; O += o } END { printf "%d %d\n", O, B }' "$T/$p.memcheck")
  set -- $(raw_totals "$prof")
  note "$p leaks: cprof $3 objects $4 B, memcheck $want (objects B)"
  [ "$3 $4" = "$want" ] || fail "leaks $3 objects $4 B, memcheck's definitely+indirectly lost $want"
}

# ---- CPU shares against perf --------------------------------------------
# Debian's liblzma has no symbols for its static functions, so a "function"
# here is a range of the object's unwind table (one FDE each): the sample
# addresses of both tools are turned into (object, FDE start).

# fdes OBJ: "start end" (link-time addresses) of each FDE of OBJ, and the
# "delta" (vaddr - file offset) of its executable segment.
fdes() {
  readelf -lW "$1" | awk "$HEX"'$1 == "LOAD" && $7 ~ /E/ { printf "delta %.0f\n", hex($3) - hex($2); exit }'
  readelf -wf "$1" 2> /dev/null | awk "$HEX"'/ FDE / { for (i = 1; i <= NF; i++) if ($i ~ /^pc=/) {
      split(substr($i, 4), r, /\.\./); printf "%.0f %.0f\n", hex(r[1]), hex(r[2]) } }'
}

# keyed: reads "OBJ FILEOFFSET" lines; prints "OBJ:FDESTART" per line
# (OBJ:? where no FDE covers it; FDESTART in decimal), from $T/fde.<basename> tables.
keyed() {
  while read -r obj off; do
    b=${obj##*/}
    [ -f "$T/fde.$b" ] || { if [ -r "$obj" ]; then fdes "$obj" > "$T/fde.$b"; else : > "$T/fde.$b"; fi; }
    echo "$b $off"
  done | awk 'function load(b,   f, line, n, x) { f = T "/fde." b; n = 0
        while ((getline line < f) > 0) { split(line, x, " ")
          if (x[1] == "delta") delta[b] = x[2]; else { n++; lo[b, n] = x[1]; hi[b, n] = x[2] } }
        close(f); cnt[b] = n; loaded[b] = 1 }
      { b = $1; if (!(b in loaded)) load(b); va = $2 + delta[b]; k = b ":?"
        for (i = 1; i <= cnt[b]; i++) if (va >= lo[b, i] && va < hi[b, i]) { k = sprintf("%s:%.0f", b, lo[b, i]); break }
        print k }' T="$T"
}

# shares: reads keys, prints "KEY PERCENT" for each.
shares() { sort | uniq -c | awk '{ n[$2] = $1; t += $1 } END { for (k in n) printf "%s %.2f\n", k, 100 * n[k] / t }'; }

# cpu_vs_perf P: one run of P under cprof's CPU profile and perf record at
# once (the same execution, so the program's own run-to-run variation does
# not count). Both tools charge a sample to the user instruction the thread
# was running: cprof's signal arrives on the return to user mode, so for
# perf's samples taken in the kernel the first user frame of the call chain
# is used; perf's samples in cprof's own code are left out. cprof runs at
# 250 Hz, the kernel's tick rate here: a CPU timer is checked on ticks, and
# above it a signal carries several periods (si_overrun) of one
# instruction, so the samples are no longer independent. The CPU time seen
# must agree within a factor of 1.5, and each function's share (5% or more
# in either) within 5 points, or 3.5 standard deviations of cprof's share
# where its samples are too few for 5 points.
cpu_vs_perf() {
  p=$1
  have perf || skip "perf (linux-perf) is not installed: no CPU check against it"
  perf record -q -g -F 4000 -o "$T/$p.perf" -- true > "$T/perf.err" 2>&1 ||
    skip "perf record is not usable here: $(tail -n1 "$T/perf.err")"
  prog "$p" perf record -q -g -F 4000 -o "$T/$p.perf" -- env LD_PRELOAD="$LIB" CPROF_CPU_HZ=250 \
    CPROF_CPU_PROFILE="$T/$p.cpu.pb.gz" > /dev/null 2> "$T/perf.err" < /dev/null ||
    fail "$p under perf and cprof failed: $(tail -n1 "$T/perf.err")"
  # perf: one block per sample, its call chain with object-relative addresses.
  perf script -i "$T/$p.perf" -F ip,dso 2> /dev/null |
    awk "$HEX"'BEGIN { RS = "" } { o = "[kernel]"; off = 0; n = split($0, line, "\n")
        for (i = 1; i <= n; i++) { split(line[i], f, " "); d = f[2]; gsub(/[()]/, "", d)
          if (d !~ /^\[/) { o = d; off = hex(f[1]); break } }
        if (o !~ /libcprof/) printf "%s %.0f\n", o, off }' > "$T/perf.addrs"
  [ -s "$T/perf.addrs" ] || fail "perf recorded no samples"
  # cprof: the leaf address of each sample, as many times as its count.
  go tool pprof -raw -symbolize=none "$T/$p.cpu.pb.gz" > "$T/cpu.raw" 2>&1 || fail "go tool pprof cannot load the CPU profile"
  awk "$HEX"'/^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0; m = 1; next }
       s && /^ *[0-9]+ +[0-9]+: / { nleaf++; cnt[nleaf] = $1; leaf[nleaf] = $3 }
       l && /^ *[0-9]+: 0x/ { id = $1; sub(/:/, "", id); addr[id] = hex($2); sub(/M=/, "", $3); lm[id] = $3 }
       m && /^[0-9]+: 0x/ { id = $1; sub(/:/, "", id); split($2, r, "/"); ms[id] = hex(r[1]); mo[id] = hex(r[3]); mf[id] = $3 }
       END { for (i = 1; i <= nleaf; i++) { L = leaf[i]; M = lm[L]
               for (j = 0; j < cnt[i]; j++) printf "%s %.0f\n", mf[M], addr[L] - ms[M] + mo[M] } }' "$T/cpu.raw" > "$T/cprof.addrs"
  np=$(wc -l < "$T/perf.addrs"); nc=$(wc -l < "$T/cprof.addrs")
  [ "$nc" -gt 0 ] || fail "the CPU profile has no samples; perf saw $((np / 4)) ms of CPU"
  keyed < "$T/perf.addrs" | shares > "$T/perf.shares"
  keyed < "$T/cprof.addrs" | shares > "$T/cprof.shares"
  note "$p: perf $np samples at 4000 Hz, cprof $nc at 250 Hz"
  awk -v a="$np" -v b="$nc" 'BEGIN { a /= 4; b *= 4; exit !(b * 1.5 >= a && b <= a * 1.5) }' ||
    fail "cprof sampled $((nc * 4)) ms of CPU, perf $((np / 4)) ms"
  awk -v n="$nc" 'NR == FNR { p[$1] = $2; next } { c[$1] = $2 }
       END { for (k in p) if (!(k in c)) c[k] = 0; for (k in c) if (!(k in p)) p[k] = 0
             for (k in p) if (p[k] >= 5 || c[k] >= 5) {
               q = p[k] / 100; tol = 350 * sqrt(q * (1 - q) / n); if (tol < 5) tol = 5
               d = c[k] - p[k]; printf "# %s: perf %.1f%%, cprof %.1f%% (tolerance %.1f)\n", k, p[k], c[k], tol
               if (d > tol || d < -tol) { printf "FAIL: %s: cprof %.1f%%, perf %.1f%%\n", k, c[k], p[k]; bad = 1 } }
             exit bad }' "$T/perf.shares" "$T/cprof.shares" || exit 1
}

case " $progs " in *" jq "*) cell jq massif massif_peak jq ;; esac
case " $progs " in *" perl "*) cell perl memcheck memcheck_leaks perl ;; esac
case " $progs " in *" git "*) cell git memcheck memcheck_leaks git ;; esac
case " $progs " in *" xz "*) cell xz perf cpu_vs_perf xz ;; esac

# ---- the table -----------------------------------------------------------
echo
echo "program   plain        rate 1       default      oracle"
for p in $progs; do
  awk -v p="$p" '$1 == p { v[$2] = $3 " " $4 "s"; if ($2 !~ /^(plain|rate1|default)$/) o = o $2 ": " $3 " " $4 "s " }
    END { printf "%-9s %-12s %-12s %-12s %s\n", p, v["plain"], v["rate1"], v["default"], o }' "$T/table"
done
[ -f absent ] && awk '{ printf "%-9s %s\n", $1, $2 }' absent
echo
awk '$3 == "FAIL" { r = $5; for (i = 6; i <= NF; i++) r = r " " $i; printf "FAIL %s %s: %s\n", $1, $2, r }' "$T/table"
fails=$(awk '$3 == "FAIL"' "$T/table" | wc -l)
cells=$(wc -l < "$T/table")
echo "$cells cells, $fails failed"
[ "$fails" = 0 ] || fail "$fails of $cells cells failed"
exit 0
