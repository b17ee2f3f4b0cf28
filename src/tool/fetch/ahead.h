/* ahead.h — work done ahead of its use, in order: worker threads run
 * fn(ctx, i, slot) for i = 0, 1, ..., n-1 while the caller takes the
 * results in the same order (the driver reads and decodes the next files
 * of a series while it merges the current one).
 *
 * Bounded: at most depth jobs are running, or done and not yet taken (the
 * workers wait), so the memory they hold is bounded. Jobs start in order.
 * With one thread and no help they run one after another, each after the
 * last (a stream read in blocks); with more threads, or with help (the
 * taker runs the next jobs itself while the result it wants is not done),
 * they may run at once and must not depend on each other.
 *
 * Threads: one caller thread takes and ends; fn runs on a worker with
 * every signal blocked, or on the taker, and must touch only ctx's
 * read-only data, its slot, and what ctx guards with a lock of its own
 * (the driver's spare profiles). No lock of ahead's is held while fn
 * runs. Without a thread (threads 0, or pthread_create failed)
 * ahead_take runs fn itself: the results are the same. */
#ifndef CPROF_TOOL_AHEAD_H
#define CPROF_TOOL_AHEAD_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*ahead_fn)(void *ctx, size_t i, void *slot);
typedef struct ahead ahead_t;

/* A queue of n jobs whose results are slot_size bytes each, run by up to
 * threads workers, and by the taker when help. 0 or -ENOMEM. */
int ahead_start(ahead_t **a, size_t n, size_t slot_size, size_t depth, size_t threads, bool help,
                ahead_fn fn, void *ctx);

/* Copies the next result into slot, waiting for it (with help, running
 * the next jobs meanwhile). -ENOENT after n. */
int ahead_take(ahead_t *a, void *slot);

/* Stops the workers after their current jobs, gives each result done and
 * not taken to drop (on the caller's thread), joins and frees. a may be
 * NULL. */
void ahead_end(ahead_t *a, void (*drop)(void *slot));

#endif
