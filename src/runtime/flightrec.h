/* flightrec.h — the heap's flight recorder (CPROF_RECORD=DURATION): a ring
 * of the heap's sampled allocation and free events (time, thread, address,
 * stack bucket, size; the weight is the bucket's rate), from which a window
 * of the recent past is answered: what was allocated in it and is live at
 * its end, the high of that inside it, what was freed in it (see
 * docs/triggers.md, "Flight recorder").
 *
 * Owns: the ring, mapped once from the arena (under CPROF_MEMORY_LIMIT:
 * FLIGHTREC_EVENT bytes an event, at most FLIGHTREC_MAX_EVENTS). When it
 * is full the oldest events are overwritten, and a window reaching before
 * the oldest kept event says so in its profile's comment.
 *
 * Threads and signals: recording is on the sampled path only (heap.c),
 * lock-free and async-signal-safe: one fetch-add reserves a slot, whose
 * sequence word publishes it (a seqlock per slot). A slot is reserved
 * before the live map changes and written after, so that a free of an
 * address always lands after its allocation in ring order. Readers (the
 * writers below, guard set, ordinary threads) copy the ring first and skip
 * a slot being written or overwritten while read. */
#ifndef CPROF_FLIGHTREC_H
#define CPROF_FLIGHTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLIGHTREC_MAX_EVENTS (1u << 22)

/* One event: 40 bytes. seq is 2*slot+2 once written (odd while it is). */
typedef struct {
    uint64_t seq;
    int64_t t_ns;    /* CLOCK_MONOTONIC at the reservation */
    uint64_t addr;   /* the live map's key */
    uint64_t size;   /* bytes asked for */
    uint32_t bucket; /* buckets.h index: stack, size, rate, labels */
    uint16_t kind;   /* FLIGHTREC_* */
    uint16_t tid;    /* the thread id's low 16 bits (lifetimes.h) */
} flightrec_event_t;

/* Maps the ring for duration_ns of history: an eighth of the memory limit
 * at most. 0 or a negative errno (then nothing is recorded). */
int flightrec_init(int64_t duration_ns);

/* Nonzero while recording: the sampled path's one test. */
extern int flightrec_on __attribute__((visibility("hidden")));

/* A slot reserved now (its time taken), written by flightrec_put. */
uint64_t flightrec_reserve(void);
/* kind: FLIGHTREC_ALLOC, FLIGHTREC_FREE, or FLIGHTREC_NONE (an insert that
 * failed: the slot is published empty). */
enum { FLIGHTREC_NONE, FLIGHTREC_ALLOC, FLIGHTREC_FREE };
void flightrec_put(uint64_t slot, int kind, uintptr_t addr, uint32_t bucket, uint64_t size);

/* The window profile (gzipped profile.proto, sample types alloc_objects,
 * alloc_space, inuse_objects, inuse_space (default), peak_objects,
 * peak_space, freed_objects, freed_space) of [start_ns, end_ns], times of
 * CLOCK_MONOTONIC. 0, -ENODATA when not recording, or a negative errno. */
int flightrec_write_window(int fd, int64_t start_ns, int64_t end_ns);

/* The whole recorded duration up to now (profiles.c's "window" row);
 * debug 1: Go's legacy heap text of it (alloc and inuse only). When not
 * recording, an empty profile that says so in its comment. */
int flightrec_write_fd(int fd, int debug);

/* A window spec, "START,END" or "LAST" (http: /debug/pprof/heap?window=):
 * each time a Go duration before now ("90s") or unix seconds
 * ("1764190000.5"); LAST alone is [now - LAST, now]. 0, -EINVAL (bad
 * spec), -ENODATA (not recording), or a negative errno. */
int flightrec_write_spec(int fd, const char *spec);

/* The published events still in the ring, in ring order, in a new array
 * (malloc: guard set); *lost: events overwritten or torn before the copy.
 * NULL when out of memory. */
flightrec_event_t *flightrec_copy(size_t *n, uint64_t *lost);

/* In a fork child: its thread's id is new. */
void flightrec_fork_child(void);

/* Bytes of the ring, and events recorded since the start. */
uint64_t flightrec_bytes(void);
uint64_t flightrec_events(void);

#endif
