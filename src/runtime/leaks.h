/* leaks.h — the sampled objects no pointer reaches any more: a
 * conservative scan of memory, as LeakSanitizer defines a leak, for the
 * leak profile (CPROF_LEAK_PROFILE, /debug/pprof/leaks, cprof_leak_*).
 *
 * Roots, as valgrind memcheck's (all readable memory but the heap): the
 * writable segments (data, bss) of every loaded object but cprof's own;
 * each known thread's stack from its stack pointer up (for threads other
 * than glibc's main one this covers their static TLS, which glibc puts at
 * the top of the stack), its registers, and the main thread's static TLS;
 * and all other anonymous writable memory but cprof's: the program's own
 * mappings, the stacks glibc caches for joined threads (with their DTVs),
 * the loader's blocks, a thread's stack not known. The scanning thread's
 * stack starts at the first frame outside cprof, with that frame's
 * callee-saved registers: cprof's own frames (the exit path, an argument
 * passed in) are no roots. Any aligned word of a root or of a reached
 * object that points into a sampled live object — at its start or
 * anywhere inside, so interior pointers (C++ base subobjects, new[]
 * cookies, pointers kept to a field) count — reaches it; reached objects
 * are scanned in turn.
 *
 * A custom heap's objects (cprof_heap.h) are sampled objects too, though
 * they lie inside memory that is itself scanned (a pool's malloc block, a
 * static buffer, a mapping): every scan skips them, so they count only
 * when reached, and a word into one reaches both it and the sampled block
 * holding it. The pool's free space is scanned as the block's content.
 *
 * The allocators' heaps: with every allocation sampled (CPROF_RATE=1 since
 * the start) they hold sampled objects and freed memory, whose stale
 * pointers are no roots: glibc's arenas (glibcheap.h) are left out but for
 * the chunks in use since before cprof started, which cprof never saw and
 * so counts as roots; the scan is then exact in LeakSanitizer's sense.
 * Another allocator's mappings are left out where they hold a sampled
 * object (its blocks made before cprof started are then no roots). At any other rate a sampled object may be reachable only through
 * unsampled ones (a list whose every other node was sampled), so the heaps
 * outside the sampled objects (unsampled blocks, freed ones) count as
 * roots too: no reachable object is reported, at the price of missing a
 * leaked sampled object that some other leaked or freed block still
 * points to.
 *
 * Anonymous memory is read only where it was ever populated
 * (/proc/self/pagemap: a huge reservation never touched costs nothing),
 * through process_vm_readv where it works, which steps past a page whose
 * reading faults (a guard region, MADV_GUARD_INSTALL); the profile's
 * comment says how many bytes were read.
 *
 * The scan stops the other threads (stopworld.h; none when there is no
 * other) only while it reads memory: everything it needs (the copy of the
 * live map, the mappings) is prepared before, and the profile is built
 * after. While it runs, no
 * sampled object is recorded or freed (the live map is held).
 *
 * Suppressions (CPROF_LEAK_SUPPRESS): LeakSanitizer's file format, lines
 * "leak:PATTERN" ('#' comments), PATTERN matched against each frame's
 * function name (mangled and demangled) and object file path, as a
 * substring, '*' any run of characters, '^' and '$' anchors. A leak any of
 * whose frames matches is left out of the profile (and counted). Only a
 * regular file is read, its first 1 MiB, once at start.
 *
 * Runs with the guard set in an ordinary thread; not reentrant (a lock). */
#ifndef CPROF_LEAKS_H
#define CPROF_LEAKS_H

#include <stdbool.h>

/* Whether every allocation so far was sampled (rate 1 from the start):
 * cleared for good by any other rate. */
void leaks_note_rate(long long rate);

/* The suppressions file, read now (at most 1 MiB of a regular file; what
 * it cannot use is said on stderr); NULL for none. Called once, at start. */
void leaks_set_suppressions(const char *path);

/* The leak profile to fd: debug 0 gzipped profile.proto in the heap
 * profile's layout (Go's four sample types; alloc and inuse both count the
 * unreachable objects), with a comment counting the reachable ones and
 * saying how the scan went; 1 Go's legacy heap text. 0 or -errno. */
int leaks_write(int fd, int debug);

/* In a fork child: a scan another thread of the parent was running holds
 * locks nobody in the child will release. */
void leaks_fork_child(void);

#endif
