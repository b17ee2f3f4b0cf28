#!/bin/sh
# The signal-context rule as a build check (as Go's compiler checks
# //go:nowritebarrierrec): every function named *_sigsafe in the runtime's
# objects — cprof's three signal handlers (cpuring.c, threaddump.c,
# stopworld.c) and what they call — and every function they reach, through
# direct calls, tail jumps and addresses taken, across all of
# build/pic/src/{runtime,base}/*.o, calls no allocator (the C library's or
# cprof's own), no stdio (nor rt_warn, which formats with vsnprintf) and no
# lock (pthread's, or rt_lock's slow paths).
#
# Function level, not object level: each of those objects mixes its handler
# with control code that allocates and locks (src/runtime/HACKING.md says
# why). A call through a pointer cannot be followed: it fails too, unless
# its function is in the list below with the reason. External libraries
# (libunwind, the C library) are not followed: what the handlers may call
# there is stated in cpuring.h and HACKING.md. The log lists every function
# checked and every external call they make.
# timeout: 60
. "$(dirname "$0")/../lib.sh"

objs=${SIGSAFE_OBJS:-$(ls "$BUILD"/pic/src/runtime/*.o "$BUILD"/pic/src/base/*.o 2>/dev/null)}
[ -n "$objs" ] || fail "no runtime objects under $BUILD/pic (run make first)"
command -v objdump > /dev/null || skip "objdump (binutils) not installed"
[ "$(uname -m)" = x86_64 ] || skip "the call graph is read from x86-64 code"

# Calls through a pointer that are allowed, "object:function": the program's
# own SIGPROF handler, to which cprof passes the signals that are not its own
# (chain_sigsafe, inlined into the handler or not), and its handler for the
# dump signal, which cprof's runs after waking the dump thread (dumpsig.h).
indirect_ok='cpuring.o:chain_sigsafe cpuring.o:handler_sigsafe dumpsig.o:handler_sigsafe'

# Forbidden callees: allocation, stdio, locks (extended regular expression).
alloc='malloc|calloc|realloc|reallocarray|free|free_sized|free_aligned_sized|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|strdup|strndup|v?asprintf|_Zn[wa].*|_Zd[la].*|ownheap_.*|arena_alloc.*|arena_map|arena_unmap|mmap|munmap'
stdio='v?(f|s|sn|d)?printf|__.*printf_chk|f?puts|f?putc|putchar|_IO_.*|f(open|open64|dopen|close|flush|read|write|gets|getc|seek|tell|scanf)|v?(s|f)?scanf|__isoc99_.*|perror|setv?buf|getline|getdelim|popen|pclose|tmpfile|open_memstream|fmemopen|std(in|out|err)|rt_warn'
locks='pthread_(mutex|rwlock|spin|cond|barrier)_.*|pthread_once|pthread_join|sem_(timed|clock)?wait|rt_lock_slow|rt_unlock_wake'
deny="^($alloc|$stdio|$locks)\$"

# One graph over all objects: "node callee" lines; nodes are "obj:fn" for a
# file-local function, "fn" for a global one, "EXT:sym" outside the objects,
# "INDIRECT" for a call through a pointer. Read in three passes: the symbols,
# where the functions lie, then the code.
for o in $objs; do nm "$o" | sed "s|^|$(basename "$o") |"; done > "$T/nm"
for o in $objs; do echo "@OBJ $(basename "$o")"; objdump -dr --no-show-raw-insn "$o"; done > "$T/dis"
awk '
  FNR == 1 { pass++ }
  pass == 1 { o = $1; t = $(NF-1); s = $NF
    if (t == "t" || t == "T" || t == "W" || t == "i") { fn[o, s] = 1; if (t != "t") glob[s] = 1 }
    else if (t != "U" && t != "w") data[s] = 1   # a variable, TLS or not: no edge
    next }
  function hex(h,   i, v) { v = 0; h = tolower(h); sub(/^0x/, "", h)
    for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
    return v }
  function node(o, s) { return (o, s) in fn && !(s in glob) ? o ":" s : s }
  function edge(to) { if (cur != "" && to != cur) print cur, to }
  function ref(s,   off, k, f, p) {
    # a relocation: "sym", "sym+0x10", or ".text-0x4" (a file-local
    # function by its offset in the section: PC-relative, the addend is
    # the offset less the 4 bytes of the displacement)
    if (match(s, /[-+]0x[0-9a-f]+$/)) { off = substr(s, RSTART); s = substr(s, 1, RSTART - 1) } else off = ""
    if (s ~ /^\./) {
      if (s !~ /^\.text/) return
      k = (substr(off, 1, 1) == "-" ? -1 : 1) * hex(substr(off, 2)) + 4
      for (f in start) { split(f, p, SUBSEP)
        if (p[1] == obj && p[2] == s && start[f] <= k && k < end[f]) { edge(node(obj, p[3])); return } }
      edge("UNRESOLVED:" s off); return }
    if ((obj, s) in fn || s in glob) edge(node(obj, s))
    else if (!(s in data) && s != "_GLOBAL_OFFSET_TABLE_") edge("EXT:" s)
  }
  $1 == "@OBJ" { obj = $2; prev = ""; next }
  /^Disassembly of section / { sec = $4; sub(/:$/, "", sec); next }
  /^[0-9a-f]+ <[^>]+>:$/ { name = $2; gsub(/[<>:]/, "", name); cur = node(obj, name); pend = 0
    if (pass == 2) {  # where each function starts and ends, for ref()
      a = hex($1); start[obj, sec, name] = a; end[obj, sec, name] = 1e18
      if (prev != "" && prevsec == sec) end[obj, sec, prev] = a
      prev = name; prevsec = sec
    } else print cur, "SELF"
    next }
  pass == 2 { next }
  /^[ \t]+[0-9a-f]+: R_X86_64_/ { pend = 0; ref($3); next }
  /^[ \t]+[0-9a-f]+:\t/ {
    if (pend) print cur, "INDIRECT"
    pend = 0
    if ($0 ~ /\t(notrack )?(call|jmp)[a-z]* +\*/) { pend = 1; next }
    if (match($0, /\t(call|jmp|j[a-z]+)[a-z]* +[0-9a-f]+ <[^>]+>/)) {
      t = substr($0, RSTART, RLENGTH); sub(/.*</, "", t); sub(/>$/, "", t); sub(/[-+]0x[0-9a-f]+$/, "", t)
      if (t != name) edge(node(obj, t)) }
    next }
