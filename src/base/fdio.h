/* fdio.h — writing a buffer to a descriptor without waiting forever (base).
 *
 * A descriptor opened non-blocking (outfile.h opens FIFOs and devices so)
 * that cannot take more — the reader of the pipe stopped reading — is
 * waited for with poll up to a deadline, then given up with -ETIMEDOUT: a
 * program's exit must never hang on its profiles. A blocking descriptor
 * behaves as write(2). No allocation, no stdio, no lock; EINTR is retried. */
#ifndef CPROF_BASE_FDIO_H
#define CPROF_BASE_FDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FDIO_STALL_MS 5000 /* a reader that takes nothing for this long is given up */

/* CLOCK_MONOTONIC, in milliseconds: the clock of the deadlines. */
int64_t fdio_now_ms(void);

/* One write of what fd takes of p[0..n), n > 0, waiting for room until
 * deadline_ms: the bytes written (> 0), or -errno (-ETIMEDOUT: no room by
 * the deadline). */
ssize_t fdio_write_some(int fd, const void *p, size_t n, int64_t deadline_ms);

/* All of p[0..n): 0, or -errno; -ETIMEDOUT when fd took nothing for
 * stall_ms. */
int fdio_write_all(int fd, const void *p, size_t n, int stall_ms);

#endif
