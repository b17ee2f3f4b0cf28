#!/bin/sh
# What libcprof.so exports and imports, checked so that surprises show up
# in review: it exports only the allocation hooks, C++ operator new/delete
# (so C++ allocations stay visible when a jemalloc or tcmalloc that defines
# its own operators is preloaded after cprof), pthread_create and the pthread
# lock, condition-variable, semaphore and join waits (thread and lock
# profiles), the blocking system calls and sleeps (the trace),
# dlclose (the unwind rules of unloaded code are dropped),
# pthread_sigmask, sigprocmask and sigpending (SIGPROF kept deliverable
# for the CPU profile), sigaction and signal (the dump signal), mmap,
# munmap, mremap, brk and sbrk (the memory profile's stacks of mappings) and the
# cprof_ API; it
# depends on no C++ runtime; and it never calls pthread mutexes (its own
# locks must stay invisible to a program's or cprof's mutex interposers);
# and its objects enter the loader's lock only through rt_iterate_phdr.
# timeout: 30
. "$(dirname "$0")/../lib.sh"

exports=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort)
for s in $exports; do
  case "$s" in
    malloc|free|free_sized|free_aligned_sized|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size) ;;
    _Znw*|_Zna*|_Zdl*|_Zda*) ;;
    pthread_create) ;; # threadhook.c: thread start/exit for the profiles
    pthread_mutex_lock|pthread_mutex_timedlock|pthread_mutex_clocklock) ;; # lockhooks.c
    pthread_rwlock_rdlock|pthread_rwlock_timedrdlock|pthread_rwlock_clockrdlock) ;;
    pthread_rwlock_wrlock|pthread_rwlock_timedwrlock|pthread_rwlock_clockwrlock) ;;
    pthread_cond_wait|pthread_cond_timedwait|pthread_cond_clockwait|pthread_join) ;;
    sem_wait|sem_timedwait|sem_clockwait) ;;
    read|write|readv|writev|recv|recvfrom|recvmsg|send|sendto|sendmsg) ;; # syshooks.c: the trace
    accept|accept4|connect|poll|ppoll|select|pselect|epoll_wait|epoll_pwait) ;;
    nanosleep|clock_nanosleep|usleep) ;;
    dlclose) ;; # cfi.c: unwind rules of unloaded code must go
    pthread_sigmask|sigprocmask|sigpending) ;; # sigmask.c: SIGPROF stays deliverable
    sigaction|signal) ;; # dumpsig.c: the program's action beside the dump signal's
    mmap|mmap64|munmap|mremap|brk|sbrk) ;; # mmaphooks.c: the memory profile's mmap class
    cprof_*) ;;
    *) fail "unexpected export: $s" ;;
  esac
done
for s in malloc free calloc realloc posix_memalign cprof_stats cprof_heap_profile_write; do
  echo "$exports" | grep -qx "$s" || fail "missing export: $s"
done
imports=$(nm -D --undefined-only "$LIB" | awk '{print $2}')
echo "$imports" | grep -E '^pthread_mutex_|^pthread_spin_' && fail "libcprof.so uses pthread locks"
ldd "$LIB" | grep -E 'libstdc\+\+|libmicrohttpd|libcurl' && fail "unexpected dependency"
# The loader's lock only through rt_iterate_phdr (rt.h), which keeps a
# signal handler on the thread from entering it too: rt.o, and symtab.o
# for its copy in libcprof-http.so, which has no rt.o.
for o in "$BUILD"/pic/src/runtime/*.o; do
  nm -u "$o" | grep -qw dl_iterate_phdr || continue
  case "${o##*/}" in
    rt.o|symtab.o) ;;
    *) fail "${o##*/} calls dl_iterate_phdr, not rt_iterate_phdr" ;;
  esac
done
note "exports: $(echo $exports)"
exit 0