' "$T/nm" "$T/dis" "$T/dis" | sort -u > "$T/edges"
[ -s "$T/edges" ] || fail "no call graph from objdump"

# The roots, and everything they reach (not through a forbidden callee:
# that call is the finding).
bare() { sed 's/^[^ :]*://; s/\..*//'; }
awk '{ print $1 }' "$T/edges" | grep -E '_sigsafe($|\.)' | sort -u > "$T/reach"
[ "$(grep -c 'handler_sigsafe' "$T/reach")" -ge 3 ] || { cat "$T/reach"; fail "fewer than three signal handlers found"; }
while :; do
  awk -v deny="$deny" 'NR == FNR { in_[$1] = 1; next }
    function bare(n) { sub(/^[^ :]*:/, "", n); sub(/\..*/, "", n); return n }
    ($1 in in_) && $2 !~ /^(EXT:|INDIRECT|UNRESOLVED:|SELF$)/ && bare($2) !~ deny { print $2 }' \
    "$T/reach" "$T/edges" | cat - "$T/reach" | sort -u > "$T/reach2"
  cmp -s "$T/reach" "$T/reach2" && break
  mv "$T/reach2" "$T/reach"
done
note "signal-context functions checked: $(tr '\n' ' ' < "$T/reach")"
awk 'NR == FNR { in_[$1] = 1; next } ($1 in in_) && $2 != "SELF"' "$T/reach" "$T/edges" > "$T/out"
note "their calls out of the objects: $(awk '$2 ~ /^(EXT:|INDIRECT)/ { sub(/^EXT:/, "", $2); print $2 }' "$T/out" | sort -u | tr '\n' ' ')"

bad=0
while read -r from to; do
  case "$to" in
    INDIRECT)
      case " $indirect_ok " in *" $from "*) ;; *) echo "FAIL: $from calls through a pointer in signal context" >&2; bad=1 ;; esac ;;
    UNRESOLVED:*) echo "FAIL: $from refers to ${to#UNRESOLVED:}, which names no function" >&2; bad=1 ;;
    *) if echo "${to#EXT:}" | bare | grep -qE "$deny"; then
         echo "FAIL: $from calls ${to#EXT:} in signal context" >&2; bad=1; fi ;;
  esac
done < "$T/out"
[ $bad -eq 0 ] || fail "a signal handler's path allocates, prints or locks"
exit 0
