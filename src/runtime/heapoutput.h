/* heapoutput.h — heap profile files: name patterns, the writes (opened as
 * outfile.h says: a file atomically, a device or FIFO in place), and the thread
 * that writes numbered snapshots every CPROF_HEAP_PROFILE_EVERY seconds.
 * Called with the guard set. */
#ifndef CPROF_HEAPOUTPUT_H
#define CPROF_HEAPOUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* Writes a snapshot of the heap profile to fd: debug 0 gzipped proto,
 * 1 the legacy text. 0 or -errno. */
int output_write_heap_fd(int fd, int debug);

/* The heap profile at its peak (peak.h), as output_write_heap_fd. */
int output_write_peak_fd(int fd, int debug);

/* Writes the heap profile (gzipped proto) to the expanded pattern. The
 * sequence number is taken from a process-wide counter. 0 or -errno. */
int output_write_heap(const char *pattern);

/* Starts the snapshot thread; the files follow `pattern`, which gets ".%n"
 * before a trailing ".pb.gz" (or at its end) when it has no %n; with
 * memory (CPROF_MEMORY_PROFILE's pattern, or NULL) a memory profile too,
 * with the heap snapshot's number. */
int output_start_periodic(const char *pattern, const char *memory, double seconds);
void output_stop_periodic(void);

/* In a forked child: starts the child's own snapshot thread if the parent
 * had one running. */
void output_fork_child(void);

#endif
