/* profwriter.h — what the runtime's profiles other than the heap's share
 * when they are written (threads, threadcreate, mutex, block): a
 * profile.proto builder whose samples are stacks of return addresses, and
 * the pieces of Go's legacy text forms (frame lines aligned as Go's
 * tabwriter aligns them, a memory map pprof reads).
 *
 * Locations: one per distinct return address, at address - 1 (inside the
 * call, so symbolizers name the calling line), each named (when written)
 * with its function from the loaded objects' symbol tables, without file
 * or line; mappings: the executable ones of /proc/self/maps, main program
 * first, their has_* flags unset so that the tools still symbolize them
 * from the binaries. Frame names in the text forms come from the same
 * tables (symtab_take: static functions too), else dladdr.
 *
 * Runs with the guard set, in ordinary threads (it allocates, reads /proc
 * and ELF files); one builder per thread at a time. */
#ifndef CPROF_PROFWRITER_H
#define CPROF_PROFWRITER_H

#include "profile/profile.h"

#include <stdint.h>
#include <stdio.h>

typedef struct profwriter profwriter_t;

/* A builder with the process's mappings and the current time; NULL on
 * failure (errno set). Set sample types, period and the rest on
 * profwriter_profile(). */
profwriter_t *profwriter_new(void);
profile_t *profwriter_profile(profwriter_t *b);

/* Adds a sample: pcs are return addresses, leaf first. labels may be NULL.
 * 0 or -ENOMEM. */
int profwriter_add(profwriter_t *b, const uintptr_t *pcs, uint32_t depth, const int64_t *values,
                  const profile_label_t *labels, size_t nlabels);

/* Gzipped profile.proto to fd; 0 or a negative errno. */
int profwriter_write(profwriter_t *b, int fd);
void profwriter_free(profwriter_t *b);

/* --- text forms --------------------------------------------------------- */

typedef struct stacknames stacknames_t;

/* Function names of the objects loaded now; never NULL (without tables,
 * frames are named through dladdr or not at all). */
stacknames_t *stacknames_new(void);
void stacknames_free(stacknames_t *n);

/* Names the call site pc (an exact instruction address): fn gets
 * "function+0xoffset" (or "" when unknown), where gets "object+0xaddress"
 * with the address as in the object's ELF file (for addr2line -e object). */
void stacknames_frame(stacknames_t *n, uintptr_t pc, char *fn, size_t fnlen, char *where,
                      size_t wherelen);

/* Go's printStackRecord: a "#\t0xPC\tfunction+0xoff\tobject+0xaddr" line per
 * frame (PC = return address - 1), aligned as Go's tabwriter does, then an
 * empty line. */
void profwriter_frame_lines(FILE *f, stacknames_t *n, const uintptr_t *pcs, uint32_t depth);

/* "\n--- Memory map: ---\n" and the executable lines of /proc/self/maps, so
 * that pprof finds the binaries of a text profile by itself. */
void profwriter_memory_map(FILE *f);

/* Writes a profile to the file named by pattern (config.h's patterns: %p
 * pid, %e program, %t time, %n sequence, %%), through a temporary name and
 * rename, so a reader never sees half a file. 0 or a negative errno. */
int profwriter_write_file(const char *pattern, int (*write)(int fd, int debug));

/* The same with the sequence number given (%n), taken from the counter
 * profwriter_write_file uses: files written together share one. */
uint64_t profwriter_take_seq(void);
int profwriter_write_file_seq(const char *pattern, uint64_t seq, int (*write)(int fd, int debug));

#endif
