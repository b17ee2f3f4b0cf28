/* glibcheap.h — where glibc's malloc keeps its chunks, as far as the leak
 * scan (leaks.h) must know when every block since cprof's start is
 * sampled: which writable memory is an arena's heap (its free chunks keep
 * stale pointers, so it is no root), and which chunks of the main heap
 * were in use before cprof started (cprof never saw them, so they are).
 *
 * glibc's layout (malloc/malloc.c, malloc/arena.c): a chunk is a size word
 * (three flag bits below it) after the previous chunk's last word, its
 * user memory 16 bytes in; it is in use when the next chunk's PREV_INUSE
 * bit is set, as tcache and fastbin chunks also look. The main arena's
 * heap grows with brk from start_brk, the top chunk last; every other
 * arena's heaps start at a HEAP_MAX-aligned address with a heap_info.
 *
 * glibcheap_note_start runs once, in cprof's constructor. The others run
 * while the threads are stopped: no allocation, no lock; memory is read
 * through the caller's function, which may come back short (a range a
 * running thread unmapped). Meaningful only when rt_glibc_chunks. */
#ifndef CPROF_GLIBCHEAP_H
#define CPROF_GLIBCHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies len bytes at addr into buf; returns the bytes copied. */
typedef size_t (*glibcheap_read_t)(void *arg, uintptr_t addr, void *buf, size_t len);

/* Notes the main heap's chunks in use so far (a table in arena memory);
 * its whole extent instead should the heap not chain, other threads run
 * (cprof attach: one could shrink the heap under the walk) or the table
 * grow past 65536 chunks (the walk stops at the 65537th in use). Only
 * worth its walk when every allocation from now on is sampled (CPROF_RATE=1
 * from the start, never under attach). Returns the chunks read. */
size_t glibcheap_note_start(void);

/* The first arena heap (not the main one) that starts in [lo, hi), a
 * writable mapping: its start, and in *end the end of its writable part
 * (clipped to hi); 0 if none. */
uintptr_t glibcheap_next_arena(uintptr_t lo, uintptr_t hi, glibcheap_read_t rd, void *arg,
                               uintptr_t *end);

/* Calls fn with the user memory [lo, hi) of each chunk of the main heap
 * (the [heap] mapping [heap_lo, heap_hi)) noted at start that is still
 * there with its size and looks in use; or, if the heap did not chain at
 * start (memory not glibc's), with all of what was there then: more roots,
 * never fewer. */
void glibcheap_early_chunks(uintptr_t heap_lo, uintptr_t heap_hi, glibcheap_read_t rd, void *arg,
                            void (*fn)(void *fnarg, uintptr_t lo, uintptr_t hi), void *fnarg);

#endif
