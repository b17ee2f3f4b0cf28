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
. "$(dirname "$0")/callgraph_common.inc"

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

callgraph_edges $objs

# The roots, and everything they reach (not through a forbidden callee:
# that call is the finding).
bare() { sed 's/^[^ :]*://; s/\..*//'; }
awk '{ print $1 }' "$T/edges" | grep -E '_sigsafe($|\.)' | sort -u > "$T/reach"
[ "$(grep -c 'handler_sigsafe' "$T/reach")" -ge 3 ] || { cat "$T/reach"; fail "fewer than three signal handlers found"; }
callgraph_reach "$deny" ""
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
