/* glibcheap.h — where glibc's malloc keeps its chunks, as far as the leak
 * scan (leaks.h) and the memory profile's free bytes (memprof.h) must know when every block since cprof's start is
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

/* The bytes of that heap (at a) its arena counts as its own (heap_info's
 * size: its writable part less what was given back); 0 if unreadable. */
uintptr_t glibcheap_heap_size(uintptr_t a, glibcheap_read_t rd, void *arg);

/* The free bytes of glibc's arenas without mallinfo2, whose walk of every
 * free chunk took a third of xmllint's run when its memory profile was
 * written at exit. What the arenas hold (the main one: the break less
 * where it began and less what the program moved it by itself,
 * program_brk; the others: heaps_size, their heaps' sizes) less the
 * chunks in use: those in use at the note, plus the exact counters' change
 * since (a chunk is its usable size and one word), less the mmapped
 * chunks, which the counters count too (mmapped: their bytes, those now
 * found). tcache chunks count as free here (mallinfo2: in use).
 *
 * glibcheap_note_counts runs once, in cprof's constructor, while one
 * thread runs and the hooks are the program's. glibcheap_free_bytes is
 * false when the counts cannot tell: never noted (cprof attach, another
 * allocator), or the counters paused once (attach.h). */
void glibcheap_note_counts(void);
bool glibcheap_free_bytes(uint64_t heaps_size, uint64_t mmapped, int64_t program_brk,
                          uint64_t *free_bytes);

/* Calls fn with the user memory [lo, hi) of each chunk of the main heap
 * (the [heap] mapping [heap_lo, heap_hi)) noted at start that is still
 * there with its size and looks in use; or, if the heap did not chain at
 * start (memory not glibc's), with all of what was there then: more roots,
 * never fewer. */
void glibcheap_early_chunks(uintptr_t heap_lo, uintptr_t heap_hi, glibcheap_read_t rd, void *arg,
                            void (*fn)(void *fnarg, uintptr_t lo, uintptr_t hi), void *fnarg);

#endif
