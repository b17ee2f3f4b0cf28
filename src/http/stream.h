/* stream.h — a recording session's output streamed to an HTTP client as it
 * records (Go's Trace handler writes trace.Start(w) into the response):
 * the session writes into a pipe, the server thread reads the pipe into
 * the response, so nothing of the recording is staged in the process and
 * the memory it holds does not grow with the session's length.
 *
 * The session's end (its stop writes the last batches and the footer into
 * the pipe) runs on a thread of its own, so that the server thread keeps
 * reading meanwhile; its writes are bounded (fdio.h: a reader that takes
 * nothing for 5 s is given up, the runtime says so on stderr), so a client
 * that stops reading cannot hold the program's exit.
 *
 * Threads: every function from the server thread (guard set); the stopping
 * thread inherits the guard and blocks every signal. */
#ifndef CPROF_HTTP_STREAM_H
#define CPROF_HTTP_STREAM_H

#include "runtime/profiles.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct stream stream_t;

/* Starts k's session writing into a new pipe: the stream, or NULL with
 * *err the session's start error (-EBUSY while another runs) or -errno. */
stream_t *stream_open(const profile_kind_t *k, int *err);

/* The pipe's end to poll for POLLIN while stream_read says -EAGAIN. */
int stream_fd(const stream_t *s);

/* Up to n bytes of what the session wrote: > 0, 0 once it ended and all
 * was read, -EAGAIN when nothing is there yet, or -errno. */
ssize_t stream_read(stream_t *s, void *buf, size_t n);

/* The session's duration is over: its stop begins (on its own thread; on
 * the server's if none can be made). Once only; later calls do nothing. */
void stream_end(stream_t *s);

/* Whether stream_end was called. */
bool stream_ending(const stream_t *s);

/* The client is gone or the answer done: the session is discarded if it
 * still runs (its writes fail at once: nobody reads), then freed. */
void stream_free(stream_t *s);

#endif
