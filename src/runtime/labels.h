/* labels.h — profiler labels (cprof_labels_push/pop, cprof.h): each
 * thread's current set of key=value pairs, as Go's pprof.Do sets a
 * goroutine's labels, and the table the sets are interned in, so that a
 * sample records a small id and the writers turn it into pprof string
 * labels.
 *
 * A push makes (or finds) the node (parent, key, value): the thread's
 * labels before the push and the pair pushed; the node holds the whole
 * resulting set, sorted by key, a later push of a key replacing its value
 * (Go's WithLabels). A pop returns to the parent. Nodes with the same
 * pairs share one set id (the first such node's), which samples record: a
 * set reached through two orders of pushes is one set in the profiles.
 * Node 0 stands for "no labels".
 *
 * Memory: nodes live in the arena and are never freed; at most
 * LABELS_MAX_NODES nodes, LABELS_MAX_PAIRS pairs a set, keys and values
 * cut at LABELS_MAX_LEN bytes. A push past a bound (or of NULL) leaves
 * the labels as they were (one warning the first time for a bound) and
 * still counts, so that the pop that goes with it undoes it
 * (rt_self.label_ghosts).
 *
 * Threads and signals: push and pop change only the calling thread's
 * rt_self.labels (one pointer store) and insert under one rt_lock (no
 * call out while held, never from a signal handler). Readers of the
 * current set (labels_now) are async-signal-safe: one TLS load, and a
 * read of a node that is complete before it is published. labels_get
 * reads the append-only table without a lock, from any thread.
 *
 * Who records the set: heap.c (in the bucket key), cpuring.c (the SIGPROF
 * slot), lockprof.c (the waiter's), threaddump.c (each thread's answer),
 * trace.c (a user log after a region begin). */
#ifndef CPROF_LABELS_H
#define CPROF_LABELS_H

#include "profile/profile.h"
#include "rt.h"

#include <stddef.h>
#include <stdint.h>

#define LABELS_MAX_NODES (1u << 16)
#define LABELS_MAX_PAIRS 32
#define LABELS_MAX_LEN 1024

typedef struct {
    const char *key, *value;
} labels_pair_t;

typedef struct labelset {
    uint32_t id;                 /* this node's index in the table, >= 1 */
    uint32_t set;                /* the first node with these pairs: what
                                  * samples record */
    uint32_t n;                  /* pairs */
    const struct labelset *parent; /* the labels before the push, or NULL */
    uint64_t hash;               /* of (parent, key, value) */
    uint64_t set_hash;           /* of the pairs */
    struct labelset *chain;      /* next in the (parent, key, value) chain */
    struct labelset *set_chain;  /* next set in the pairs' chain (lock held) */
    const char *key, *value;     /* the pair pushed */
    labels_pair_t pairs[];       /* sorted by key, keys distinct */
} labelset_t;

/* The calling thread's label set id, 0 when none: one TLS load when no
 * label is set. Async-signal-safe. */
static inline uint32_t labels_now(void)
{
    const labelset_t *l = __atomic_load_n(&rt_self.labels, __ATOMIC_RELAXED);
    return l ? l->set : 0;
}

/* The set id of the calling thread's labels with (key, value) added, 0
 * when no set can be made (a bound, see above). Lock-free when the set
 * exists; never from a signal handler. */
uint32_t labels_with(const char *key, const char *value);

/* The node of id (a set id recorded by a sample), NULL for 0 or an id
 * never made. Any thread, no lock. */
const labelset_t *labels_get(uint32_t id);

/* Appends set id's pairs as string labels to out (room for max), keys and
 * values interned in p; returns how many, or -ENOMEM. */
int labels_to_profile(profile_t *p, uint32_t id, profile_label_t *out, size_t max);

/* Writes set id's pairs as "key=value key=value" into buf (cut to len,
 * NUL-terminated); returns the length written, 0 for no labels. */
size_t labels_format(uint32_t id, char *buf, size_t len);

/* Nodes made so far (for tests and stats). */
uint32_t labels_count(void);

/* fork: hold / release the insert lock around fork(). */
void labels_fork_prepare(void);
void labels_fork_release(void);

#endif
